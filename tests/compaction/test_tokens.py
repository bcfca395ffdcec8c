"""Token estimates by the reference's rules, the memo, and the API-anchored counter."""

from __future__ import annotations

import json
import math

import pytest

from agent.core.messages import Message, tool_result_block, user_text
from compaction.tokens import (
    EstimateMemo,
    TokenCounter,
    clear_estimate_memo,
    estimate_block,
    estimate_message,
    estimate_messages,
    estimate_system,
    estimate_text,
    estimate_tools,
)


def assistant(*blocks: dict, api_id: str | None = None) -> Message:
    return Message(role="assistant", content=list(blocks), kind="response", api_id=api_id)


def text(n: int) -> dict:
    return {"type": "text", "text": "x" * n}


# -- estimate rules ----------------------------------------------------------------------


def test_text_is_characters_over_four() -> None:
    assert estimate_block(text(100)) == 25
    assert estimate_block(text(2)) == 0.5
    assert estimate_text("abcde") == 2


def test_tool_use_is_name_plus_compact_json_of_input() -> None:
    tool_input = {"file_path": "/a/b.py", "limit": 10}
    block = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": tool_input}
    compact = json.dumps(tool_input, separators=(",", ":"))
    assert estimate_block(block) == (len("Read") + len(compact)) / 4


def test_tool_result_string_and_list_content() -> None:
    assert estimate_block(tool_result_block("t", "y" * 40)) == 10
    items = [text(8), {"type": "image", "source": {"data": "z" * 100_000}}, {"type": "document"}]
    assert estimate_block(tool_result_block("t", items)) == 2 + 2_000 + 2_000


def test_images_and_documents_are_flat() -> None:
    huge = {"type": "image", "source": {"type": "base64", "data": "A" * 1_000_000}}
    assert estimate_block(huge) == 2_000
    assert estimate_block({"type": "document", "source": {}}) == 2_000


def test_thinking_counts_its_text_not_its_signature() -> None:
    block = {"type": "thinking", "thinking": "t" * 40, "signature": "s" * 4_000}
    assert estimate_block(block) == 10
    assert estimate_block({"type": "redacted_thinking", "data": "d" * 80}) == 20


def test_unknown_blocks_count_their_json() -> None:
    block = {"type": "server_tool_use", "id": "x", "name": "web_search", "input": {}}
    assert estimate_block(block) == len(json.dumps(block, separators=(",", ":"))) / 4


def test_bad_blocks_do_not_crash() -> None:
    assert estimate_block({"type": "text", "text": None}) == 0
    assert estimate_block({"type": "tool_result", "tool_use_id": "x"}) == 0
    assert estimate_block({}) > 0


def test_messages_are_padded_by_four_thirds() -> None:
    messages = [user_text("x" * 400), assistant(text(200))]
    assert estimate_message(messages[0]) == 100
    assert estimate_messages(messages) == math.ceil(150 * 4 / 3) == 200


def test_system_and_tools() -> None:
    assert estimate_system([text(40), text(4)]) == 11
    tools = [{"name": "Read", "description": "d" * 50, "input_schema": {"type": "object"}}]
    assert estimate_tools(tools) == len(json.dumps(tools[0], separators=(",", ":"))) / 4


# -- the memo ----------------------------------------------------------------------------


def test_memo_is_invalidated_when_the_content_list_is_replaced() -> None:
    message = user_text("x" * 40)
    assert estimate_message(message) == 10
    message.content = [text(400)]
    assert estimate_message(message) == 100


def test_memo_sees_length_changes_of_an_edited_list() -> None:
    message = user_text("x" * 40)
    assert estimate_message(message) == 10
    message.content.append(text(40))
    assert estimate_message(message) == 20


def test_memo_does_not_measure_again(monkeypatch: pytest.MonkeyPatch) -> None:
    import compaction.tokens as tokens

    memo = EstimateMemo()
    message = user_text("x" * 40)
    calls = []
    real = tokens._measure
    monkeypatch.setattr(tokens, "_measure", lambda c: calls.append(1) or real(c))
    for _ in range(5):
        assert memo.estimate(message) == 10
    assert calls == [1]


def test_memo_is_bounded_and_keeps_recent_entries() -> None:
    memo = EstimateMemo(generation_size=10)
    messages = [user_text("x" * 4) for _ in range(100)]
    for message in messages:
        memo.estimate(message)
    assert len(memo) <= 20
    recent = messages[-5:]
    before = len(memo)
    for message in recent:
        memo.estimate(message)
    assert len(memo) == before


def test_clear_estimate_memo() -> None:
    message = user_text("x" * 8)
    estimate_message(message)
    clear_estimate_memo()
    assert estimate_message(message) == 2


# -- the counter -------------------------------------------------------------------------


def conversation() -> list[Message]:
    return [user_text("x" * 400), assistant(text(400), api_id="msg_1")]


USAGE = {
    "input_tokens": 10,
    "cache_read_input_tokens": 1_000,
    "cache_creation_input_tokens": 90,
    "output_tokens": 100,
}


def test_counter_without_usage_estimates_everything_calibrated() -> None:
    counter = TokenCounter()
    messages = conversation()
    assert counter.count(messages, overhead_estimate=300) == math.ceil(500 * 4 / 3)
    assert counter.source == "estimate"


def test_counter_anchors_on_reported_usage_and_adds_what_came_after() -> None:
    counter = TokenCounter()
    messages = conversation()
    counter.observe_response(messages[:1], USAGE, messages[1], request_overhead_estimate=300)
    assert counter.count(messages, 300) == 1_200
    assert counter.source == "api"
    messages.append(user_text("y" * 400))
    expected = 1_200 + math.ceil(100 * counter.calibration)
    assert counter.count(messages, 300) == expected


def test_counter_falls_back_when_the_anchor_moved() -> None:
    counter = TokenCounter()
    messages = conversation()
    counter.observe_response(messages[:1], USAGE, messages[1], 300)
    shifted = [user_text("z" * 4), *messages]
    assert counter.count(shifted, 300) == math.ceil((300 + 201) * counter.calibration)
    assert counter.source == "estimate"
    replaced = [messages[0], assistant(text(400), api_id="msg_1")]
    counter.count(replaced, 300)
    assert counter.source == "estimate"


def test_adjust_shifts_and_invalidate_drops_the_anchor() -> None:
    counter = TokenCounter()
    messages = conversation()
    counter.observe_response(messages[:1], USAGE, messages[1], 300)
    counter.adjust(-200)
    assert counter.count(messages, 300) == 1_000
    counter.adjust(-5_000)
    assert counter.count(messages, 300) == 0
    counter.invalidate()
    assert counter.anchor is None
    assert counter.count(messages, 300) == math.ceil(500 * counter.calibration)


def test_calibration_learns_the_ratio_smoothed_and_clamped() -> None:
    counter = TokenCounter()
    assert counter.calibration == pytest.approx(4 / 3)
    messages = conversation()
    # raw estimate of this request = 300 overhead + 100 = 400; actual input 1,100 -> 2.75
    counter.observe_response(messages[:1], USAGE, messages[1], 300)
    assert counter.calibration == pytest.approx((4 / 3 + 2.75) / 2)
    for _ in range(30):
        counter.observe_response(messages[:1], USAGE, messages[1], 300)
    assert counter.calibration == pytest.approx(2.75, rel=1e-3)
    huge = {"input_tokens": 1_000_000, "output_tokens": 1}
    for _ in range(30):
        counter.observe_response(messages[:1], huge, messages[1], 300)
    assert counter.calibration == pytest.approx(3.0, rel=1e-3)
    tiny = {"input_tokens": 1}
    for _ in range(40):
        counter.observe_response(messages[:1], tiny, messages[1], 300)
    assert counter.calibration == pytest.approx(0.5, rel=1e-3)


def test_calibration_moves_gradually() -> None:
    counter = TokenCounter()
    messages = conversation()
    for _ in range(5):
        counter.observe_response(messages[:1], {"input_tokens": 400}, messages[1], 300)
    settled = counter.calibration
    counter.observe_response(messages[:1], {"input_tokens": 1_200}, messages[1], 300)
    assert settled < counter.calibration < 3.0
    assert counter.calibration == pytest.approx(settled + 0.3 * (3.0 - settled))


def test_usage_without_input_keeps_estimating() -> None:
    counter = TokenCounter()
    messages = conversation()
    counter.observe_response(messages[:1], {"output_tokens": 5}, messages[1], 300)
    assert counter.anchor is None
    assert counter.calibration == pytest.approx(4 / 3)


def test_explicit_position() -> None:
    counter = TokenCounter()
    messages = [user_text("a"), *conversation()]
    counter.observe_response(messages[1:2], USAGE, messages[2], 0, position=2)
    assert counter.count(messages, 0) == 1_200


def test_once_the_conversation_is_replaced_the_memo_holds_only_what_it_keeps() -> None:
    import compaction.tokens as tokens

    clear_estimate_memo()
    before = [user_text(f"old message {n} " + "x" * 400) for n in range(300)]
    counter = TokenCounter()
    counter.count(before, 0.0)
    assert len(tokens._MEMO) == 300
    after = [*before[-4:], user_text("the summary")]
    counter.invalidate()  # a compaction replaced the conversation
    counter.count(after, 0.0)
    assert len(tokens._MEMO) == len(after)
    counter.count([*after, user_text("next")], 0.0)
    assert len(tokens._MEMO) == len(after) + 1
