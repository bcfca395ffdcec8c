"""Microcompact's plan with thinking in the history: what a clear drops, and how it is priced."""

from __future__ import annotations

from agent.core.messages import Message, tool_result_block, user_text
from compaction.clearing import Clearing
from compaction.markers import CLEARED_PREFIX
from compaction.microcompact import plan_clearing
from compaction.services import CompactionServices
from compaction.tokens import estimate_block, estimate_message
from tools.file_state import FileStateCache

BIG = "x = 1\n" * 2_000  # about 3,000 tokens
THOUGHT = "I weigh the next step. " * 400  # about 2,300 tokens


def session(count: int, result: str = BIG, tool: str = "Read") -> list[Message]:
    messages = [user_text("audit the repo")]
    for index in range(count):
        tool_id = f"toolu_{index:03d}"
        tool_input = {"file_path": f"/repo/m{index:02d}.py"} if tool == "Read" else {"pattern": "*"}
        thinking = {"type": "thinking", "thinking": f"{index} {THOUGHT}", "signature": f"s{index}"}
        messages.append(
            Message(
                "assistant",
                [thinking, {"type": "tool_use", "id": tool_id, "name": tool, "input": tool_input}],
                kind="response",
            )
        )
        messages.append(Message("user", [tool_result_block(tool_id, result)], kind="tool_result"))
    return messages


def plan(messages, **kw):
    defaults = {
        "now": 1_000.0,
        "last_response_at": 999.0,
        "used_tokens": 10_000,
        "auto_threshold": 500_000,
        "growth_per_request": 3_000,
        "message_tokens": estimate_message,
        "estimate_block": estimate_block,
    }
    return plan_clearing(messages, **{**defaults, **kw})


def thought_tokens(messages: list[Message], indices: list[int]) -> float:
    return sum(estimate_block(messages[i].content[0]) for i in indices)


def test_a_cold_clear_drops_every_earlier_thought_and_counts_it_freed() -> None:
    messages = session(8)
    result = plan(messages, last_response_at=None)
    assert result.reason == "time"
    last = len(messages) - 2
    assert result.thinking == list(range(1, last, 2))  # every response but the continued one
    assert result.thinking_tokens == thought_tokens(messages, result.thinking)
    assert result.tokens_freed == sum(c.tokens for c in result.clear) + result.thinking_tokens


def test_a_warm_clear_drops_only_the_thinking_after_the_anchor_it_rewrites_from() -> None:
    messages = session(40)
    anchor = 20  # a user message: the prefix up to it is cached and was cleared before
    for index in range(2, anchor + 1, 2):
        use_id = messages[index].content[0]["tool_use_id"]
        messages[index] = Message("user", [tool_result_block(use_id, f"{CLEARED_PREFIX}]")])
    result = plan(messages, anchors=(anchor,))
    assert result.reason == "cost"
    assert result.thinking and min(result.thinking) == anchor + 1
    assert len(messages) - 2 not in result.thinking
    # what it rewrites is what follows the anchor, less what it clears and drops
    assert result.rewrite_tokens > 0


def test_thinking_alone_is_a_batch_the_cost_model_weighs() -> None:
    small = "3 files\n"
    messages = session(12, result=small, tool="Glob")  # nothing clearable: tiny results
    cold = plan(messages, last_response_at=None)
    assert cold.reason == "time" and cold.clear == [] and len(cold.thinking) == 11
    warm = plan(messages, anchors=(len(messages) - 3,))  # nothing after the anchor to drop
    assert warm.reason == "none" and warm.thinking == []
    long = session(60, result=small, tool="Glob")
    batch = plan(long, anchors=(1,))  # a warm cache, and 58 thoughts after the anchor
    assert batch.reason == "cost" and len(batch.thinking) == 58
    assert batch.clearable_tokens >= batch.batch_threshold


def test_the_thinking_counts_toward_the_batch_that_pays_for_a_rewrite() -> None:
    plain = session(9)
    for message in plain:
        if message.role == "assistant":
            message.content = message.content[1:]
    without = plan(plain)
    with_thinking = plan(session(9))
    assert without.reason == "none"
    assert with_thinking.clearable_tokens > without.clearable_tokens


def test_clearing_applies_the_drop_and_records_it(tmp_path) -> None:
    class Log:  # the session's event records
        folder = tmp_path
        records: list[dict] = []

        def append_record(self, record: dict) -> None:
            self.records.append(record["event"])

    log = Log()
    events = log.records
    clearing = Clearing(CompactionServices(file_state=FileStateCache(), session=log))
    messages = session(8)
    result = plan(messages, last_response_at=None)
    outcome = clearing.apply(messages, result)
    kept = [
        m for m in outcome.messages if m.role == "assistant" and m.content[0]["type"] == "thinking"
    ]
    assert kept == [outcome.messages[-2]]
    assert outcome.messages[-2] is messages[-2]
    assert events[-1]["thinking_dropped"] == len(result.thinking)
    freed_thinking = thought_tokens(messages, result.thinking)
    assert outcome.tokens_freed >= freed_thinking
