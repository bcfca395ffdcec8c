"""Esc in the plain REPL's ctrl+r search brings back what was typed, as the full-screen app's
does (the README's keys table says so for both); Enter keeps the match
(tests/tui/plain/test_repl.py)."""

from __future__ import annotations

from pathlib import Path

from tests.tui.plain.test_repl import ENTER, plain_session, workspace  # noqa: F401 (fixture)
from tui.fake_api import FakeApi, text_reply


async def test_esc_in_a_history_search_brings_back_the_draft(
    workspace: tuple[FakeApi, Path],  # noqa: F811
) -> None:
    api, root = workspace
    api.add(text_reply("One."), text_reply("Two."))
    async with plain_session(root) as session:
        await session.type("fix the retry limit" + ENTER)
        app = session.repl.source.session.app  # type: ignore[attr-defined]
        buffer = session.repl.source.session.default_buffer  # type: ignore[attr-defined]
        session.pipe.send_text("draft\x12retry")
        await session.until(lambda: app.layout.is_searching and app.current_buffer.text == "retry")
        session.pipe.send_text("\x1b")  # (Enter here would keep "fix the retry limit")
        await session.until(lambda: not app.layout.is_searching)
        assert buffer.text == "draft"
        await session.type(" sent" + ENTER)
        assert api.requests[-1].last_user_text() == "draft sent"
