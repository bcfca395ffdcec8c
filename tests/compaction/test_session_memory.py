"""The keep-index of session-memory compaction: every cut valid, bounds held, boundaries respected."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.core.context_state import ContextLimits
from agent.core.invariants import find_violations
from agent.core.messages import Message, user_text
from compaction.grouping import adjust_start_index
from compaction.session_memory import (
    MAX_KEEP_TOKENS,
    MIN_KEEP_TOKENS,
    KeepBounds,
    compaction_floor,
    has_text,
    keep_start,
)
from tests.compaction.test_grouping import assistant, conversations, results, text, use


def tokens_of(message: Message) -> float:
    return 100.0  # every message the same size, so the bounds read as message counts


def chain(rounds: int) -> list[Message]:
    """A prompt, then ``rounds`` rounds of: assistant text + tool_use, its result."""
    messages = [user_text("the task")]
    for index in range(rounds):
        messages.append(assistant(text(f"step {index}"), use(f"t{index}"), api_id=f"m{index}"))
        messages.append(results(f"t{index}"))
    return messages


def test_keeps_from_the_first_uncovered_message_when_that_meets_the_minimums() -> None:
    messages = chain(20)  # 41 messages
    bounds = KeepBounds(min_tokens=500, min_text=2, max_tokens=3_000)
    # Notes cover messages[:31]: the ten after hold 1,000 tokens and 5 texts.
    assert keep_start(messages, 31, bounds, tokens=tokens_of) == 31


def test_extends_backwards_to_the_minimums_at_a_valid_cut() -> None:
    messages = chain(20)
    bounds = KeepBounds(min_tokens=1_000, min_text=2, max_tokens=3_000)
    start = keep_start(messages, 39, bounds, tokens=tokens_of)  # only 2 uncovered messages
    assert start == 31  # 10 messages = 1,000 tokens, and an assistant message starts the cut
    assert adjust_start_index(messages, start) == start


def test_never_more_than_the_maximum_and_never_across_an_earlier_compaction() -> None:
    messages = chain(20)
    bounds = KeepBounds(min_tokens=10_000, min_text=50, max_tokens=1_200)
    start = keep_start(messages, 39, bounds, tokens=tokens_of)
    assert start is not None and (len(messages) - start) * 100 <= 1_200
    compacted = [user_text("notes", kind="summary"), *messages[30:]]
    compacted.insert(3, Message(role="user", content=[text("file")], kind="attachment"))
    floor = compaction_floor(compacted)
    assert floor == 4
    start = keep_start(compacted, len(compacted) - 2, bounds, tokens=tokens_of)
    assert start is not None and start >= floor


def test_notes_that_leave_too_much_uncovered_are_refused() -> None:
    messages = chain(20)
    bounds = KeepBounds(min_tokens=100, min_text=1, max_tokens=500)
    assert keep_start(messages, 5, bounds, tokens=tokens_of) is None  # 36 uncovered messages


def test_the_bounds_shrink_with_a_small_window_only() -> None:
    big = KeepBounds.for_threshold(ContextLimits(200_000, 64_000).auto_compact)
    assert (big.min_tokens, big.min_text, big.max_tokens) == (MIN_KEEP_TOKENS, 5, MAX_KEEP_TOKENS)
    small = KeepBounds.for_threshold(ContextLimits(60_000, 64_000).auto_compact)
    assert MIN_KEEP_TOKENS <= small.max_tokens < MAX_KEEP_TOKENS
    assert KeepBounds.for_threshold(5_000).max_tokens == MIN_KEEP_TOKENS


@st.composite
def compacted_conversations(draw: st.DrawFn) -> list[Message]:
    """A conversation that may begin with an earlier compaction's messages."""
    messages = draw(conversations())
    if draw(st.booleans()):
        kept = draw(conversations())
        attachment = Message(role="user", content=[text("restored")], kind="attachment")
        messages = [user_text("earlier notes", kind="summary"), *kept[1:], attachment, *messages]
    return messages


@settings(max_examples=400, deadline=None)
@given(
    compacted_conversations(),
    st.data(),
    st.integers(0, 400),
    st.integers(0, 6),
    st.integers(0, 800),
)
def test_every_keep_index_is_a_valid_cut_within_bounds(
    messages, data, min_tokens, min_text, max_extra
) -> None:
    covered_end = data.draw(st.integers(0, len(messages)))
    bounds = KeepBounds(min_tokens, min_text, min_tokens + max_extra)

    def size(message: Message) -> float:
        return len(str(message.content)) / 4

    start = keep_start(messages, covered_end, bounds, tokens=size)
    floor = compaction_floor(messages)
    uncovered = sum(size(m) for m in messages[max(covered_end, floor) :])
    if start is None:
        # Refused only when what the notes leave uncovered is over the ceiling, or no cut fits.
        fitting = [
            i
            for i in range(floor, max(covered_end, floor) + 1)
            if adjust_start_index(messages, i) == i
            and sum(size(m) for m in messages[i:]) <= bounds.max_tokens
        ]
        assert uncovered > bounds.max_tokens or not fitting
        return
    kept = messages[start:]
    assert floor <= start <= max(covered_end, floor)  # nothing uncovered is dropped
    assert adjust_start_index(messages, start) == start  # no pair, no response split
    assert find_violations([user_text("notes", kind="summary"), *kept]) == []
    kept_tokens = sum(size(m) for m in kept)
    assert kept_tokens <= bounds.max_tokens or kept_tokens == uncovered
    texts = sum(1 for m in kept if has_text(m))
    if start > floor and (kept_tokens < bounds.min_tokens or texts < bounds.min_text):
        # Short of the minimums only when the next valid cut back is off-limits.
        previous = adjust_start_index(messages, start - 1)
        extended = kept_tokens + sum(size(m) for m in messages[previous:start])
        assert previous < floor or extended > bounds.max_tokens
