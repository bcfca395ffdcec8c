"""An interrupt during a compaction stops it at once and leaves the conversation as it was:
whether the compaction waits on a notes update in flight or on its own summary request."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from agent.core.events import CompactionFinished, CompactionStarted
from agent.core.invariants import find_violations
from agent.core.messages import INTERRUPTED_BY_USER
from compaction.microcompact import MicrocompactConfig
from compaction.notes import NotesPolicy, NotesStore
from compaction.notes_writer import NOTES_REQUEST_MARK, SessionNotes
from compaction.summary import SUMMARY_REQUEST_MARK
from tests.compaction.manager_harness import Setup, summary_reply
from tui.fake_api import FakeApi, text_reply


def is_notes(request: Any) -> bool:
    return NOTES_REQUEST_MARK in request.last_user_text()


def is_summary(request: Any) -> bool:
    return SUMMARY_REQUEST_MARK in request.last_user_text() and not is_notes(request)


class Held:
    """A responder that keeps its request open until released (or 30 s)."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.arrived = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: Any) -> Any:
        self.arrived.set()
        self.release.wait(30)
        return self.reply(request)


class WatchedNotes(SessionNotes):
    """Session notes that say when a compaction starts waiting for their update."""

    waited = False

    async def settle(self) -> None:
        self.waited = self.updating
        await super().settle()


def notes_reply(_request: Any) -> Any:
    return text_reply("<summary>1. Goal: read every module.</summary>")


async def interrupt_when(waiting: Any, task: asyncio.Task[Any]) -> float:
    """Cancel ``task`` once ``waiting()``; how long the task took to end after that."""
    deadline = time.monotonic() + 20
    while not waiting():
        assert not task.done() and time.monotonic() < deadline, "the compaction never waited"
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    started = time.perf_counter()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return time.perf_counter() - started


@pytest.mark.parametrize("waiting_on", ["notes", "summary"])
async def test_an_interrupt_stops_the_compaction_and_keeps_the_conversation(
    api: FakeApi, tmp_path: Any, waiting_on: str
) -> None:
    # With notes, their update starts at once and is still running when the compaction
    # comes (it waits for it); without, the compaction makes its own summary request.
    early = NotesPolicy(min_lead_share=1.0, max_lead_share=1.0, needs_compaction=False)
    notes = WatchedNotes(NotesStore(tmp_path / "session"), policy=early)
    memory = notes if waiting_on == "notes" else None
    setup = Setup(api, tmp_path, window=40_000, session_memory=memory)
    setup.manager.config = MicrocompactConfig(keep_recent_files=100, read_budget=1.0)
    held = Held(notes_reply if waiting_on == "notes" else summary_reply)
    api.on(is_notes if waiting_on == "notes" else is_summary, held)
    api.add(*setup.read_script(12), text_reply("done"))
    task = asyncio.ensure_future(setup.agent.submit("Read every module."))
    try:
        if waiting_on == "notes":  # the compaction waits for the update held open
            took = await interrupt_when(lambda: notes.waited, task)
        else:  # the compaction's own summary request is held open
            took = await interrupt_when(
                lambda: (
                    held.arrived.is_set()
                    and any(isinstance(e, CompactionStarted) for e in setup.events)
                ),
                task,
            )
        sent = len(api.requests)
        await asyncio.sleep(0.3)
    finally:
        held.release.set()
    assert took < 1.0
    assert len(api.requests) == sent  # nothing more went out
    assert not [e for e in setup.events if isinstance(e, CompactionFinished)]
    assert not setup.manager.compactor.running and setup.manager.failures == 0
    messages = list(setup.agent.conversation.messages)
    assert messages[0].text() == "Read every module."
    assert not [m for m in messages if m.kind in ("summary", "attachment")]
    assert INTERRUPTED_BY_USER in messages[-1].text()
    assert find_violations(messages) == []
    if waiting_on == "notes":
        assert notes.updating  # the update goes on; the session's close ends it
    await notes.aclose()


async def test_settle_lets_the_callers_interrupt_through_and_outlives_a_cancelled_update(
    api: FakeApi, tmp_path: Any
) -> None:
    early = NotesPolicy(min_lead_share=1.0, max_lead_share=1.0, needs_compaction=False)
    notes = SessionNotes(NotesStore(tmp_path / "session"), policy=early)
    setup = Setup(api, tmp_path, window=200_000, session_memory=notes)
    held = Held(notes_reply)
    api.on(is_notes, held)
    api.add(*setup.read_script(1), text_reply("done"))
    try:
        assert (await setup.agent.submit("Read one module.")).result == "done"
        assert notes.updating
        waiter = asyncio.ensure_future(notes.settle())
        await asyncio.sleep(0.05)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert notes.updating  # the caller stopped waiting; the update did not stop
        notes.cancel()  # /clear: the update itself is cancelled
        await notes.settle()  # returns: the update's ending is not the caller's
        assert not notes.updating
    finally:
        held.release.set()
