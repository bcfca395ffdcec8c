"""The pairing rule's one home: the checks and the fixes the loop, compaction and resume share."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.core.messages import INTERRUPTED_TOOL_RESULT, Message, tool_result_block, user_text
from agent.core.pairing import (
    answers_for,
    close_dangling,
    dangling,
    fix_answer,
    pair_problems,
)
from agent.sessions.transcript import repair_conversation


def use(tool_id: str) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": "Read", "input": {}}


def text(value: str = "x") -> dict:
    return {"type": "text", "text": value}


def result(tool_id: str) -> dict:
    return tool_result_block(tool_id, f"out {tool_id}")


def test_a_good_answer_is_left_as_it_is() -> None:
    previous = Message("assistant", [use("a"), use("b")])
    message = Message("user", [result("a"), result("b"), text()])
    fix = fix_answer(previous, message)
    assert fix.message is message and not fix.changed


def test_orphans_and_duplicates_go_and_the_missing_are_answered_first() -> None:
    previous = Message("assistant", [use("a"), use("b")])
    message = Message("user", [text("note"), result("b"), result("b"), result("z")])
    fix = fix_answer(previous, message)
    assert fix.orphans == 2 and [u["id"] for u in fix.missing] == ["a"]
    assert fix.message is not None
    kinds = [(b["type"], b.get("tool_use_id")) for b in fix.message.content]
    assert kinds == [("tool_result", "a"), ("tool_result", "b"), ("text", None)]
    assert fix.message.content[0]["content"] == INTERRUPTED_TOOL_RESULT
    assert len(message.content) == 4  # the input is never edited


def test_results_after_text_are_moved_to_the_front() -> None:
    previous = Message("assistant", [use("a")])
    message = Message("user", [text("first"), result("a")])
    fix = fix_answer(previous, message)
    assert not fix.changed and fix.message is not None and fix.message is not message
    assert fix.message.content[0]["type"] == "tool_result"


def test_an_answer_with_nothing_left_is_dropped() -> None:
    assert fix_answer(user_text("no tools"), Message("user", [result("z")])).message is None


def test_answers_for_keeps_the_order_of_the_calls_and_fills_the_gaps() -> None:
    blocks = answers_for([use("a"), use("b")], {"b": result("b")}, "it broke")
    assert [(b["tool_use_id"], b.get("is_error", False)) for b in blocks] == [
        ("a", True),
        ("b", False),
    ]
    assert blocks[0]["content"] == "it broke"


def test_dangling_calls_are_closed_after_the_last_response_only() -> None:
    messages = [user_text("go"), Message("assistant", [use("a")]), Message("user", [result("a")])]
    assert dangling(messages) == [] and close_dangling(messages) is None
    messages.append(Message("assistant", [text(), use("b")]))
    closing = close_dangling(messages)
    assert closing is not None and closing.inserted and closing.index == 4
    assert pair_problems([*messages, closing.message]) == []


block = st.one_of(
    st.builds(text, st.sampled_from(["a", "b"])),
    st.builds(use, st.sampled_from(["t1", "t2", "t3"])),
    st.builds(result, st.sampled_from(["t1", "t2", "t3", "t9"])),
)
message = st.builds(
    lambda role, blocks: Message(role, blocks),
    st.sampled_from(["user", "assistant"]),
    st.lists(block, min_size=1, max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(message, min_size=1, max_size=12))
def test_a_resumed_transcript_keeps_the_rule_after_its_repair(messages) -> None:
    for m in messages:  # assistants never carry results, users never carry calls
        wrong = "tool_result" if m.role == "assistant" else "tool_use"
        m.content = [b for b in m.content if b["type"] != wrong] or [text()]
    repaired, _notes, _ops = repair_conversation(messages)
    # Reused ids are the request checker's to repair; the resume repair keeps the pairs.
    assert [p for p in pair_problems(repaired) if "used twice" not in p] == []
