"""Rewinding (Esc Esc, /rewind): a prompt taken back leaves the conversation with all that
followed, the transcript replays to the same place, the meter moves at once, and the
files Edit and Write changed since come back when asked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.core.events import ContextUpdate, Event
from agent.sessions.session import load_session
from tests.fake_env import use_fake_api
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.session.driver import SessionDriver
from tui.session.options import RunOptions
from tui.session.rewind import first_line


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


def interactive_driver(repo: Path, events: list[Event], **options: object) -> SessionDriver:
    """A session as the app and the REPL make it (not headless: file checkpoints kept)."""
    run = RunOptions(
        cwd=repo, watch_files=False, headless=False, permission_mode="acceptEdits", **options
    )
    return SessionDriver(run, events.append)


async def test_rewind_takes_the_prompt_back_with_what_followed_and_says_so(
    api: FakeApi, repo: Path
) -> None:
    events: list[Event] = []
    note = repo / "note.txt"
    api.add(
        text_reply("First answer."),
        tool_reply(("Write", {"file_path": str(note), "content": "written\n"})),
        text_reply("Wrote it."),
    )
    driver = interactive_driver(repo, events)
    try:
        await driver.run("first question")
        await driver.run("write the note\nplease")
        assert note.read_text() == "written\n"
        points = driver.rewind_points()
        assert [(p.number, p.text) for p in points] == [
            (1, "write the note\nplease"),
            (2, "first question"),
        ]
        assert points[0].files == (str(note),) and points[1].files == (str(note),)
        before = len(driver.messages)
        events.clear()
        result = await driver.run("/rewind 1")
        assert not result.is_error, result.text
        assert result.data["rewound"]["text"] == "write the note\nplease"
        assert "Rewound to before “write the note …”" in result.text
        assert [m.kind for m in driver.messages] == ["prompt", "response"]
        assert f"{before - 2} messages taken out" in result.text
        assert any(isinstance(e, ContextUpdate) for e in events)  # the meter moves at once
        assert note.read_text() == "written\n"  # conversation only: the file stays
        assert [p.text for p in driver.rewind_points()] == ["first question"]
        path = driver.runtime.session.path
    finally:
        await driver.aclose()
    loaded = load_session(path)  # -c resumes the rewound conversation
    assert [m.text() for m in loaded.messages] == ["first question", "First answer."]
    written = [
        r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "file_state"
    ]
    assert [r["path"] for r in written] == [str(note)]  # the Write was recorded...
    assert loaded.file_states == []  # ...and went with the prompt it answered


async def test_rewind_with_files_puts_back_what_edit_and_write_changed(
    api: FakeApi, repo: Path
) -> None:
    existing = repo / "README.md"
    original = existing.read_text()
    new = repo / "new.txt"
    api.add(
        tool_reply(("Write", {"file_path": str(new), "content": "new\n"})),
        tool_reply(("Read", {"file_path": str(existing)})),
        tool_reply(("Write", {"file_path": str(existing), "content": "changed\n"})),
        text_reply("Done."),
    )
    driver = interactive_driver(repo, [])
    try:
        await driver.run("change things")
        assert new.exists() and existing.read_text() == "changed\n"
        result = await driver.run("/rewind 1 files")
        assert not result.is_error, result.text
        assert sorted(result.data["rewound"]["files"]) == sorted([str(new), str(existing)])
        assert "Files put back:" in result.text
        assert driver.messages == []
    finally:
        await driver.aclose()
    assert not new.exists() and existing.read_text() == original


async def test_bad_rewinds_are_told_and_change_nothing(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("Hi."))
    driver = interactive_driver(repo, [])
    try:
        empty = await driver.run("/rewind")
        assert empty.is_error and "no prompt to rewind" in empty.text
        await driver.run("hello")
        listing = await driver.run("/rewind")
        assert not listing.is_error and "  1. hello" in listing.text
        for line in ("/rewind 2", "/rewind x", "/rewind 1 everything", "/rewind 0"):
            bad = await driver.run(line)
            assert bad.is_error and "Usage: /rewind [N] [files]" in bad.text, line
        assert len(driver.messages) == 2
    finally:
        await driver.aclose()


async def test_a_headless_session_rewinds_the_conversation_but_keeps_no_file_checkpoints(
    api: FakeApi, repo: Path
) -> None:
    api.add(text_reply("Hi."))
    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), [].append)
    try:
        await driver.run("hello")
        (point,) = driver.rewind_points()
        assert not point.checkpoints
        refused = await driver.run("/rewind 1 files")
        assert refused.is_error and "no file checkpoints" in refused.text
        assert len(driver.messages) == 2
        assert not (await driver.run("/rewind 1")).is_error
        assert driver.messages == []
    finally:
        await driver.aclose()


def test_first_line_keeps_a_list_to_one_line() -> None:
    assert first_line("short") == "short"
    assert first_line("two\nlines") == "two …"
    assert first_line("x" * 100, 10) == "x" * 9 + "…"


def test_the_transcript_replays_a_rewind_and_passes_over_one_it_cannot_place(
    api: FakeApi, repo: Path
) -> None:
    from agent.core.conversation import Conversation
    from agent.core.messages import Message, text_block, user_text
    from agent.sessions.session import Session

    session = Session.create(repo, "claude-sonnet-4-5")
    conversation = Conversation(transcript=session)
    for text in ("one", "two", "three"):
        conversation.append(user_text(text))
        conversation.append(Message("assistant", [text_block(f"re {text}")], kind="response"))
    assert conversation.rewind(4) and [m.text() for m in conversation.messages] == [
        "one", "re one", "two", "re two",
    ]  # fmt: skip
    session.append_record({"type": "rewind", "uuid": "no-such-message", "at": 0})
    assert conversation.rewind(99) == []  # nothing after the end: nothing recorded
    session.close()
    loaded = load_session(session.path)
    assert [m.text() for m in loaded.messages] == ["one", "re one", "two", "re two"]
