"""Session-memory compaction (SPEC 3.6): which messages stay verbatim when notes stand in for a summary.

A background side call keeps a notes file for the session up to date
(``compaction.notes``). When compaction is due and the notes cover the
conversation up to message K, the notes become the summary and the messages
from K + 1 on are kept verbatim: no model call at compaction time. The
manager tries a ``SessionMemory`` first when one is configured and falls back
to a full compaction when it returns nothing (no notes, stale notes) or its
result leaves the context over the threshold.

The keep-index (``keep_start``) is pure: start at K + 1, extend backwards
until at least ``min_tokens`` tokens and ``min_text`` messages with text are
kept, never beyond ``max_tokens``, never before ``floor`` (the end of the
previous compaction's messages), and only at a cut that splits no tool pair
and no assistant response (``grouping.adjust_start_index``). The result,
restored files included, must fit in ``TARGET_SHARE`` of the threshold. When the part
the notes do not cover is already over ``max_tokens``, or no valid cut exists
between ``floor`` and K + 1, the notes cover too little: ``None``.

The bounds (``KeepBounds.for_threshold``): 10,000 and 5 messages at least,
40,000 at most, as the reference; on a small window the maximum shrinks to
40% of the auto-compact threshold (never below the minimum), so that the kept
messages, the notes and the system prompt still leave room under it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from agent.core.context_state import ContextLimits
from agent.core.messages import Message
from compaction.grouping import adjust_start_index
from compaction.tokens import PADDING, estimate_message

if TYPE_CHECKING:
    from agent.core.context_policy import PolicyHost

MIN_KEEP_TOKENS = 10_000
MIN_KEEP_TEXT_MESSAGES = 5
MAX_KEEP_TOKENS = 40_000
MAX_KEEP_SHARE = 0.4  # of the auto-compact threshold, on small windows
# A session-memory result must fit in this share of the threshold, restored files included:
# one just under the threshold would be due again a request or two later, paying another
# notes update for very little room (a full summary leaves more).
TARGET_SHARE = 0.8
# Messages a compaction puts in place: nothing at or before the last of them may be kept again.
COMPACTION_KINDS = ("summary", "attachment")


@dataclass
class SessionMemoryResult:
    summary: str  # the notes, used as the summary
    keep_from: int  # messages from this index on are kept verbatim (a safe cut)


class SessionMemory(Protocol):
    """What the manager needs of session memory; ``compaction.notes.SessionNotes`` is one."""

    def observe(
        self,
        host: PolicyHost,
        used: int,
        limits: ContextLimits,
        outlook: Callable[[], bool] | None = None,
    ) -> None:
        """Before each request: start a background notes update when one is due.

        ``outlook`` says whether a compaction is coming (cost_model.compaction_follows);
        it is only asked once the context is near the threshold."""

    async def try_compact(
        self, messages: list[Message], limits: ContextLimits
    ) -> SessionMemoryResult | None:
        """Notes covering ``messages`` up to some point, or None when there are none usable."""

    def plan(self, messages: list[Message], limits: ContextLimits) -> SessionMemoryResult | None:
        """What ``try_compact`` would return now, without waiting for an update in flight."""

    def peek(self, messages: list[Message], limits: ContextLimits) -> SessionMemoryResult | None:
        """``plan`` without recording why there is nothing (for pricing, every clear)."""

    def covered_uuid(self) -> str | None:
        """The uuid of the last message the notes cover (None: no notes); the notes hold while
        that message is in the conversation, so folding keeps it (fold.py)."""

    @property
    def updating(self) -> bool:
        """Whether an update is in flight (a compaction now would wait for its notes)."""

    def start_update(self, host: PolicyHost, used: int, limits: ContextLimits) -> bool:
        """Start a notes update now, whatever the policy says."""

    def cancel(self) -> None:
        """Stop background work without waiting."""

    async def aclose(self) -> None:
        """Stop background work and wait for it."""


@dataclass(frozen=True)
class KeepBounds:
    min_tokens: int = MIN_KEEP_TOKENS
    min_text: int = MIN_KEEP_TEXT_MESSAGES
    max_tokens: int = MAX_KEEP_TOKENS

    @classmethod
    def for_threshold(cls, auto_compact: int) -> KeepBounds:
        ceiling = max(MIN_KEEP_TOKENS, min(MAX_KEEP_TOKENS, int(auto_compact * MAX_KEEP_SHARE)))
        return cls(MIN_KEEP_TOKENS, MIN_KEEP_TEXT_MESSAGES, ceiling)


def counted_tokens(message: Message) -> float:
    """A message's tokens as the context count sees them (the estimate, padded)."""
    return estimate_message(message) * PADDING


def has_text(message: Message) -> bool:
    return any(
        block.get("type") == "text" and str(block.get("text") or "").strip()
        for block in message.content
    )


def compaction_floor(messages: Sequence[Message]) -> int:
    """The first index after the last message an earlier compaction put in place (0 if none)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].kind in COMPACTION_KINDS:
            return index + 1
    return 0


def keep_start(
    messages: Sequence[Message],
    covered_end: int,
    bounds: KeepBounds,
    *,
    floor: int | None = None,
    tokens: Callable[[Message], float] = counted_tokens,
) -> int | None:
    """Where the kept messages start, given notes that cover ``messages[:covered_end]``.

    See the module docstring for the rules; None when the notes cover too little.
    """
    floor = compaction_floor(messages) if floor is None else floor
    covered_end = max(0, min(covered_end, len(messages)))
    start = max(covered_end, floor)
    kept = sum(tokens(m) for m in messages[start:])
    texts = sum(1 for m in messages[start:] if has_text(m))
    if kept > bounds.max_tokens:
        return None
    while start > floor and (kept < bounds.min_tokens or texts < bounds.min_text):
        size = tokens(messages[start - 1])
        if kept + size > bounds.max_tokens:
            break
        start -= 1
        kept += size
        texts += has_text(messages[start])
    return _safe_cut(messages, start, floor, covered_end, kept, bounds, tokens)


def _safe_cut(
    messages: Sequence[Message],
    start: int,
    floor: int,
    covered_end: int,
    kept: float,
    bounds: KeepBounds,
    tokens: Callable[[Message], float],
) -> int | None:
    """``start`` moved back to a valid cut, or forward when going back breaks a bound."""
    listed = list(messages)
    back = adjust_start_index(listed, start)
    if back >= floor and kept + sum(tokens(m) for m in messages[back:start]) <= bounds.max_tokens:
        return back
    # Forward: later cuts keep less, but none may drop a message the notes do not cover.
    limit = max(covered_end, floor)
    for index in range(start + 1, limit + 1):
        if adjust_start_index(listed, index) == index:
            return index
    return None
