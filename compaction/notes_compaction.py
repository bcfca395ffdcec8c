"""Carrying out a session-memory compaction (SPEC 3.6): the notes instead of a summary call.

``session_memory`` decides which messages stay (the keep-index) and
``notes_writer`` supplies notes that still match; this puts the two together
with the compactor: the notes become the summary message, the messages from
the keep-index on stay verbatim, recent files, skills and the plan are
restored as after a full compaction (those the kept messages show are not
repeated), and the conversation's owner puts it in place.

Committed only when the result, restored items included, fits in
``TARGET_SHARE`` of the auto-compact threshold; otherwise nothing changes and
the caller runs a full compaction. The files restored get only the room the
kept messages leave under that target; if skills or the plan then take more
than expected, the files are cut once more by the overshoot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.core.context_state import ContextLimits
from agent.core.messages import Message
from compaction.compactor import Compactor, Replacement
from compaction.grouping import adjust_start_index
from compaction.services import ConversationHost
from compaction.session_memory import TARGET_SHARE, SessionMemory


async def compact_with_notes(
    agent: ConversationHost,
    memory: SessionMemory,
    compactor: Compactor,
    limits: ContextLimits,
    *,
    count: Callable[[ConversationHost], int],
    estimate: Callable[[ConversationHost, list[Message]], int],
    record_event: Callable[[dict[str, Any]], None],
    clock: Callable[[], float],
) -> bool:
    """True when the session-memory compaction was made (see the module docstring)."""
    started = clock()
    result = await memory.try_compact(list(agent.conversation.messages), limits)
    if result is None:
        return False
    tokens_before = count(agent)
    replacement, prospective = prepare_with_notes(
        agent, compactor, limits, result.summary, result.keep_from, estimate
    )
    if prospective > int(limits.auto_compact * TARGET_SHARE):
        record_event(
            {
                "type": "session_memory_skipped",
                "reason": "the result would leave too little room under the threshold",
                "tokens": prospective,
            }
        )
        return False
    await compactor.commit(agent, replacement, tokens_before=tokens_before, started=started)
    return True


def prepare_with_notes(
    agent: ConversationHost,
    compactor: Compactor,
    limits: ContextLimits,
    notes: str,
    keep_from: int,
    estimate: Callable[[ConversationHost, list[Message]], int],
) -> tuple[Replacement, int]:
    """The replacement ``notes`` and the messages from ``keep_from`` would make, and its
    tokens (restored items included); changes nothing, so it also prices one."""
    messages = list(agent.conversation.messages)
    target = int(limits.auto_compact * TARGET_SHARE)
    start = adjust_start_index(messages, keep_from)

    def room(over: int) -> Callable[[list[Message]], int]:
        """The restore room when the last try came out ``over`` the target."""
        return lambda new: target - over - estimate(agent, new)

    over = 0
    for _attempt in range(2):
        replacement = compactor.prepare(
            agent,
            limits,
            notes,
            kept_before=[],
            kept_after=messages[start:],
            trigger="auto",
            kind="session_memory",
            restore_room=room(over),
        )
        prospective = estimate(agent, replacement.messages())
        over = prospective - target
        if over <= 0 or not replacement.restoration.of_kind("file"):
            break
    return replacement, prospective
