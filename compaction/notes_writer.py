"""The background side call that keeps the session notes up to date, and their use at compaction.

``SessionNotes`` is the manager's ``SessionMemory``. Before each request the
manager shows it the context count (``observe``); when ``NotesPolicy`` says an
update is due, it starts one as an asyncio task and returns at once, so the
agent's request goes out alongside it and nobody waits. The update sends what
the agent sends (same system prompt, tools and request extras, the
conversation as it stands) plus one user message asking for the notes, so it
reads the conversation's cached prefix and writes only that message; the
request is shaped like a summary request (its last text asks for a
``<summary>`` block). Its cost is counted under the ``notes`` purpose.

At compaction (``try_compact``) an update still in flight is awaited (it was
started a request or more earlier, and a second model call would cost as
much again); then the notes are checked against the conversation (the
message they cover up to must still be there) and the keep-index is worked
out. Any failure (an API error, a reply that calls a tool or has no notes, a
file that cannot be written) leaves the previous notes in place and is
recorded as an event; the full compaction remains the fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

from agent.core.context_state import ContextLimits
from agent.core.messages import Message, user_text
from agent.core.request import build_request
from agent.core.thinking import side_request
from compaction.notes import Notes, NotesPolicy, NotesStore
from compaction.services import ConversationHost
from compaction.session_memory import (
    KeepBounds,
    SessionMemoryResult,
    compaction_floor,
    counted_tokens,
    keep_start,
)
from compaction.summary import format_summary, has_summary_section

PROMPT = Path(__file__).with_name("prompts") / "notes.md"
NOTES_REQUEST_MARK = "only for updating the session notes"
NOTES_MAX_OUTPUT = 8_000
SETTLE_TIMEOUT_S = 120.0  # how long a compaction waits for an update in flight
GROWTH_SAMPLES = 5


def notes_prompt() -> str:
    return PROMPT.read_text(encoding="utf-8").strip()


def _can_follow(messages: list[Message]) -> bool:
    """Whether a user message may follow: the last message is the user's, or a finished
    response (between turns), not one whose tool calls wait for their results."""
    last = messages[-1]
    return last.role == "user" or not last.tool_uses()


class NotesError(Exception):
    """The update produced no usable notes; the previous ones stay."""


class SessionNotes:
    def __init__(
        self,
        store: NotesStore,
        record_event: Callable[[dict[str, Any]], None] = lambda event: None,
        policy: NotesPolicy | None = None,
        *,
        max_output: int = NOTES_MAX_OUTPUT,
        settle_timeout_s: float = SETTLE_TIMEOUT_S,
    ) -> None:
        self.store = store
        self.record_event = record_event
        self.policy = policy or NotesPolicy()
        self.max_output = max_output
        self.settle_timeout_s = settle_timeout_s
        self.notes: Notes | None = store.load()
        self.task: asyncio.Task[Notes | None] | None = None
        self.updates = 0
        self.failures = 0
        self._growth: deque[int] = deque(maxlen=GROWTH_SAMPLES)
        self._last_used: int | None = None
        self._max_output = max_output
        self._output_limit = max_output  # the model's, once an update starts

    @property
    def updating(self) -> bool:
        return self.task is not None and not self.task.done()

    # -- before each request ----------------------------------------------------------

    def observe(
        self,
        host: ConversationHost,
        used: int,
        limits: ContextLimits,
        outlook: Callable[[], bool] | None = None,
    ) -> None:
        """Start an update in the background when one is due; never waits for anything.

        With ``outlook`` (whether a compaction is coming, rather than clearing holding the
        context under the threshold), an update starts only when it says one is."""
        if self._last_used is not None and used > self._last_used:
            self._growth.append(used - self._last_used)
        self._last_used = used
        if self.updating or used >= limits.auto_compact:
            return  # at the threshold compaction runs now: on the notes there are, or a summary
        growth = median(self._growth) if self._growth else 0.0
        if not self.policy.near(used, limits, growth):
            return
        if self.policy.needs_compaction and outlook is not None and not outlook():
            return  # notes are used only by a compaction, and none is coming
        messages = list(host.conversation.messages)
        if not any(m.role == "assistant" for m in messages) or not _can_follow(messages):
            return
        end = self.covered_end(messages)
        uncovered = None if end is None else sum(counted_tokens(m) for m in messages[end:])
        if self.policy.due(used=used, limits=limits, growth=growth, uncovered=uncovered):
            self.start_update(host, used, limits)

    def start_update(self, host: ConversationHost, used: int, limits: ContextLimits) -> bool:
        """Start an update now, whatever the policy says (a cost model that plans a
        session-memory compaction early may ask for one); False when one is running already
        or there is nothing to cover yet."""
        messages = list(host.conversation.messages)
        if self.updating or not messages or not _can_follow(messages):
            return False
        self._max_output = min(self.max_output, limits.max_output)
        self._output_limit = limits.max_output
        self.task = asyncio.ensure_future(self._update(host, messages, used))
        return True

    def covered_end(self, messages: list[Message]) -> int | None:
        """One past the last message the notes cover, or None when they no longer match:
        their message is gone, or it comes before the last compaction's messages."""
        if self.notes is None:
            return None
        end = self.notes.covered_end(messages)
        if end is None or end < compaction_floor(messages):
            return None
        return end

    async def _update(
        self, host: ConversationHost, messages: list[Message], used: int
    ) -> Notes | None:
        started = time.perf_counter()
        try:
            notes = await self._write(host, messages, used, started)
        except Exception as error:  # a background failure must never surface
            self.failures += 1
            self.record_event({"type": "notes_failed", "reason": str(error)})
            return None
        self.notes = notes
        self.updates += 1
        return notes

    async def _write(
        self, host: ConversationHost, messages: list[Message], used: int, started: float
    ) -> Notes:
        sent = [*messages, user_text(notes_prompt(), kind="meta")]
        extra, max_tokens = side_request(
            sent, host.request_extra, self._max_output, self._output_limit
        )
        request = build_request(
            model=host.model,
            system=host.system,
            tools=host.tools_api,
            messages=sent,
            max_tokens=max_tokens,
            extra=extra,
        )
        response = await host.client.stream(request, stream_text=False)
        seconds = time.perf_counter() - started
        if host.costs is not None:
            host.costs.add(response.model or host.model, response.usage, seconds, purpose="notes")
        if any(block["type"] == "tool_use" for block in response.content):
            raise NotesError("the notes update tried to call a tool")
        reply = "".join(b["text"] for b in response.content if b["type"] == "text")
        if response.stop_reason == "max_tokens" and not has_summary_section(reply):
            raise NotesError("the notes update was cut at the output limit")
        text = format_summary(reply)
        if not text:
            raise NotesError("the notes update returned no notes")
        last = messages[-1]
        notes = Notes(text, len(messages) - 1, last.uuid, used, time.time())
        if not self.store.save(notes):
            raise NotesError(f"the notes file {self.store.path} could not be written")
        self.record_event(
            {
                "type": "session_notes",
                "covers_index": notes.covers_index,
                "covers_uuid": notes.covers_uuid,
                "tokens": len(text) // 4,
                "usage": dict(response.usage),
                "duration_s": round(seconds, 3),
            }
        )
        return notes

    # -- at compaction ----------------------------------------------------------------

    async def settle(self) -> None:
        """Wait for an update in flight (bounded); its failure is already recorded.

        The update keeps running past the bound. An interrupt of the caller (Ctrl-C, a
        signal) stops the wait at once and goes on up: the compaction that waits is
        abandoned, the conversation unchanged (the update itself is ended at close).
        """
        if self.task is None or self.task.done():
            return
        await asyncio.wait({self.task}, timeout=self.settle_timeout_s)

    async def try_compact(
        self, messages: list[Message], limits: ContextLimits
    ) -> SessionMemoryResult | None:
        await self.settle()
        return self.plan(messages, limits)

    def plan(self, messages: list[Message], limits: ContextLimits) -> SessionMemoryResult | None:
        """The notes as the summary and where the kept messages start, or None (see module doc);
        a None is recorded as a ``session_memory_skipped`` event with its reason."""
        result, reason = self._plan(messages, limits)
        if result is None:
            self.record_event({"type": "session_memory_skipped", "reason": reason})
        return result

    def peek(self, messages: list[Message], limits: ContextLimits) -> SessionMemoryResult | None:
        """What ``plan`` would return, recording nothing (for pricing a compaction)."""
        return self._plan(messages, limits)[0]

    def covered_uuid(self) -> str | None:
        return None if self.notes is None else self.notes.covers_uuid

    def _plan(
        self, messages: list[Message], limits: ContextLimits
    ) -> tuple[SessionMemoryResult | None, str]:
        if self.notes is None:
            return None, "no notes"
        covered_end = self.covered_end(messages)
        if covered_end is None:
            return None, (
                "the notes no longer match: their last message is gone, "
                "or they predate the last compaction"
            )
        start = keep_start(messages, covered_end, KeepBounds.for_threshold(limits.auto_compact))
        if start is None:
            return None, "the notes cover too little"
        return SessionMemoryResult(self.notes.text, start), ""

    def cancel(self) -> None:
        """Stop an update in flight without waiting (/clear starts another session)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def aclose(self) -> None:
        """Stop an update in flight and wait until it has stopped (the session is ending)."""
        task = self.task
        self.cancel()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
