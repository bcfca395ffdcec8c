"""Session notes: written in the background without blocking a turn, used at compaction, or not."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from agent.core.context_state import ContextLimits
from agent.core.events import CompactionFinished, Microcompacted
from agent.core.messages import Message, user_text
from compaction.microcompact import MicrocompactConfig
from compaction.notes import Notes, NotesPolicy, NotesStore
from compaction.notes_writer import NOTES_REQUEST_MARK, SessionNotes
from compaction.summary import SUMMARY_REQUEST_MARK
from tests.compaction.manager_harness import Setup, summary_reply
from tui.fake_api import text_reply, tool_reply

NOTES_TEXT = "1. Goal: read every module.\n3. Files: m00.py to m11.py hold FACT_n."


def is_notes(request: Any) -> bool:
    return NOTES_REQUEST_MARK in request.last_user_text()


def notes_reply(_request: Any) -> Any:
    return text_reply(f"<analysis>thinking</analysis><summary>{NOTES_TEXT}</summary>")


def without_cache_marks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_marks(v) for v in value]
    return value


def early_policy() -> NotesPolicy:
    """Updates start as soon as there is a conversation (the lead is the whole window)."""
    return NotesPolicy(min_lead_share=1.0, max_lead_share=1.0, needs_compaction=False)


class NeverDue(NotesPolicy):
    def due(self, **_: Any) -> bool:
        return False


def test_the_notes_request_is_a_summary_shaped_request() -> None:
    prompt = Path("compaction/prompts/notes.md").read_text()
    assert SUMMARY_REQUEST_MARK in prompt and NOTES_REQUEST_MARK in prompt
    assert "<summary>" in prompt and len(prompt) > 200  # how the referee tells one apart


def test_the_notes_file_round_trips_and_refuses_what_is_not_notes(tmp_path) -> None:
    store = NotesStore(tmp_path / "session")
    assert store.load() is None
    notes = Notes("the notes\nline two", 7, "uuid-7", 12_345, 1.5)
    assert store.save(notes) and store.load() == notes
    store.path.write_text("not notes at all\n")
    assert store.load() is None
    store.path.write_text('<!-- ccx session notes {"covers_index": "x"} -->\nbody\n')
    assert store.load() is None


def test_notes_find_their_message_by_uuid_or_say_it_is_gone() -> None:
    messages = [user_text(f"m{i}") for i in range(5)]
    notes = Notes("n", 2, messages[2].uuid, 100)
    assert notes.covered_end(messages) == 3
    assert notes.covered_end(messages[1:]) == 2  # rounds dropped before it: found by uuid
    assert notes.covered_end(messages[3:]) is None


def test_the_policy_waits_for_the_threshold_and_refreshes_only_after_growth() -> None:
    limits = ContextLimits(200_000, 64_000)  # auto-compact at 167,000
    policy = NotesPolicy()
    lead = policy.lead(limits, growth=4_000)
    assert lead == 6_000
    assert not policy.due(used=160_000, limits=limits, growth=4_000, uncovered=None)
    assert policy.due(used=161_000, limits=limits, growth=4_000, uncovered=None)
    # Notes in hand serve until what they leave uncovered nears the 40,000 keep ceiling.
    assert not policy.due(used=162_000, limits=limits, growth=4_000, uncovered=20_000)
    assert not policy.due(used=162_000, limits=limits, growth=4_000, uncovered=31_000)
    assert policy.due(used=162_000, limits=limits, growth=4_000, uncovered=32_000)
    assert policy.due(used=162_000, limits=limits, growth=30_000, uncovered=20_000)
    assert policy.lead(limits, growth=0) == limits.effective * 0.03
    assert policy.lead(limits, growth=1_000_000) == limits.effective * 0.10


async def test_an_update_runs_alongside_the_turn_and_never_blocks_it(api, tmp_path) -> None:
    release = threading.Event()

    def held_notes(request: Any) -> Any:
        release.wait(30)  # the turn must end while this request is still unanswered
        return notes_reply(request)

    notes = SessionNotes(NotesStore(tmp_path / "session"), policy=early_policy())
    setup = Setup(api, tmp_path, window=200_000, session_memory=notes)
    api.on(is_notes, held_notes)
    api.add(*setup.read_script(2), text_reply("done"))
    outcome = await setup.agent.submit("Read two modules.")
    assert outcome.result == "done"
    assert notes.updating and notes.store.load() is None  # still in flight after the turn
    release.set()
    await notes.settle()
    saved = notes.store.load()
    assert saved is not None and saved.text == NOTES_TEXT and notes.notes == saved
    (notes_request,) = [r for r in api.requests if is_notes(r)]
    # The conversation as the agent sent it, then the notes prompt: it reads the cached prefix.
    sent = [r for r in setup.main_requests() if not is_notes(r)]
    following = next(r for r in sent if len(r.messages) == len(notes_request.messages) - 1)
    assert notes_request.body["system"] == following.body["system"]
    assert notes_request.body["tools"] == following.body["tools"]
    prefix = without_cache_marks(notes_request.messages[:-1])
    assert prefix == without_cache_marks(following.messages[: len(prefix)])
    messages = list(setup.agent.conversation.messages)
    assert saved.covers_uuid == messages[saved.covers_index].uuid
    assert setup.agent.costs.by_purpose["notes"]["requests"] == 1
    assert setup.agent.costs.by_purpose["agent"]["requests"] == 3
    assert setup.agent.costs.requests == 4
    assert api.errors == []


async def test_a_failed_update_keeps_the_old_notes_and_the_session(api, tmp_path) -> None:
    store = NotesStore(tmp_path / "session")
    events: list[dict] = []
    notes = SessionNotes(store, events.append, policy=early_policy())
    setup = Setup(api, tmp_path, window=200_000, session_memory=notes)
    api.on(is_notes, lambda r: tool_reply(("Read", {"file_path": "/etc/hostname"})))
    api.add(*setup.read_script(1), text_reply("done"))
    assert (await setup.agent.submit("Read one module.")).result == "done"
    await notes.settle()
    assert notes.notes is None and store.load() is None and notes.failures == 1
    assert [e["type"] for e in events] == ["notes_failed"]


async def test_compaction_uses_the_notes_and_keeps_recent_messages(api, tmp_path) -> None:
    events: list[dict] = []
    notes = SessionNotes(NotesStore(tmp_path / "session"), events.append)
    setup = Setup(api, tmp_path, window=40_000, session_memory=notes)
    setup.manager.config = MicrocompactConfig(
        keep_recent_files=100, read_budget=1.0
    )  # no clearing: compaction
    api.on(is_notes, notes_reply)
    api.on(lambda r: SUMMARY_REQUEST_MARK in r.last_user_text(), summary_reply)
    api.add(*setup.read_script(12), text_reply("done"))
    outcome = await setup.agent.submit("Read every module, twice.")
    assert outcome.result == "done" and api.errors == []
    records = [e.record for e in setup.events if isinstance(e, CompactionFinished)]
    assert records and records[0].method == "session_memory"
    first = records[0]
    assert first.messages_kept > 0 and first.attempts == 0 and first.usage == {}
    # No summary call was made for it: every summary-shaped request was a notes update.
    summaries = [r for r in api.requests if SUMMARY_REQUEST_MARK in r.last_user_text()]
    assert all(is_notes(r) for r in summaries[: notes.updates])
    after = api.requests[-1].all_text()
    assert NOTES_TEXT in after and "Read every module, twice." in after
    assert not [e for e in events if e["type"] == "notes_failed"]


async def test_stale_or_missing_notes_fall_back_to_a_full_summary(api, tmp_path) -> None:
    store = NotesStore(tmp_path / "session")
    store.save(Notes("old notes of another conversation", 3, "no-such-uuid", 1_000))
    events: list[dict] = []
    # Updates never start: the only notes are the stale ones on disk.
    notes = SessionNotes(store, events.append, policy=NeverDue())
    setup = Setup(api, tmp_path, window=40_000, session_memory=notes)
    setup.manager.config = MicrocompactConfig(keep_recent_files=100, read_budget=1.0)
    api.on(lambda r: SUMMARY_REQUEST_MARK in r.last_user_text(), summary_reply)
    api.add(*setup.read_script(12), text_reply("done"))
    assert (await setup.agent.submit("Read every module.")).result == "done"
    records = [e.record for e in setup.events if isinstance(e, CompactionFinished)]
    assert records and {r.method for r in records} == {"summary"}
    reasons = {e["reason"] for e in events if e["type"] == "session_memory_skipped"}
    assert any(reason.startswith("the notes no longer match") for reason in reasons)
    assert not [r for r in api.requests if is_notes(r)]
    assert notes.plan([], setup.manager.limits(setup.agent)) is None
    notes.notes = None
    assert (
        notes.plan(list(setup.agent.conversation.messages), ContextLimits(40_000, 64_000)) is None
    )
    assert "no notes" in {e["reason"] for e in events if e["type"] == "session_memory_skipped"}


async def test_a_cost_model_may_ask_for_notes_and_a_session_memory_compaction(
    api, tmp_path
) -> None:
    notes = SessionNotes(NotesStore(tmp_path / "session"), policy=NeverDue())
    setup = Setup(api, tmp_path, window=200_000, session_memory=notes)
    api.on(is_notes, notes_reply)
    api.add(*setup.read_script(6), text_reply("done"))
    await setup.agent.submit("Read six modules.")
    limits = setup.manager.limits(setup.agent)
    assert notes.notes is None and not await setup.manager.session_memory_compact(setup.agent)
    assert notes.start_update(setup.agent, 10_000, limits)
    assert not notes.start_update(setup.agent, 10_000, limits)  # one at a time
    await notes.settle()
    messages = list(setup.agent.conversation.messages)
    planned = notes.plan(messages, limits)
    assert planned is not None and planned.summary == NOTES_TEXT
    assert planned.keep_from == 0  # the whole short conversation fits in the 10K minimum
    assert await setup.manager.session_memory_compact(setup.agent)
    finished = [e.record for e in setup.events if isinstance(e, CompactionFinished)]
    assert [r.method for r in finished] == ["session_memory"]
    assert setup.agent.conversation.messages[0].kind == "summary"


def test_notes_saved_by_one_run_serve_the_resumed_session(tmp_path) -> None:
    messages = [user_text("the task")]
    for index in range(30):
        messages.append(Message("assistant", [{"type": "text", "text": f"step {index}"}]))
        messages.append(user_text(f"go on {index}"))
    store = NotesStore(tmp_path / "session")
    assert store.save(Notes("what happened", 40, messages[40].uuid, 5_000))
    resumed = SessionNotes(NotesStore(tmp_path / "session"))  # a new process, the same folder
    planned = resumed.plan(messages, ContextLimits(200_000, 64_000))
    assert planned is not None and planned.summary == "what happened"
    assert planned.keep_from == 0  # so short a conversation is kept whole


async def test_no_notes_update_while_clearing_holds_the_context(api, tmp_path) -> None:
    # The same session as above with clearing on: old reads are cleared near the threshold,
    # no compaction comes, so a notes update (a summary's price) would never be used. The lead
    # is widened (9K of the 22.5K threshold) so that updates are otherwise due before clearing.
    policy = NotesPolicy(min_lead_share=0.3, max_lead_share=0.3)
    notes = SessionNotes(NotesStore(tmp_path / "session"), policy=policy)
    setup = Setup(api, tmp_path, window=40_000, session_memory=notes)
    api.on(is_notes, notes_reply)
    api.on(lambda r: SUMMARY_REQUEST_MARK in r.last_user_text(), summary_reply)
    api.add(*setup.read_script(12), text_reply("done"))
    outcome = await setup.agent.submit("Read every module, twice.")
    assert outcome.result == "done" and api.errors == []
    assert [e for e in setup.events if isinstance(e, Microcompacted)]
    assert not [e for e in setup.events if isinstance(e, CompactionFinished)]
    assert notes.updates == 0 and not [r for r in api.requests if is_notes(r)]
