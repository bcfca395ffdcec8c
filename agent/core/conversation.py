"""The conversation: the one owner of the message list and of its records in the transcript.

Every change to what the model will see goes through a method here that says
what it does: ``append`` a message, ``close_dangling`` tool calls after an
interrupt, ``clear_results`` (microcompact), ``drop_oldest`` rounds for a
prompt-too-long retry, ``replace`` with a compaction's result, ``undo`` one,
``rewind`` to before a prompt, ``apply_repair``, ``escape_text``, ``restart`` (/clear). Compaction, undo and
repair work out what to change (pure functions, result objects) and hand it
here; this applies it and writes what the transcript needs to replay to the
same conversation: message records, ``compact_boundary``, ``compact_undo`` and ``rewind``.
Clearing, dropped rounds and in-memory repairs are not recorded as messages:
the transcript keeps the full text, and loading repairs it again.

``messages`` is a read-only view: the same list object for the session's
life, so a holder sees each change.

``cache_anchors`` are the messages that end prefixes microcompact keeps
stable (at most two: the frozen prefix and its frontier): requests put cache
breakpoints there (agent/core/request.py). One holds while that very message
is still at its index: a clear leaves them (the request after a clear must
read the old prefixes), a compaction or a dropped round loses them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from agent.core.compaction_record import CompactionRecord
from agent.core.invariants import enforce
from agent.core.messages import INTERRUPTED_TOOL_RESULT, Message
from agent.core.pairing import close_dangling
from agent.core.thinking import without_unsendable
from tools.surrogates import escape_value


class TranscriptLog(Protocol):
    """Where the conversation's records go (``agent.sessions.session.Session`` is one)."""

    def append_message(self, message: Message) -> None: ...

    def append_record(self, record: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class Compacted:
    """What a compaction puts in place: the new conversation and its boundary record."""

    messages: list[Message]
    record: CompactionRecord  # written as the ``compact_boundary`` record before the messages


@dataclass(frozen=True)
class Undone:
    """What /undo-compact puts back: the conversation from before a compaction, then what
    followed it (``later``, written again after the ``compact_undo`` record)."""

    restored: list[Message]
    later: list[Message]

    @property
    def messages(self) -> list[Message]:
        return [*self.restored, *self.later]


class Conversation:
    def __init__(
        self, messages: Iterable[Message] = (), transcript: TranscriptLog | None = None
    ) -> None:
        self._messages: list[Message] = list(messages)
        self.transcript = transcript
        self._anchors: tuple[tuple[int, Message], ...] = ()

    @property
    def messages(self) -> Sequence[Message]:
        return self._messages

    def __len__(self) -> int:
        return len(self._messages)

    # -- growing ---------------------------------------------------------------------------

    def append(self, message: Message) -> None:
        """Add a message and record it. Everything that enters passes here, so this is
        where text that is not valid UTF-8 (prompts, hook output, tool results) is escaped."""
        if message.role == "assistant":  # thinking goes back unchanged or not at all
            message.content = without_unsendable(message.content) or [
                {"type": "text", "text": "(no content)"}
            ]
        message.content = escape_value(message.content)
        self._messages.append(message)
        self._record(message)

    def close_dangling(self, reason: str = INTERRUPTED_TOOL_RESULT) -> Message | None:
        """Answer the last response's unanswered tool calls with ``reason`` (after an interrupt).

        A new answering message is recorded; results put in front of the message
        already there change only the conversation in memory (loading repairs the
        transcript the same way). Returns the message added or changed, or None.
        """
        closing = close_dangling(self._messages, reason)
        if closing is None:
            return None
        if closing.inserted:
            self._messages.insert(closing.index, closing.message)
            self._record(closing.message)
        else:
            self._messages[closing.index] = closing.message
        return closing.message

    # -- rewriting -------------------------------------------------------------------------

    def clear_results(self, cleared: list[Message]) -> None:
        """Microcompact: the same messages with old tool results replaced by markers."""
        self._swap(cleared)

    def set_cache_anchors(self, indices: Sequence[int]) -> None:
        """Name the messages that end the stable prefixes (at most two are used)."""
        count = len(self._messages)
        self._anchors = tuple((i, self._messages[i]) for i in indices[:2] if 0 <= i < count)

    @property
    def cache_anchors(self) -> tuple[int, ...]:
        """The anchors' indices, of those still at the index they were named at."""
        count = len(self._messages)
        return tuple(i for i, m in self._anchors if i < count and self._messages[i] is m)

    def drop_oldest(self, kept: list[Message]) -> None:
        """A prompt-too-long retry: the conversation without its oldest rounds."""
        self._swap(kept)

    def replace(self, compacted: Compacted) -> list[Message]:
        """Put a compaction's result in place and record it; returns what it replaced."""
        previous = list(self._messages)
        self._swap(compacted.messages)
        if self.transcript is not None:
            boundary = {"type": "compact_boundary", **compacted.record.to_json()}
            self.transcript.append_record(boundary)
            for message in compacted.messages:
                self.transcript.append_message(message)
        return previous

    def undo(self, undone: Undone) -> None:
        """Bring back the conversation from before a compaction, with what followed it."""
        self._swap(undone.messages)
        if self.transcript is not None:
            self.transcript.append_record({"type": "compact_undo", "at": time.time()})
            for message in undone.later:
                self.transcript.append_message(message)

    def rewind(self, index: int) -> list[Message]:
        """Go back to before the message at ``index`` (a prompt the user takes back): it and
        everything after it leave the conversation. Recorded as a ``rewind`` record naming
        that message, so a resumed session replays to the same place; returns what left."""
        dropped = self._messages[index:]
        if index < 0 or not dropped:
            return []
        del self._messages[index:]
        self._anchors = tuple((i, m) for i, m in self._anchors if i < index)
        if self.transcript is not None:
            record = {"type": "rewind", "uuid": dropped[0].uuid, "at": time.time()}
            self.transcript.append_record(record)
        return dropped

    def apply_repair(self, repaired: list[Message]) -> None:
        """A conversation made to keep the API's rules again (in memory; see the docstring)."""
        self._swap(repaired)

    def for_prompt(self) -> Sequence[Message]:
        """The messages to send: checked first, and repaired here if they break a rule."""
        checked = enforce(self._messages)
        if checked is not self._messages:
            self.apply_repair(checked)
        return self._messages

    def escape_text(self) -> int:
        """Escape text that is not valid UTF-8 wherever it got in; returns the messages changed."""
        healed = 0
        for index, message in enumerate(self._messages):
            content = escape_value(message.content)
            if content is not message.content:
                self._messages[index] = replace(message, content=content)
                healed += 1
        return healed

    def restart(self, transcript: TranscriptLog | None) -> None:
        """/clear: an empty conversation, recorded in a new transcript."""
        self._messages.clear()
        self.transcript = transcript

    def _swap(self, messages: list[Message]) -> None:
        self._messages[:] = messages

    def _record(self, message: Message) -> None:
        if self.transcript is not None:
            self.transcript.append_message(message)
