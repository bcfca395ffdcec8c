"""Thinking in the plain REPL, in stream-json, in clearing notices and in /context."""

from __future__ import annotations

import io

from rich.console import Console

from agent.core.context_state import ContextLimits
from agent.core.events import AssistantMessage, Microcompacted, TextDelta, ThinkingDelta
from agent.core.messages import Message, user_text
from compaction.breakdown import THINKING, context_breakdown
from tui.headless.stream_json.schema import to_lines
from tui.plain.render import PlainRenderer
from tui.words import clearing_words

THOUGHT = {"type": "thinking", "thinking": "Check the constant first.", "signature": "sig_1"}


def test_the_plain_repl_shows_one_collapsed_line_not_the_thought() -> None:
    out = io.StringIO()
    renderer = PlainRenderer(Console(file=out, width=200))
    renderer.handle(ThinkingDelta("Check the constant "))
    renderer.handle(ThinkingDelta("first."))
    renderer.handle(TextDelta("It is 3."))
    renderer.handle(
        AssistantMessage({"role": "assistant", "content": []}, "msg_1", "end_turn", {}, "m")
    )
    lines = out.getvalue().splitlines()
    assert lines[0].strip() == "∴ Thinking…"
    assert lines[1].strip() == "● It is 3."
    assert "constant" not in out.getvalue()


def test_stream_json_puts_each_thought_on_a_line_of_its_own() -> None:
    content = [
        THOUGHT,
        {"type": "redacted_thinking", "data": "xyz"},
        {"type": "text", "text": "Hi"},
    ]
    event = AssistantMessage(
        {"role": "assistant", "content": content}, "msg_7", "end_turn", {}, "m", "u-1"
    )
    lines = to_lines(event, "sess", include_partial=False)
    assert [line["message"]["content"] for line in lines] == [
        [THOUGHT],
        [{"type": "redacted_thinking", "data": "xyz"}],
        [{"type": "text", "text": "Hi"}],
    ]
    assert {line["message"]["id"] for line in lines} == {"msg_7"}
    assert lines[-1]["uuid"] == "u-1" and len({line["uuid"] for line in lines}) == 3
    plain = AssistantMessage({"role": "assistant", "content": content[2:]}, "msg_8", None, {}, "m")
    assert len(to_lines(plain, "sess", include_partial=False)) == 1


def test_a_clear_that_drops_thinking_says_so() -> None:
    both = Microcompacted("cost", 3, 9_000, thinking_dropped=5)
    assert clearing_words(both).startswith("Cleared 3 old tool results and 5 earlier thoughts")
    alone = Microcompacted("time", 0, 2_000, thinking_dropped=1)
    assert clearing_words(alone).startswith("Dropped the thinking of 1 earlier response, freed")


def test_context_counts_thinking_on_its_own_line() -> None:
    messages = [
        user_text("go"),
        Message(
            "assistant", [{**THOUGHT, "thinking": "t" * 4_000}, {"type": "text", "text": "x" * 400}]
        ),
    ]
    breakdown = context_breakdown(
        system_blocks=[],
        memory_texts=[],
        skills_text="",
        tools_api=[],
        messages=messages,
        limits=ContextLimits(200_000, 64_000),
        used=1_102,
    )
    # 4,000 characters of thinking (the signature not counted) against ~100 tokens of text
    assert abs(breakdown.tokens(THINKING) - 1_000) <= 2
    assert abs(breakdown.tokens("Messages") - 100) <= 2
    without = context_breakdown(
        system_blocks=[],
        memory_texts=[],
        skills_text="",
        tools_api=[],
        messages=[user_text("go")],
        limits=ContextLimits(200_000, 64_000),
        used=1,
    )
    assert THINKING not in [c.name for c in without.categories]
