"""The thinking rules in the core: what may be dropped, breakpoints, side calls, repair."""

from __future__ import annotations

from agent.core.messages import Message, tool_result_block, user_text
from agent.core.pairing import repair_pairs
from agent.core.request import build_request
from agent.core.thinking import (
    continued_response,
    drop_earlier_thinking,
    drop_thinking,
    droppable,
    loop_thinking_missing,
    side_request,
    without_thinking_config,
)

THOUGHT = {"type": "thinking", "thinking": "Let me think.", "signature": "sig_a"}
REDACTED = {"type": "redacted_thinking", "data": "opaque=="}
ENABLED = {"thinking": {"type": "enabled", "budget_tokens": 10_000}}


def response(*blocks: dict, use_id: str | None = None) -> Message:
    content = [dict(b) for b in blocks]
    if use_id:
        content.append({"type": "tool_use", "id": use_id, "name": "Read", "input": {}})
    return Message("assistant", content, kind="response")


def answer(use_id: str) -> Message:
    return Message("user", [tool_result_block(use_id, "out")], kind="tool_result")


def loop() -> list[Message]:
    return [
        user_text("go"),
        response(THOUGHT, use_id="t1"),
        answer("t1"),
        response(REDACTED, {"type": "text", "text": "more"}, use_id="t2"),
        answer("t2"),
        response(THOUGHT, use_id="t3"),
        answer("t3"),
    ]


def test_every_earlier_thought_may_go_but_the_continued_loop_s() -> None:
    messages = loop()
    assert continued_response(messages) == 5
    assert droppable(messages) == [1, 3]
    assert droppable(messages, start=2) == [3]
    dropped = drop_earlier_thinking(messages)
    assert [b["type"] for b in dropped[1].content] == ["tool_use"]
    assert [b["type"] for b in dropped[3].content] == ["text", "tool_use"]
    assert dropped[5] is messages[5]  # the loop's message is the very same object
    assert messages[1].content[0] == THOUGHT  # replaced, never edited in place


def test_a_message_holding_only_thinking_keeps_it() -> None:
    messages = [user_text("go"), response(THOUGHT), user_text("and?"), response(THOUGHT)]
    assert droppable(messages) == []
    assert drop_thinking(messages, [1, 3]) == messages


def test_a_breakpoint_never_lands_on_a_thinking_block() -> None:
    messages = [user_text("go"), response({"type": "text", "text": "hm"}, THOUGHT)]
    request = build_request(
        model="m",
        system=[{"type": "text", "text": "s"}],
        tools=[],
        messages=messages,
        max_tokens=100,
    )
    last = request["messages"][-1]["content"]
    assert "cache_control" not in last[1] and last[0]["cache_control"] == {"type": "ephemeral"}
    only = build_request(
        model="m",
        system=[],
        tools=[],
        messages=[user_text("go"), response(THOUGHT)],
        max_tokens=100,
    )
    assert "cache_control" not in only["messages"][-1]["content"][0]


def test_a_loop_without_its_thinking_is_told_apart() -> None:
    messages = loop()
    assert not loop_thinking_missing(messages)
    bare = [*messages[:5], response(use_id="t3"), answer("t3")]
    assert loop_thinking_missing(bare)
    assert not loop_thinking_missing([*bare, response({"type": "text", "text": "done"})])


def test_side_calls_keep_the_main_thinking_with_room_above_the_budget() -> None:
    messages = [*loop(), user_text("summarize")]
    extra, max_tokens = side_request(messages, ENABLED, 20_000, 64_000)
    assert extra is ENABLED and max_tokens == 30_000
    # the model's limit leaves no room above the budget: no thinking then
    extra, max_tokens = side_request(messages, ENABLED, 20_000, 10_000)
    assert "thinking" not in extra and max_tokens == 20_000
    bare = [*loop()[:5], response(use_id="t3"), answer("t3"), user_text("summarize")]
    extra, _ = side_request(bare, ENABLED, 20_000, 64_000)
    assert "thinking" not in extra
    adaptive = {"thinking": {"type": "adaptive"}}
    assert side_request(messages, adaptive, 20_000, 64_000) == (adaptive, 20_000)
    assert side_request(messages, {}, 20_000, 64_000) == ({}, 20_000)


def test_thinking_off_also_takes_the_edits_that_need_it() -> None:
    extra = {
        **ENABLED,
        "context_management": {
            "edits": [{"type": "clear_thinking_20251015"}, {"type": "clear_tool_uses_20250919"}]
        },
        "extra_body": {"context_management": {"edits": [{"type": "clear_thinking_20251015"}]}},
    }
    off = without_thinking_config(extra)
    assert "thinking" not in off
    assert off["context_management"] == {"edits": [{"type": "clear_tool_uses_20250919"}]}
    assert "context_management" not in off["extra_body"]
    assert "thinking" in extra  # the configured extra is left as it was


def test_repair_never_touches_a_thinking_block() -> None:
    messages = loop()
    duplicate = response(THOUGHT, use_id="t1")  # a tool_use id used twice, after a crash
    broken = [*messages[:3], duplicate, *messages[3:]]
    repaired = repair_pairs(broken)
    for message in repaired:
        for block in message.content:
            if block["type"] in ("thinking", "redacted_thinking"):
                assert block in (THOUGHT, REDACTED)
    kept = [m for m in repaired if m.role == "assistant"]
    assert all(m.content[0]["type"] in ("thinking", "redacted_thinking") for m in kept)


def test_a_thought_that_could_never_go_back_unchanged_is_left_out_whole() -> None:
    from agent.core.conversation import Conversation

    conversation = Conversation([user_text("go")])
    unsigned = {"type": "thinking", "thinking": "cut before its signature"}
    surrogate = {"type": "thinking", "thinking": "a lone \ud800 here", "signature": "s"}
    conversation.append(response(unsigned, THOUGHT, surrogate, use_id="t1"))
    assert conversation.messages[-1].content[0] == THOUGHT  # the good one, untouched
    assert [b["type"] for b in conversation.messages[-1].content] == ["thinking", "tool_use"]
    conversation.append(answer("t1"))
    conversation.append(response({"type": "redacted_thinking", "data": ""}))
    assert conversation.messages[-1].content == [{"type": "text", "text": "(no content)"}]
