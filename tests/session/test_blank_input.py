"""A line, a command or hook output without words sends nothing the API would refuse; the
session goes on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_env import use_fake_api
from tests.request_rules import refusals
from tui.commands.slash import BLANK_PROMPT, is_blank
from tui.fake_api import FakeApi, text_reply
from tui.session.driver import SessionDriver
from tui.session.options import RunOptions


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


def settings(repo: Path, data: dict) -> None:
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def hook(command: str) -> list[dict]:
    return [{"hooks": [{"type": "command", "command": command}]}]


@pytest.mark.parametrize("line", ["", " ", "\n\n", "\t \r\n", "\u3000"])
def test_a_line_without_words_is_blank(line: str) -> None:
    assert is_blank(line)


async def test_a_blank_line_is_refused_before_any_hook_and_the_session_goes_on(
    api: FakeApi, repo: Path
) -> None:
    marker = repo / "hook-ran"
    settings(repo, {"hooks": {"UserPromptSubmit": hook(f"touch {marker}")}})
    api.add(text_reply("Hello."))
    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), lambda _e: None)
    try:
        await driver.start()
        blank = await driver.run("  \n ")
        assert blank.is_error and blank.text == BLANK_PROMPT
        assert blank.failure is not None and blank.failure.kind == "input"
        assert not marker.exists() and api.requests == [] and list(driver.messages) == []
        assert (await driver.run("hello")).text == "Hello."
    finally:
        await driver.aclose()
    assert marker.exists()
    assert refusals(api.requests[0].body) == []


async def test_hook_context_without_words_adds_no_block(api: FakeApi, repo: Path) -> None:
    answer = repo / "answer.json"
    answer.write_text(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                         "additionalContext": " \n "}}))  # fmt: skip
    settings(
        repo,
        {"hooks": {
            "UserPromptSubmit": hook("printf '  \\n\\t\\n'") + hook(f"cat {answer}"),
            "SessionStart": hook("printf '   '"),
        }},
    )  # fmt: skip
    api.add(text_reply("Hi."))
    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), lambda _e: None)
    try:
        await driver.start()
        await driver.run("hello")
    finally:
        await driver.aclose()
    (request,) = api.requests
    assert refusals(request.body) == []
    assert "hook output" not in json.dumps(request.messages)


def command(repo: Path, name: str, text: str) -> Path:
    path = repo / ".claude" / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text", ["", "---\ndescription: x\n---\n \n\t\n", "$ARGUMENTS"],
    ids=["empty", "whitespace", "blank-arguments"],
)  # fmt: skip
async def test_a_command_whose_text_is_blank_is_refused(
    api: FakeApi, repo: Path, text: str
) -> None:
    path = command(repo, "nil", text)
    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), lambda _e: None)
    try:
        await driver.start()
        result = await driver.run("/nil")
        assert result.is_error and result.command == "nil"
        assert result.text == (
            f"/nil: nothing to send: the command's text is empty or only whitespace ({path})."
        )
        assert api.requests == [] and list(driver.messages) == []
        api.add(text_reply("still here"))
        assert (await driver.run("hello")).text == "still here"
    finally:
        await driver.aclose()


async def test_a_command_sends_no_blank_block(api: FakeApi, repo: Path) -> None:
    command(repo, "greet", "Say hello to $ARGUMENTS.\n\n")
    api.add(text_reply("Hello, Ann."))
    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), lambda _e: None)
    try:
        await driver.start()
        assert (await driver.run("/greet Ann")).text == "Hello, Ann."
    finally:
        await driver.aclose()
    assert refusals(api.requests[0].body) == []
