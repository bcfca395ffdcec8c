"""Resumed sessions: -r / /resume reload the transcript view; long ones page in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import OptionList

import agent.sessions.session as session_module
from agent.core.messages import Message
from tests.tui.conftest import (
    make_app,
    submit,
    wait_for,
    wait_idle,
    whole_transcript_shown,
    write_session,
)
from tests.tui.screen import screen_text, widget_text
from tui.fake_api import FakeApi, text_reply
from tui.fullscreen.app import CcxApp
from tui.fullscreen.history import history_entries
from tui.fullscreen.screens.resume import ResumeScreen
from tui.fullscreen.widgets.tool_block import ToolBlock
from tui.fullscreen.widgets.transcript import PAGE, Transcript, UserPrompt


async def test_resume_option_loads_the_history(api: FakeApi, repo: Path) -> None:
    session_id = write_session(repo, 3)
    api.add(text_reply("continuing"))
    app = make_app(repo, resume=session_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: f"Resumed session {session_id}" in screen_text(app))
        text = screen_text(app)
        assert "> question 0" in text and "Answer 2." in text  # Markdown, rendered
        blocks = list(app.query(ToolBlock))
        assert len(blocks) == 3 and not any(b.expanded for b in blocks)
        await submit(pilot, "go on")
        await wait_idle(pilot)
        assert "continuing" in screen_text(app)
    assert "question 2" in api.requests[-1].all_text()
    assert api.errors == []


async def test_the_history_is_drawn_before_the_runtime_and_read_once(
    api: FakeApi, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = write_session(repo, 3)
    reads: list[Path] = []
    real_load = session_module.load_session

    def counting_load(path: Any) -> Any:
        reads.append(Path(path))
        return real_load(path)

    monkeypatch.setattr(session_module, "load_session", counting_load)
    order: list[str] = []
    for name, label in (("on_history_loaded", "history"), ("on_runtime_ready", "runtime")):
        monkeypatch.setattr(CcxApp, name, _recording(getattr(CcxApp, name), order, label))
    app = make_app(repo, resume=session_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: f"Resumed session {session_id}" in screen_text(app))
        prompts = [w.prompt for w in app.query(UserPrompt)]
    assert order == ["history", "runtime"]
    assert prompts == ["question 0", "question 1", "question 2"]  # drawn once, not twice
    assert len(reads) == 1  # the runtime took over what the UI side had read


def _recording(handler: Any, order: list[str], name: str) -> Any:
    async def wrapper(self: CcxApp, message: Any) -> None:
        order.append(name)
        await handler(self, message)

    return wrapper


async def test_resume_picker_switches_session(api: FakeApi, repo: Path) -> None:
    old = write_session(repo, 2)
    api.add(text_reply("fresh reply"))
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "fresh")
        await wait_idle(pilot)
        await submit(pilot, "/resume")
        screen = await wait_for(
            pilot, lambda: app.screen if isinstance(app.screen, ResumeScreen) else None
        )
        assert [s.id for s in screen.sessions] == [old]
        options = screen.query_one(OptionList)
        await wait_for(pilot, lambda: "question 0" in widget_text(app, options))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session_id == old and app.query(ToolBlock))
        await wait_for(pilot, lambda: "> question 1" in screen_text(app))
        whole_transcript_shown(app)
        assert "fresh reply" not in screen_text(app)
        assert app.bridge.driver is not None and app.bridge.driver.session_id == old


async def test_resume_picker_escape_keeps_the_session(api: FakeApi, repo: Path) -> None:
    write_session(repo, 1)
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        current = app.session_id
        await submit(pilot, "/resume")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ResumeScreen))
        assert app.session_id == current


async def test_the_picker_is_drawn_every_time_and_gives_the_keyboard_back(
    api: FakeApi, repo: Path
) -> None:
    for rounds in (1, 2, 3):
        write_session(repo, rounds)
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        for _ in range(7):
            await submit(pilot, "/resume")
            await wait_for(pilot, lambda: "Resume a session" in screen_text(app))
            assert "question 0" in screen_text(app)
            await pilot.press("escape")
            await wait_for(pilot, lambda: "Resume a session" not in screen_text(app))
        await pilot.press("o", "k")
        assert app.query_one("#prompt-input").text == "ok"  # type: ignore[attr-defined]


async def test_a_long_session_mounts_the_last_page_and_loads_earlier(
    api: FakeApi, repo: Path
) -> None:
    session_id = write_session(repo, 100)  # 400 messages -> 500 entries
    app = make_app(repo, resume=session_id)
    async with app.run_test(size=(120, 40)) as pilot:
        transcript = app.query_one(Transcript)
        await wait_for(pilot, lambda: "Resumed session" in screen_text(app))
        prompts = [w.prompt for w in app.query(UserPrompt)]
        assert prompts[-1] == "question 99" and "question 0" not in prompts
        assert (
            len(transcript.children) <= PAGE + 4
        )  # and the header, the button, a notice, the hint
        assert transcript.query_one("#load-earlier")
        transcript.scroll_home(animate=False, immediate=True)  # the top loads the page before
        await wait_for(pilot, lambda: len(list(app.query(UserPrompt))) > len(prompts))
        await wait_for(pilot, lambda: transcript.scroll_y > 0)  # what was read stays in view
        for _ in range(10):
            if not transcript.query("#load-earlier"):
                break
            await transcript.load_earlier()
        assert next(w.prompt for w in app.query(UserPrompt)) == "question 0"


def test_history_entries_pair_tools_and_skip_reminders() -> None:
    use = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    messages = [
        Message(
            "user",
            [
                {"type": "text", "text": "list"},
                {"type": "text", "text": "<system-reminder>x</system-reminder>"},
            ],
        ),
        Message("assistant", [{"type": "text", "text": "Listing."}, use], kind="response"),
        Message(
            "user",
            [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a\nb", "is_error": True},
                {"type": "text", "text": "[Request interrupted by user]"},
            ],
            kind="tool_result",
        ),
        Message("user", [{"type": "text", "text": "summary text"}], kind="summary"),
    ]
    entries = history_entries(messages)
    assert [e.kind for e in entries] == ["user", "assistant", "tool", "interrupted", "summary"]
    assert entries[0].text == "list"
    tool = entries[2].tool
    assert tool is not None and tool.result == "a\nb" and tool.is_error and tool.answered
    assert tool.label == "ls"  # the tool's own label, as the live session showed it


def test_stored_calls_are_labelled_by_their_tools(tmp_path: Path) -> None:
    def call(name: str, **tool_input: object) -> dict:
        return {"type": "tool_use", "id": name, "name": name, "input": tool_input}

    calls = [
        call("Read", file_path=str(tmp_path / "src" / "app.py")),
        call("Grep", pattern="TODO", path=str(tmp_path / "src")),
        call("Mystery", x=1),
        call("Write", file_path=3),  # input that does not validate
    ]
    entries = history_entries([Message("assistant", calls, kind="response")], tmp_path)
    labels = [e.tool.label for e in entries if e.tool is not None]
    assert labels == ["Read src/app.py", 'Grep "TODO" in src', "Mystery", "Write"]


async def test_switching_and_quitting_close_the_api_clients(api: FakeApi, repo: Path) -> None:
    old = write_session(repo, 1)
    api.add(text_reply("fresh reply"), text_reply("resumed reply"))
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "fresh")
        await wait_idle(pilot)
        assert app.bridge.driver is not None
        first = app.bridge.driver.runtime.agent.client.client
        await submit(pilot, "/resume")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session_id == old and app.ready)
        await wait_for(pilot, first.is_closed)  # one client per /resume would otherwise leak
        await submit(pilot, "go on")
        await wait_idle(pilot)
        assert app.bridge.driver is not None
        second = app.bridge.driver.runtime.agent.client.client
        assert second is not first and not second.is_closed()
    assert second.is_closed()


def _session_with_prompt(repo: Path, prompt: str) -> str:
    from agent.core.messages import user_text
    from agent.sessions.session import Session

    session = Session.create(repo, "claude-sonnet-4-5")
    session.append_message(user_text(prompt))
    reply = [{"type": "text", "text": "On it."}]
    session.append_message(Message("assistant", reply, kind="response", api_id="msg_x"))
    session.close()
    return session.id


async def test_the_resume_picker_searches_as_the_user_types(api: FakeApi, repo: Path) -> None:
    """Words typed narrow the list (every word, case aside), Up/Down move, Enter opens the
    highlighted one; a search that matches nothing says so and Enter does nothing."""
    _session_with_prompt(repo, "Fix the parser bug in split.py")
    docs = _session_with_prompt(repo, "Write docs for the API")
    speed = _session_with_prompt(repo, "Make the PARSER faster")
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "/resume")
        screen = await wait_for(
            pilot, lambda: app.screen if isinstance(app.screen, ResumeScreen) else None
        )
        await pilot.press(*"zzz")
        await wait_for(pilot, lambda: "No session matches 'zzz'" in screen_text(app))
        await pilot.press("enter")
        assert isinstance(app.screen, ResumeScreen)
        for _ in range(3):
            await pilot.press("backspace")
        await pilot.press(*"parser")
        await wait_for(pilot, lambda: len(screen.shown) == 2)
        assert docs not in [s.id for s in screen.shown]
        await pilot.press(*" faster")
        await wait_for(pilot, lambda: [s.id for s in screen.shown] == [speed])
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session_id == speed)
