"""Custom commands through the session driver: trust, per-turn grants and model, /help."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_env import use_fake_api
from tui.fake_api import FakeApi, text_reply
from tui.session.driver import SessionDriver
from tui.session.options import RunOptions


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


def command(root: Path, name: str, text: str) -> None:
    path = root / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


GRANTING = (
    "---\nallowed-tools: Bash(touch:*)\nmodel: haiku\n---\nMade: !`touch made.txt && echo yes`\n"
)


@pytest.mark.parametrize("mode", [None, "acceptEdits", "bypassPermissions"])
@pytest.mark.parametrize(
    "text",
    [GRANTING, "Made: !`touch made.txt && echo yes`\n", "---\nallowed-tools: Bash\n---\nMake it\n"],
    ids=["snippet-and-grant", "snippet", "grant"],
)
async def test_an_untrusted_project_command_that_acts_is_refused_whole(
    api: FakeApi, repo: Path, mode: str | None, text: str
) -> None:
    command(repo / ".claude" / "commands", "mk", text)
    options = RunOptions(cwd=repo, watch_files=False, project_trusted=False, permission_mode=mode)
    driver = SessionDriver(options, lambda _e: None)
    try:
        await driver.start()
        allow_before = list(driver.runtime.gate.allow)
        result = await driver.run("/mk")
        assert driver.runtime.gate.allow == allow_before
    finally:
        await driver.aclose()
    assert result.is_error and result.command == "mk"
    assert "this folder is not trusted" in result.text and "answer y" in result.text
    assert not (repo / "made.txt").exists() and api.requests == []


async def test_an_untrusted_project_prompt_template_still_expands(api: FakeApi, repo: Path) -> None:
    command(repo / ".claude" / "commands", "explain", "Explain $ARGUMENTS simply.\n")
    api.add(text_reply("Explained."))
    driver = SessionDriver(
        RunOptions(cwd=repo, watch_files=False, project_trusted=False), lambda _e: None
    )
    try:
        await driver.start()
        result = await driver.run("/explain src/app.py")
    finally:
        await driver.aclose()
    assert not result.is_error, result.text
    assert "Explain src/app.py simply." in api.requests[0].last_user_text()


async def test_a_user_command_grants_for_its_turn_then_the_gate_is_as_before(
    api: FakeApi, repo: Path, tmp_path: Path
) -> None:
    command(tmp_path / "home" / ".claude" / "commands", "mk", GRANTING)
    api.add(text_reply("ok"), text_reply("plain"))
    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), lambda _e: None)
    try:
        await driver.start()
        allow_before = list(driver.runtime.gate.allow)
        model_before = driver.model
        result = await driver.run("/mk")
        assert not result.is_error, result.text
        assert driver.runtime.gate.allow == allow_before and driver.model == model_before
        await driver.run("and now?")
    finally:
        await driver.aclose()
    assert (repo / "made.txt").exists()
    first, second = api.requests
    assert first.model is not None and "haiku" in first.model
    assert second.model == model_before
    assert "Made: yes" in first.last_user_text()


async def test_help_lists_custom_commands_and_says_which_a_built_in_hides(
    api: FakeApi, repo: Path
) -> None:
    commands = repo / ".claude" / "commands"
    command(commands, "fix", "---\ndescription: Fix it\nargument-hint: [issue]\n---\nFix $0")
    command(commands, "clear", "never runs")
    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), lambda _e: None)
    try:
        rows = dict((await driver.run("/help")).data["help"])
        names = [name for name, _help in driver.commands()]
    finally:
        await driver.aclose()
    assert rows["/fix [issue]"] == "Fix it (project)"
    assert "a built-in command of that name wins" in rows["(/clear)"]
    assert names.count("clear") == 1 and "fix" in names and "output-style" in names
