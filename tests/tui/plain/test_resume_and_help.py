"""/resume and /help in the plain REPL: the same commands as the full-screen app."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import write_session
from tests.tui.plain.test_repl import ENTER, plain_session, workspace  # noqa: F401 (a fixture)
from tui.fake_api import FakeApi, text_reply
from tui.plain.resume import listing, pick


async def test_resume_lists_the_other_sessions_and_switches(
    workspace: tuple[FakeApi, Path],  # noqa: F811
) -> None:
    api, root = workspace
    old = write_session(root, 2)
    api.add(text_reply("continuing the old one"))
    async with plain_session(root) as session:
        await session.until(lambda: session.repl.waiting == "prompt")
        seen = session.repl.lines_read
        session.pipe.send_text("/resume" + ENTER)
        await session.until(lambda: "Resume which one?" in session.text)
        assert " 1. " in session.text and "question 0" in session.text
        session.pipe.send_text("1" + ENTER)
        await session.until(lambda: f"Resumed session {old} (8 messages)." in session.text)
        await session.until(lambda: session.repl.lines_read > seen)
        await session.type("go on" + ENTER)
        await session.until(lambda: "continuing the old one" in session.text)
        assert session.repl.driver is not None and session.repl.driver.session_id == old
    assert "question 1" in api.requests[-1].all_text()


async def test_resume_with_nothing_to_resume_or_a_wrong_id_keeps_the_session(
    workspace: tuple[FakeApi, Path],  # noqa: F811
) -> None:
    _api, root = workspace
    async with plain_session(root) as session:
        current = session.repl.driver.session_id  # type: ignore[union-attr]
        await session.type("/resume" + ENTER)
        assert "No other sessions in this folder." in session.text
        write_session(root, 1)
        await session.type("/resume nosuchid" + ENTER)
        assert "No session matches 'nosuchid'." in session.text
        assert session.repl.driver.session_id == current  # type: ignore[union-attr]


async def test_help_lists_resume_and_exit(workspace: tuple[FakeApi, Path]) -> None:  # noqa: F811
    _api, root = workspace
    async with plain_session(root) as session:
        await session.type("/help" + ENTER)
        assert "/resume [id]" in session.text and "/exit" in session.text
        assert "/compact" in session.text and "Ctrl-D or /exit quits" in session.text


def test_pick_takes_a_number_or_an_unambiguous_id_start() -> None:
    class Info:
        def __init__(self, id: str) -> None:
            self.id, self.modified, self.message_count = id, 0.0, 3
            self.count_estimated, self.first_prompt = False, "hello"

    sessions = [Info("abc123"), Info("abd456")]
    assert pick("2", sessions) == "abd456"  # type: ignore[arg-type]
    assert pick("abc", sessions) == "abc123"  # type: ignore[arg-type]
    assert pick("ab", sessions) is None  # type: ignore[arg-type]
    assert pick("9", sessions) is None and pick("", sessions) is None  # type: ignore[arg-type]
    assert listing(sessions, now=60.0)[0].startswith(" 1. just now")  # type: ignore[arg-type]
