"""The request checker and its repair, including on random conversations."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.core.invariants import InvariantError, enforce, find_violations, repair
from agent.core.messages import Message, tool_result_block


def use(tool_id: str) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": "Read", "input": {}}


def text(value: str = "x") -> dict:
    return {"type": "text", "text": value}


def test_a_valid_conversation_passes() -> None:
    messages = [
        Message("user", [text()]),
        Message("assistant", [text(), use("a")]),
        Message("user", [tool_result_block("a", "ok"), text("note")]),
        Message("assistant", [text()]),
    ]
    assert find_violations(messages) == []
    assert enforce(messages) is messages


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([Message("assistant", [text()])], "first message"),
        ([Message("user", [text()]), Message("assistant", [use("a")])], "without a tool_result"),
        (
            [
                Message("user", [text()]),
                Message("assistant", [use("a")]),
                Message("user", [text()]),
            ],
            "without a tool_result",
        ),
        ([Message("user", [tool_result_block("z", "x")])], "unknown tool_use"),
        (
            [
                Message("user", [text()]),
                Message("assistant", [use("a")]),
                Message("user", [text(), tool_result_block("a", "ok")]),
            ],
            "must come before",
        ),
    ],
)
def test_violations_are_found_and_strict_mode_raises(messages, problem) -> None:
    assert any(problem in p for p in find_violations(messages))
    with pytest.raises(InvariantError):
        enforce(messages)


def test_production_mode_repairs(monkeypatch) -> None:
    monkeypatch.delenv("CCX_STRICT_INVARIANTS")
    messages = [Message("user", [text()]), Message("assistant", [use("a")])]
    fixed = enforce(messages)
    assert find_violations(fixed) == []
    assert fixed[-1].tool_results()[0]["tool_use_id"] == "a"


block = st.one_of(
    st.builds(text, st.sampled_from(["a", "b"])),
    st.builds(use, st.sampled_from(["t1", "t2", "t3"])),
    st.builds(lambda i: tool_result_block(i, "r"), st.sampled_from(["t1", "t2", "t3", "t9"])),
)
message = st.builds(
    lambda role, blocks: Message(role, blocks),
    st.sampled_from(["user", "assistant"]),
    st.lists(block, min_size=1, max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(message, min_size=1, max_size=12))
def test_repair_always_yields_a_valid_conversation(messages) -> None:
    # Assistant turns never carry tool_result blocks and users never carry tool_use.
    for m in messages:
        wrong = "tool_result" if m.role == "assistant" else "tool_use"
        m.content = [b for b in m.content if b["type"] != wrong] or [text()]
    fixed = repair(messages)
    if fixed:
        assert find_violations(fixed) == []
