"""API rounds, safe cut points and dropping the oldest rounds: unit cases and properties."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.core.invariants import find_violations
from agent.core.messages import Message, tool_result_block, user_text
from compaction.grouping import (
    DROPPED_MARKER,
    adjust_start_index,
    drop_oldest_groups,
    group_by_api_round,
    messages_tokens_from,
)
from compaction.tokens import estimate_message


def assistant(*blocks: dict, api_id: str | None) -> Message:
    return Message(role="assistant", content=list(blocks), kind="response", api_id=api_id)


def use(tool_id: str, name: str = "Read") -> dict:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {"file_path": "/a"}}


def results(*ids: str) -> Message:
    return Message(
        role="user", content=[tool_result_block(i, "ok") for i in ids], kind="tool_result"
    )


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def thinking() -> dict:
    return {"type": "thinking", "thinking": "hmm", "signature": "sig"}


def sample() -> list[Message]:
    return [
        user_text("fix the bug"),  # 0
        assistant(thinking(), api_id="m1"),  # 1
        assistant(text("looking"), use("t1"), api_id="m1"),  # 2
        results("t1"),  # 3
        assistant(use("t2"), use("t3"), api_id="m2"),  # 4
        results("t2", "t3"),  # 5
        assistant(text("done"), api_id="m3"),  # 6
        user_text("thanks, now the docs"),  # 7
        assistant(text("ok"), api_id=None),  # 8
    ]


def test_grouping_by_round() -> None:
    messages = sample()
    groups = group_by_api_round(messages)
    assert [[messages.index(m) for m in g] for g in groups] == [[0], [1, 2, 3], [4, 5], [6, 7], [8]]


def test_assistant_messages_without_id_each_start_a_round() -> None:
    messages = [
        user_text("a"),
        assistant(text("x"), api_id=None),
        assistant(text("y"), api_id=None),
    ]
    assert len(group_by_api_round(messages)) == 3


def test_grouping_empty() -> None:
    assert group_by_api_round([]) == []


def test_adjust_start_index_unit_cases() -> None:
    messages = sample()
    assert adjust_start_index(messages, 0) == 0
    assert adjust_start_index(messages, 1) == 1
    assert adjust_start_index(messages, 2) == 1  # inside response m1
    assert adjust_start_index(messages, 3) == 1  # results of t1 need message 2, which needs 1
    assert adjust_start_index(messages, 4) == 4
    assert adjust_start_index(messages, 5) == 4
    assert adjust_start_index(messages, 7) == 7
    assert adjust_start_index(messages, 9) == 9
    assert adjust_start_index(messages, 99) == 9
    assert adjust_start_index(messages, -3) == 0


def test_adjust_start_index_walks_to_zero_when_it_must() -> None:
    messages = [user_text("a"), assistant(use("t1"), api_id="m1"), results("t1")]
    assert adjust_start_index(messages[1:], 1) == 0


def test_drop_oldest_groups_default_share() -> None:
    messages = sample()
    kept = drop_oldest_groups(messages, None)
    assert kept is not None
    assert kept[0].kind == "meta" and kept[0].text() == DROPPED_MARKER
    assert kept[1:] == messages[1:]  # 5 rounds: 20% is one round, the prompt
    assert find_violations(kept) == []


def test_drop_oldest_groups_covers_the_gap() -> None:
    messages = sample()
    first_round = estimate_message(messages[0]) * 4 / 3
    first_two = sum(estimate_message(m) for m in messages[:4]) * 4 / 3
    gap = int(first_two) - 1
    assert first_round < gap
    kept = drop_oldest_groups(messages, gap)
    assert kept is not None and kept[1:] == messages[4:]
    kept = drop_oldest_groups(messages, 10**9)
    assert kept is not None and kept[1:] == messages[8:]  # always keeps one round
    assert find_violations(kept) == []


def test_drop_oldest_groups_needs_two_rounds() -> None:
    assert drop_oldest_groups([user_text("a")], None) is None
    assert drop_oldest_groups([], 100) is None


def test_drop_uses_the_given_estimate() -> None:
    messages = sample()
    kept = drop_oldest_groups(messages, 1, estimate=lambda m: 1_000.0)
    assert kept is not None and kept[1:] == messages[1:]


def test_messages_tokens_from() -> None:
    messages = sample()
    assert messages_tokens_from(messages, 7) == sum(estimate_message(m) for m in messages[7:])
    assert messages_tokens_from(messages, 9) == 0


# -- properties over random valid conversations -----------------------------------------


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    messages = [user_text("start")]
    next_id = 0
    for round_index in range(draw(st.integers(1, 10))):
        api_id = None if draw(st.integers(0, 9)) == 0 else f"msg_{round_index}"
        uses = []
        for _ in range(draw(st.integers(0, 3))):
            next_id += 1
            uses.append(use(f"toolu_{next_id}", draw(st.sampled_from(["Read", "Bash", "Grep"]))))
        pieces: list[list[dict]] = []
        if draw(st.booleans()):
            pieces.append([thinking()])
        if draw(st.booleans()) or not uses:
            pieces.append([text("words " * draw(st.integers(0, 20)))])
        if uses:
            pieces.append(uses)  # tool_use blocks come last, the result follows them
        if api_id is None or draw(st.booleans()):
            pieces = [[block for piece in pieces for block in piece]]  # one message
        messages.extend(assistant(*piece, api_id=api_id) for piece in pieces)
        if uses:
            answers = [tool_result_block(u["id"], "out " * draw(st.integers(0, 50))) for u in uses]
            answers = draw(st.permutations(answers))
            extra = [text("note")] if draw(st.booleans()) else []
            messages.append(Message(role="user", content=[*answers, *extra], kind="tool_result"))
        if not uses or draw(st.integers(0, 3)) == 0:
            messages.append(user_text("next"))
    assert find_violations(messages) == []
    return messages


def with_marker(tail: list[Message]) -> list[Message]:
    return [user_text("marker", kind="meta"), *tail] if tail[0].role == "assistant" else tail


def splits_response(messages: list[Message], index: int) -> bool:
    return (
        0 < index < len(messages)
        and messages[index].role == messages[index - 1].role == "assistant"
        and messages[index].api_id is not None
        and messages[index].api_id == messages[index - 1].api_id
    )


def tail_ok(messages: list[Message], index: int) -> bool:
    return (
        not splits_response(messages, index)
        and find_violations(with_marker(messages[index:])) == []
    )


@settings(max_examples=400, deadline=None)
@given(conversations())
def test_adjusted_tails_are_valid_and_as_short_as_possible(messages: list[Message]) -> None:
    for start in range(len(messages)):
        index = adjust_start_index(messages, start)
        assert 0 <= index <= start
        assert tail_ok(messages, index)
        assert not any(tail_ok(messages, j) for j in range(index + 1, start + 1))


@settings(max_examples=400, deadline=None)
@given(conversations())
def test_grouping_partitions_in_order(messages: list[Message]) -> None:
    groups = group_by_api_round(messages)
    assert [m for g in groups for m in g] == messages
    assert all(g for g in groups)
    assert all(g[0].role == "assistant" for g in groups[1:])
    for g in groups:  # one response never spans two rounds
        ids = [m.api_id for m in g if m.role == "assistant"]
        assert len(set(ids)) <= 1
    for g in groups[1:]:
        start = messages.index(g[0])
        assert adjust_start_index(messages, start) == start  # round starts are safe cuts


@settings(max_examples=400, deadline=None)
@given(conversations(), st.one_of(st.none(), st.integers(-10, 5_000)))
def test_dropped_conversations_stay_valid(messages: list[Message], gap: int | None) -> None:
    kept = drop_oldest_groups(messages, gap)
    groups = group_by_api_round(messages)
    if len(groups) < 2:
        assert kept is None
        return
    assert kept is not None
    assert find_violations(kept) == []
    body = kept[1:] if kept[0].text() == DROPPED_MARKER else kept
    assert 0 < len(body) < len(messages)
    assert body == messages[len(messages) - len(body) :]
    assert body[0] is next(g[0] for g in groups if g[0] is body[0])  # cut at a round
