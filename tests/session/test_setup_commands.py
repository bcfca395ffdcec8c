"""The commands a Claude Code user types to see or adjust the session (/agents, /hooks,
/memory, /permissions, /add-dir, /export, /doctor, /bashes), and the ones the model
carries out (/init, /review, /security-review, /statusline)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.fake_env import use_fake_api
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.session.driver import SessionDriver
from tui.session.options import RunOptions


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


@pytest.fixture
async def driver(api: FakeApi, repo: Path) -> AsyncIterator[SessionDriver]:
    (repo / "CLAUDE.md").write_text("Run tests with `make check`.\n")
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "linter.md").write_text(
        "---\nname: linter\ndescription: Runs the linters and fixes what they find.\n"
        "tools: Read, Bash\n---\nYou lint.\n"
    )
    hooks = {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}]}
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    session = SessionDriver(RunOptions(cwd=repo, watch_files=False), lambda _e: None)
    await session.start()
    try:
        yield session
    finally:
        await session.aclose()


async def test_agents_hooks_memory_doctor_list_what_is_loaded(driver: SessionDriver) -> None:
    agents = await driver.run("/agents")
    assert not agents.is_error
    assert "general-purpose" in agents.text and "linter" in agents.text
    assert "  linter: Runs the linters" in agents.text
    assert "    .claude/agents/linter.md · Read, Bash · model inherit" in agents.text
    hooks = await driver.run("/hooks")
    assert "PostToolUse [Edit]: fmt" in hooks.text
    memory = await driver.run("/memory")
    assert "CLAUDE.md" in memory.text and "project" in memory.text
    doctor = await driver.run("/doctor")
    assert not doctor.is_error and "install" in doctor.text and "sandbox" in doctor.text
    for result in (agents, hooks, memory):
        assert all(len(line) <= 80 for line in result.text.splitlines()), result.text


async def test_permissions_add_show_and_remove(driver: SessionDriver, repo: Path) -> None:
    local = repo / ".claude" / "settings.local.json"
    added = await driver.run("/permissions allow Bash(npm test)")
    assert not added.is_error, added.text
    assert json.loads(local.read_text())["permissions"]["allow"] == ["Bash(npm test)"]
    denied = await driver.run("/permissions deny Read(secrets/**)")
    assert not denied.is_error
    shown = await driver.run("/permissions")
    assert "Bash(npm test)" in shown.text and "Read(secrets/**)" in shown.text
    assert shown.data["permissions"]["deny"] == ["Read(secrets/**)"]
    # the rule holds in this session at once
    decision = driver.runtime.gate.check("Read", {"file_path": str(repo / "secrets/k")}, False)
    assert decision.behavior == "deny"
    removed = await driver.run("/permissions remove Read(secrets/**)")
    assert not removed.is_error
    assert json.loads(local.read_text())["permissions"]["deny"] == []
    assert "Read(secrets/**)" not in (await driver.run("/permissions")).text
    missing = await driver.run("/permissions remove Bash(rm *)")
    assert missing.is_error
    bad = await driver.run("/permissions allow Bash(unclosed")
    assert bad.is_error and not bad.text.startswith("Added")
    usage = await driver.run("/permissions grant Read")
    assert usage.is_error and "Usage" in usage.text


async def test_add_dir_lets_the_model_read_there(
    driver: SessionDriver, api: FakeApi, tmp_path: Path
) -> None:
    other = tmp_path / "shared-lib"
    other.mkdir()
    (other / "util.py").write_text("SHARED = 1\n")
    outside = driver.runtime.gate.check("Read", {"file_path": str(other / "util.py")}, False)
    assert outside.behavior != "allow"
    missing = await driver.run(f"/add-dir {tmp_path / 'nope'}")
    assert missing.is_error
    added = await driver.run(f"/add-dir {other}")
    assert not added.is_error and str(other) in added.text
    inside = driver.runtime.gate.check("Read", {"file_path": str(other / "util.py")}, False)
    assert inside.behavior == "allow"
    again = await driver.run(f"/add-dir {other}")
    assert "already" in again.text


async def test_export_writes_the_conversation(
    driver: SessionDriver, api: FakeApi, repo: Path
) -> None:
    api.add(tool_reply(("Read", {"file_path": "src/app.py"})), text_reply("The limit is 3."))
    await driver.run("what is the retry limit?")
    saved = await driver.run("/export talk.txt")
    assert not saved.is_error, saved.text
    text = (repo / "talk.txt").read_text()
    assert "> what is the retry limit?" in text
    assert "⏺ Read src/app.py" in text and "The limit is 3." in text
    assert "<system-reminder>" not in text
    copied = await driver.run("/export")
    assert copied.data["copy"] == text.replace(text.splitlines()[0], copied.text.splitlines()[0])
    bad = await driver.run(f"/export {repo / 'no-such-dir' / 'x' / 'y.txt'}")
    assert not bad.is_error or "Could not write" in bad.text


async def test_bashes_is_the_jobs_list(driver: SessionDriver) -> None:
    bashes = await driver.run("/bashes")
    tasks = await driver.run("/tasks")
    assert bashes.text == tasks.text and "jobs" in bashes.data


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("/init", "write (or improve) the file CLAUDE.md"),
        ("/review 42", "gh pr view 42"),
        ("/review", "gh pr list"),
        ("/security-review", "git diff <merge-base>"),
        ("/statusline show the git branch", "What the user wants it to show: show the git branch"),
    ],
)
async def test_model_commands_send_the_line_and_instructions(
    driver: SessionDriver, api: FakeApi, line: str, words: str
) -> None:
    api.add(text_reply("Done."))
    result = await driver.run(line)
    assert not result.is_error and result.text == "Done."
    sent = api.requests[-1].last_user_text()
    assert line in sent and words in sent


async def test_init_with_an_existing_file_improves_it(
    driver: SessionDriver, api: FakeApi, repo: Path
) -> None:
    api.add(
        tool_reply(("Read", {"file_path": "CLAUDE.md"})),
        tool_reply(("Write", {"file_path": "CLAUDE.md", "content": "# CLAUDE.md\nmake check\n"})),
        text_reply("Updated CLAUDE.md."),
    )
    driver.runtime.set_permission_mode("acceptEdits")
    result = await driver.run("/init")
    assert result.text == "Updated CLAUDE.md."
    assert "A CLAUDE.md exists already" in api.requests[0].last_user_text()
    assert (repo / "CLAUDE.md").read_text().startswith("# CLAUDE.md")


async def test_review_refuses_a_bad_argument(driver: SessionDriver, api: FakeApi) -> None:
    result = await driver.run("/review main")
    assert result.is_error and "Usage" in result.text and api.requests == []
