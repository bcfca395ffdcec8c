"""Before a clear: whether a session-memory compaction instead pays (cost_model.choose).

A clear that microcompact plans while the cache is warm (its batch rule says
the saving pays for the rewrite) rewrites the cached conversation after its
change point anyway. So that is when the manager weighs the other way of
making room, a session-memory compaction, against it, priced by the one cost
model over the horizon H = half the requests the session has made so far,
at least 10 (``cost_model.expected_horizon``: with nothing else known, a
session goes on at least that long two times in three):

- clear:           (w - r) R  +  r (used - S) H
- session memory:  w (after - cached)  +  r after H
                   after: the notes, the messages kept verbatim, every user message
                   and the restored files, worked out as the compaction would make
                   them (``notes_compaction.prepare_with_notes``, nothing changed);
- with notes still to be written, the update is added: r used + o 4,000
  (it reads the cached conversation and writes a summary's worth of output),
  and ``after`` counts notes of 4,000 tokens.

What a clear cannot remove (tool calls' inputs, the markers of cleared
results, the model's texts, small results) piles up request after request;
a compaction takes it away, so on a long session the cheaper option may turn
from clearing to compacting. With notes at 4,000 output tokens (20,000
input-equivalent) it rarely does below the threshold: the notes, the kept
messages (at least 10K tokens and 5 text messages) and the restored files
come to about what clearing leaves, so the pile must be large and the
session long. Only session memory is weighed ahead of the
threshold: it keeps the recent messages verbatim; a full summary waits for
the threshold (manager.py).

When the notes must be written first, the update starts now, alongside the
request, on the conversation as the last request sent it (so it reads that
cached prefix), and the clear waits one request: at the next one the notes
are in (or are awaited) and the compaction is made; if it cannot be (the
notes failed, or the result does not fit), that request clears as planned.

The choice is made here, without changing anything; the manager
(``ContextManager.compact_instead_of_clearing``) acts on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from agent.core.context_state import ContextLimits
from agent.core.messages import Message
from compaction.compactor import Compactor
from compaction.cost_model import (
    SUMMARY_TOKENS,
    ClearOption,
    CompactOption,
    Situation,
    choose,
    compact_cost,
)
from compaction.microcompact import ClearPlan
from compaction.notes_compaction import prepare_with_notes
from compaction.services import ConversationHost
from compaction.session_memory import KeepBounds, SessionMemory, keep_start
from compaction.tokens import CHARS_PER_TOKEN

Estimate = Callable[[ConversationHost, list[Message]], int]

Step = Literal["clear", "compact", "update"]
PLACEHOLDER_NOTES = "n" * (SUMMARY_TOKENS * CHARS_PER_TOKEN)  # notes not yet written, priced


@dataclass(frozen=True)
class MemoryChoice:
    step: Step  # clear as planned, compact by session memory now, or write the notes first
    cost: float = 0.0
    after: float = 0.0


def memory_options(
    agent: ConversationHost,
    memory: SessionMemory,
    compactor: Compactor,
    limits: ContextLimits,
    estimate: Estimate,
) -> list[tuple[CompactOption, bool]]:
    """The session-memory compactions on offer, each with whether its notes must be written
    first: on the notes in hand (if they still serve) and on notes written now."""
    messages = list(agent.conversation.messages)
    options: list[tuple[CompactOption, bool]] = []
    current = None if memory.updating else memory.peek(messages, limits)
    if current is not None:
        _, after = prepare_with_notes(
            agent, compactor, limits, current.summary, current.keep_from, estimate
        )
        options.append((CompactOption("session_memory", after), False))
    keep = keep_start(messages, len(messages), KeepBounds.for_threshold(limits.auto_compact))
    if keep is not None:
        _, after = prepare_with_notes(agent, compactor, limits, PLACEHOLDER_NOTES, keep, estimate)
        # An update in flight is paid for already; its notes arrive at the next request.
        cost = 0.0 if memory.updating else SUMMARY_TOKENS
        options.append((CompactOption("session_memory", after, cost), not memory.updating))
    return options


def weigh(
    situation: Situation, plan: ClearPlan, options: list[tuple[CompactOption, bool]]
) -> MemoryChoice:
    """Clear as ``plan`` says, or compact by session memory (on notes in hand, or after an
    update), whichever the cost model prices lower (see the module docstring)."""
    clear = ClearOption(plan.tokens_freed, plan.rewrite_tokens)
    best = MemoryChoice("clear")
    best_cost = None
    for option, needs_update in options:
        decision = choose(situation, clear, option)
        if decision.action != "session_memory":
            continue
        cost = compact_cost(situation, option)
        if best_cost is None or cost < best_cost:
            best_cost = cost
            best = MemoryChoice("update" if needs_update else "compact", cost, option.after)
    return best
