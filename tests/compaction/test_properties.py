"""Property tests: no clearing and no compaction cut ever breaks the API's structural rules."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.core.invariants import find_violations
from agent.core.messages import user_text
from compaction.compactor import choose_pivot
from compaction.full import CompactionError
from compaction.markers import marker_for
from compaction.microcompact import MicrocompactConfig, apply_clearing, find_candidates
from compaction.tokens import estimate_block
from tests.compaction.test_grouping import conversations


@settings(max_examples=300, deadline=None)
@given(conversations(), st.integers(0, 5), st.integers(0, 3))
def test_clearing_any_candidates_keeps_every_pair(messages, keep_files, keep_others) -> None:
    config = MicrocompactConfig(
        keep_recent_files=keep_files, keep_recent_results=keep_others, min_result_tokens=0
    )
    candidates = find_candidates(messages, config, estimate_block)
    cleared = apply_clearing(messages, {c.tool_use_id: marker_for(c) for c in candidates})
    assert find_violations(cleared) == []
    assert [m.tool_uses() for m in cleared] == [m.tool_uses() for m in messages]
    assert len(cleared) == len(messages)


@settings(max_examples=300, deadline=None)
@given(conversations(), st.sampled_from(["up_to", "from"]), st.integers(1, 6))
def test_partial_compaction_cuts_are_always_valid(messages, partial, keep_rounds) -> None:
    try:
        pivot = choose_pivot(messages, partial, keep_rounds)
    except CompactionError:
        return  # too few rounds, or no safe point: refused, nothing cut
    assert pivot is not None and 0 < pivot < len(messages)
    summary = user_text("summary", kind="summary")
    new = [summary, *messages[pivot:]] if partial == "up_to" else [*messages[:pivot], summary]
    assert find_violations(new) == []
