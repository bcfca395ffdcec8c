"""The model's thinking in the TUI: collapsed as it streams, ctrl+o shows it, a resume too."""

from __future__ import annotations

from pathlib import Path

from agent.core.messages import Message, user_text
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_words, widget_text
from tui.fake_api import FakeApi, Reply
from tui.fullscreen.history import history_entries
from tui.fullscreen.widgets.thinking_block import ThinkingBlock

THOUGHT = "The limit lives in src/app.py.\nI should check the constant before answering."


def thinking_reply(text: str = "It is 3.") -> Reply:
    return Reply(
        content=[{"type": "thinking", "thinking": THOUGHT}, {"type": "text", "text": text}]
    )


async def test_thinking_streams_collapsed_and_ctrl_o_shows_it(api: FakeApi, repo: Path) -> None:
    api.add(thinking_reply())
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "what is the retry limit?")
        await wait_idle(pilot)
        block = app.query_one(ThinkingBlock)
        shown = widget_text(app, block)
        assert shown.strip().startswith("∴ Thinking…") and "+2 lines (ctrl+o to expand)" in shown
        assert "check the constant" not in screen_words(app)
        assert "It is 3." in screen_words(app)  # the reply itself is not folded
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert block.expanded and "check the constant" in widget_text(app, block)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not block.expanded and "check the constant" not in widget_text(app, block)
    assert api.errors == []


def test_a_resumed_session_lists_thinking_as_its_own_entry() -> None:
    messages = [
        user_text("why?"),
        Message(
            "assistant",
            [
                {"type": "thinking", "thinking": THOUGHT, "signature": "s"},
                {"type": "redacted_thinking", "data": "xyz"},
                {"type": "text", "text": "Because."},
            ],
            kind="response",
        ),
    ]
    kinds = [(e.kind, e.text) for e in history_entries(messages)]
    assert kinds == [("user", "why?"), ("thinking", THOUGHT), ("assistant", "Because.")]
