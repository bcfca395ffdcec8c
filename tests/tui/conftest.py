"""Fixtures for the TUI tests: the app in-process (Pilot) against the fake Messages API.

Assertions about text read the rendered screen (tests/tui/screen.py), not widget strings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_env import use_fake_api
from tests.tui.screen import screen_text
from tui.fake_api import FakeApi
from tui.fullscreen.app import CcxApp
from tui.session.options import RunOptions


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch, models_api=True)
        yield server


def make_app(repo: Path, prompt: str | None = None, **options: Any) -> CcxApp:
    return CcxApp(RunOptions(cwd=repo, watch_files=False, **options), prompt)


async def wait_for(pilot: Any, condition: Callable[[], Any], timeout: float = 15.0) -> Any:
    """Let the app run until ``condition()`` is truthy; fail with what the screen shows on timeout.

    The screen may lag a state the condition reads: wait on the screen's text to read it next.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting; screen:\n{screen_text(pilot.app)}")
        await pilot.pause(0.02)


async def wait_idle(pilot: Any, timeout: float = 15.0) -> None:
    """Until the runtime is ready and no job runs or waits."""
    app = pilot.app
    await wait_for(pilot, lambda: app.ready and app.running is None and not app.queue, timeout)
    await pilot.pause()  # let the screen catch up


async def submit(pilot: Any, text: str) -> None:
    from tui.fullscreen.widgets.prompt_box import PromptInput

    prompt = pilot.app.query_one(PromptInput)
    prompt.text = text
    prompt.move_cursor(prompt.document.end)
    await pilot.press("enter")


def whole_transcript_shown(app: CcxApp) -> None:
    """Fail unless the transcript fits the screen, so text missing from the screen is absent."""
    from tui.fullscreen.widgets.transcript import Transcript

    transcript = app.query_one(Transcript)
    assert transcript.max_scroll_y == 0, f"the transcript scrolls; screen:\n{screen_text(app)}"


def write_session(repo: Path, rounds: int, model: str = "claude-sonnet-4-5") -> str:
    """A stored session of ``rounds`` x (prompt, tool call, tool result, answer); returns its id."""
    from agent.core.messages import Message, tool_result_block, user_text
    from agent.sessions.session import Session

    session = Session.create(repo, model)
    for index in range(rounds):
        session.append_message(user_text(f"question {index}"))
        use = {
            "type": "tool_use",
            "id": f"toolu_{index:06d}",
            "name": "Read",
            "input": {"file_path": "src/app.py"},
        }
        session.append_message(
            Message(
                "assistant",
                [{"type": "text", "text": f"Reading for {index}."}, use],
                kind="response",
                api_id=f"msg_a{index}",
            )
        )
        session.append_message(
            Message(
                "user", [tool_result_block(use["id"], "1\tRETRY_LIMIT = 3")], kind="tool_result"
            )
        )
        session.append_message(
            Message(
                "assistant",
                [{"type": "text", "text": f"Answer **{index}**."}],
                kind="response",
                api_id=f"msg_b{index}",
            )
        )
    session.close()
    return session.id
