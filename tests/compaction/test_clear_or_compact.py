"""Before a warm-cache clear, the cost model may choose a session-memory compaction instead."""

from __future__ import annotations

import pytest

from agent.core.events import CompactionFinished
from compaction.clear_or_compact import weigh
from compaction.cost_model import (
    CACHE_READ,
    MIN_HORIZON,
    OUTPUT,
    SUMMARY_TOKENS,
    ClearOption,
    CompactOption,
    Situation,
    choose,
    compact_cost,
    expected_horizon,
)
from compaction.microcompact import ClearPlan, MicrocompactConfig, find_candidates
from compaction.notes import NotesStore
from compaction.notes_writer import SessionNotes
from compaction.result_index import Candidate
from compaction.tokens import estimate_block
from tests.compaction.manager_harness import Setup
from tests.compaction.test_notes import NeverDue, is_notes, notes_reply
from tui.fake_api import text_reply, tool_reply


def situation(used: float = 60_000, horizon: float = MIN_HORIZON) -> Situation:
    return Situation(
        used=used,
        threshold=87_000,
        growth=1_000,
        clearable_growth=500,
        cached=6_000,
        horizon=horizon,
    )


def test_the_horizon_is_half_the_requests_made_at_least_ten() -> None:
    assert expected_horizon(0) == MIN_HORIZON == 10
    assert expected_horizon(15) == MIN_HORIZON
    assert expected_horizon(180) == 90


def test_ahead_of_the_threshold_session_memory_is_weighed_only_against_a_clear_that_pays() -> None:
    clear = ClearOption(freed=20_000, rewrite=20_000)  # S* = sqrt(23 x 20K x 500) = 15.2K
    memory = CompactOption("session_memory", after=22_000)
    long = situation(horizon=90)
    # Clear: 1.15 x 20K + 0.1 x 40K x 90 = 383K; memory: 1.25 x 16K + 0.1 x 22K x 90 = 218K.
    assert choose(long, clear, memory).action == "session_memory"
    # Over ten requests the clear is cheaper: 63K against 42K + 20K... + notes to write.
    fresh = CompactOption("session_memory", after=22_000, summary_tokens=SUMMARY_TOKENS)
    assert choose(situation(), clear, fresh).action == "clear"
    # A batch too small to clear is a wait, and then no compaction is weighed at all.
    assert choose(long, ClearOption(5_000, 20_000), memory).action == "wait"


def test_notes_still_to_write_pay_their_read_and_output() -> None:
    long = situation(horizon=90)
    fresh = CompactOption("session_memory", after=22_000, summary_tokens=SUMMARY_TOKENS)
    ready = CompactOption("session_memory", after=22_000)
    extra = compact_cost(long, fresh) - compact_cost(long, ready)
    assert extra == pytest.approx(CACHE_READ * 60_000 + OUTPUT * SUMMARY_TOKENS)


def test_weigh_says_clear_compact_or_write_the_notes_first() -> None:
    assert weigh(situation(horizon=90), ClearPlan("cost", rewrite_tokens=20_000), []).step == (
        "clear"
    )
    old = [Candidate(f"toolu_{i}", "Read", {}, 2 * i, 5_000) for i in range(4)]
    plan = ClearPlan("cost", clear=old, clearable_tokens=20_000, rewrite_tokens=20_000)
    ready = CompactOption("session_memory", after=30_000)
    fresh = CompactOption("session_memory", after=22_000, summary_tokens=SUMMARY_TOKENS)
    long = situation(horizon=90)
    assert weigh(long, plan, [(ready, False)]).step == "compact"
    # Fresh notes leave 8K less for 90 requests (72K), more than the update costs (26K).
    choice = weigh(long, plan, [(ready, False), (fresh, True)])
    assert choice.step == "update" and choice.after == 22_000
    assert weigh(situation(), plan, [(fresh, True)]).step == "clear"  # over ten requests


async def test_a_long_session_writes_notes_instead_of_clearing_then_compacts_on_them(
    api, tmp_path
) -> None:
    notes = SessionNotes(NotesStore(tmp_path / "session"), policy=NeverDue())
    setup = Setup(api, tmp_path, window=200_000, session_memory=notes)
    api.on(is_notes, notes_reply)
    # What clearing cannot remove piles up: the model's texts beside thirty small calls.
    thoughts = "Checked how this part sets its value; it is constant here. " * 40
    steps = [tool_reply(("Bash", {"command": "true"}), text=thoughts) for _ in range(30)]
    steps += setup.read_script(8)
    api.add(*steps, text_reply("done"))
    await setup.agent.submit("Look around, then read eight modules.")
    manager, agent = setup.manager, setup.agent
    messages = list(agent.conversation.messages)
    old = find_candidates(messages, MicrocompactConfig(), estimate_block, window=200_000)
    assert len(old) == 3  # the reads before the five latest
    plan = ClearPlan("cost", clear=old, clearable_tokens=sum(c.tokens for c in old))
    plan.rewrite_tokens = 1_000

    manager.requests = 0  # a young session: ten requests ahead, clearing is cheaper
    assert not await manager.compact_instead_of_clearing(agent, plan)
    assert not [r for r in api.requests if is_notes(r)]

    manager.requests = 400  # a long one: compacting pays, and the notes come first
    assert await manager.compact_instead_of_clearing(agent, plan)
    assert manager.early_update
    assert agent.conversation.messages == messages  # nothing cleared or replaced yet
    await notes.settle()
    assert len([r for r in api.requests if is_notes(r)]) == 1
    assert await manager.compact_instead_of_clearing(agent, plan)
    finished = [e.record for e in setup.events if isinstance(e, CompactionFinished)]
    assert [r.method for r in finished] == ["session_memory"]
    assert agent.conversation.messages[0].kind == "summary"
    assert not manager.early_update
