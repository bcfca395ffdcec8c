"""The one cost model: wait, clear, session memory or a full summary, priced the same way."""

from __future__ import annotations

import pytest

from compaction.cost_model import (
    CACHE_READ,
    CACHE_WRITE,
    OUTPUT,
    SUMMARY_TOKENS,
    ClearOption,
    CompactOption,
    Situation,
    choose,
    compact_cost,
    compaction_follows,
    economic_batch,
)


def situation(used: float = 40_000, **kw) -> Situation:
    defaults = {"threshold": 87_000, "growth": 1_000, "clearable_growth": 800, "cached": 6_000}
    return Situation(used=used, **{**defaults, **kw})


def test_below_the_threshold_the_batch_rule_decides_between_waiting_and_clearing() -> None:
    rewrite = 20_000
    batch = economic_batch(rewrite, 800)
    assert batch == pytest.approx((2 * 1.15 / 0.1 * rewrite * 800) ** 0.5)
    assert choose(situation(), ClearOption(batch * 0.9, rewrite)).action == "wait"
    cleared = choose(situation(), ClearOption(batch * 1.1, rewrite))
    assert cleared.action == "clear" and cleared.batch == pytest.approx(batch)
    # A compaction is never chosen before the context is due, however cheap it looks.
    memory = CompactOption("session_memory", after=10_000)
    assert choose(situation(), None, memory).action == "wait"


def test_a_cold_cache_clears_any_batch() -> None:
    cold = situation(cache_cold=True)
    assert choose(cold, ClearOption(500, 30_000)).action == "clear"


def test_when_due_the_cheapest_option_that_fits_wins() -> None:
    due = situation(used=86_000)
    assert due.due
    enough = ClearOption(freed=40_000, rewrite=30_000)
    memory = CompactOption("session_memory", after=30_000)
    summary = CompactOption("summary", after=25_000, summary_tokens=SUMMARY_TOKENS)
    # Clearing 40K: 1.15 x 30K now + 0.1 x 46K x 10; session memory: 1.25 x 24K + 0.1 x 30K x 10.
    assert choose(due, enough, memory, summary).action == "session_memory"
    cheap_clear = ClearOption(freed=40_000, rewrite=2_000)
    assert choose(due, cheap_clear, memory, summary).action == "clear"
    # A clear that leaves the context over the threshold does not fit; the summary does.
    short = ClearOption(freed=1_000, rewrite=2_000)
    assert choose(due, short, None, summary).action == "summary"
    # Waiting is no option once due, even when nothing fits.
    stuck = choose(due, short)
    assert stuck.action == "clear" and not stuck.fits


def test_a_summary_pays_its_output_and_reads_the_whole_conversation() -> None:
    due = situation(used=86_000, horizon=10)
    summary = CompactOption("summary", after=25_000, summary_tokens=4_000)
    expected = (
        CACHE_READ * 86_000
        + OUTPUT * 4_000
        + CACHE_WRITE * (25_000 - 6_000)
        + CACHE_READ * 25_000 * 10
    )
    assert compact_cost(due, summary) == pytest.approx(expected)
    memory = CompactOption("session_memory", after=25_000)
    assert compact_cost(due, memory) == pytest.approx(
        expected - CACHE_READ * 86_000 - OUTPUT * 4_000
    )


def test_without_a_threshold_nothing_is_ever_due() -> None:
    off = situation(used=190_000, threshold=None)
    assert not off.due
    assert choose(off, ClearOption(100, 50_000)).action == "wait"


def test_notes_are_worth_paying_for_only_when_clearing_cannot_hold_the_threshold() -> None:
    # 84K used of an 87K threshold, 1,000 tokens a request of which 800 become clearable.
    near = situation(84_000)
    # 20K clearable now: after clearing, 64K grows by 200 a request, 66K in ten: no compaction.
    assert not compaction_follows(near, clearable_now=20_000)
    # Nothing left to clear: 84K + 10 x 200 + 2 requests of growth reaches the threshold.
    assert compaction_follows(near, clearable_now=0)
    # Little ever becomes clearable (200 of 1,000 a request): 3K cleared now does not hold it.
    assert compaction_follows(situation(84_000, clearable_growth=200), clearable_now=3_000)
    assert not compaction_follows(situation(84_000, threshold=None), clearable_now=0)
