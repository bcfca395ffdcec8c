"""One cost model for the context: wait, clear old tool results, or compact (session memory or
a full summary), priced in input-token equivalents.

Prices (the API's, 5-minute cache): a cached token read costs r = 0.1, a
token written to the cache w = 1.25, an output token o = 5. Every option is
priced as what it costs now plus what its context costs to read over the
next H requests (the horizon); tokens every option adds alike are left out.

- wait:    r * used * H
- clear:   (w - r) * R  +  r * (used - S) * H
           R: the cached prefix after the anchor that clearing rewrites,
           S: the tokens cleared (microcompact.py);
- session memory:
           w * (after - cached)  +  r * after * H
           after: the notes, the kept messages and the restored attachments,
           all written again; cached: the system prompt and tools, still read;
- summary: r * used  +  o * summary_tokens  +  w * (after - cached)  +  r * after * H
           one request reads the whole cached conversation and writes a
           summary of thousands of output tokens (4,000 is typical), then the
           summary and the restored files are written.

The horizon H (``expected_horizon``): a session that has made N requests
goes on for at least N / 2 more two times in three (its position in its own
length taken as uniform), so H = max(10, N / 2).

``choose`` takes those inputs and returns an action:

- when the context is not due (below the auto-compact threshold, less
  ``pressure_requests`` requests of growth), the choice is the batch rule for
  clearing: clear once S >= S* = sqrt(2 (w - r) / r * R * g) (see
  microcompact.py), else wait. A cold cache makes R = 0: clear at once. A
  clear that pays rewrites the cached conversation after its change point
  anyway, so then (and only then) a session-memory compaction is weighed
  against it: the cheaper over H wins (clear_or_compact.py builds the option: notes in
  hand, or notes to write first, priced with the update's r used + o 4,000).
  A full summary is never chosen ahead of the threshold: it keeps no recent
  message verbatim;
- when it is due: the cheapest of the options whose context afterwards is
  under the threshold with ``pressure_requests`` of growth to spare; if none
  fits, the one that leaves the least (a summary, normally). Waiting is not
  an option once due.

Session notes are priced the same way (``compaction_follows``): an update
reads the cached conversation and writes thousands of output tokens, about
what a summary costs, and pays back only at a session-memory compaction. So
it is worth starting only when clearing cannot keep the context under the
threshold for the next H requests: after clearing everything clearable now
(C), the context is used - C and grows by what a request adds that is never
clearable, growth - g, so compaction follows within H requests when

    used - C + H (growth - g) + pressure_requests x growth >= threshold.

Otherwise clearing carries the session and the notes would never be used.

Pure: no IO, no clock; the manager, clear_or_compact.py and microcompact supply the
figures. A ``CompactOption`` with ``summary_tokens`` > 0 pays a summary
request's read and output (a full summary, or session notes still to write).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

CACHE_READ = 0.1
CACHE_WRITE = 1.25
OUTPUT = 5.0
SUMMARY_TOKENS = 4_000  # what a real nine-section summary runs to
MIN_HORIZON = 10.0  # requests: a session that is due for compaction goes on for a while

Action = Literal["wait", "clear", "session_memory", "summary"]


@dataclass(frozen=True)
class Situation:
    used: float  # tokens in the context now
    threshold: float | None  # the auto-compact threshold (None: auto-compaction off)
    growth: float  # tokens a request adds (all of them, not only clearable ones)
    clearable_growth: float  # g: clearable tokens a request adds
    cached: float = 0.0  # the system prompt and tools: read, never rewritten
    horizon: float = MIN_HORIZON  # requests the choice is priced over
    pressure_requests: float = 2.0
    cache_cold: bool = False  # the cache has expired: every token is written anyway

    @property
    def due(self) -> bool:
        """Whether the next requests would reach the threshold: something must give."""
        if self.threshold is None:
            return False
        return self.used + self.pressure_requests * self.growth >= self.threshold


@dataclass(frozen=True)
class ClearOption:
    freed: float  # S
    rewrite: float  # R


@dataclass(frozen=True)
class CompactOption:
    kind: Literal["session_memory", "summary"]
    after: float  # the context afterwards
    summary_tokens: float = 0.0  # output a summary request writes (0 for session memory)


@dataclass(frozen=True)
class Decision:
    action: Action
    cost: float  # the chosen option priced over the horizon
    batch: float = 0.0  # S*, when clearing was weighed by the batch rule
    fits: bool = True  # whether the context afterwards is under the threshold


def economic_batch(rewrite: float, clearable_growth: float) -> float:
    """S* = sqrt(2 (w - r) / r * R * g): the batch that pays for rewriting R."""
    g = max(clearable_growth, 1.0)
    return math.sqrt(2 * (CACHE_WRITE - CACHE_READ) / CACHE_READ * max(rewrite, 0.0) * g)


def clear_cost(situation: Situation, option: ClearOption) -> float:
    rewrite = 0.0 if situation.cache_cold else option.rewrite
    after = situation.used - option.freed
    return (CACHE_WRITE - CACHE_READ) * rewrite + CACHE_READ * after * situation.horizon


def compact_cost(situation: Situation, option: CompactOption) -> float:
    written = CACHE_WRITE * max(option.after - situation.cached, 0.0)
    summary = 0.0
    if option.summary_tokens > 0:  # a summary, or notes still to be written
        summary = CACHE_READ * situation.used + OUTPUT * option.summary_tokens
    return summary + written + CACHE_READ * option.after * situation.horizon


def wait_cost(situation: Situation) -> float:
    return CACHE_READ * situation.used * situation.horizon


def choose(
    situation: Situation,
    clear: ClearOption | None,
    memory: CompactOption | None = None,
    summary: CompactOption | None = None,
) -> Decision:
    """Wait, clear, or compact (see the module docstring)."""
    if not situation.due:
        if clear is None or clear.freed <= 0:
            return Decision("wait", wait_cost(situation))
        batch = (
            0.0
            if situation.cache_cold
            else economic_batch(clear.rewrite, situation.clearable_growth)
        )
        if clear.freed < batch:
            return Decision("wait", wait_cost(situation), batch)
        decision = Decision("clear", clear_cost(situation, clear), batch)
        if memory is not None:
            cost = compact_cost(situation, memory)
            if cost < decision.cost:  # the rewrite is paid either way: compact instead
                decision = Decision("session_memory", cost, batch)
        return decision
    options: list[tuple[float, float, Action]] = []  # (cost, context after, action)
    if clear is not None and clear.freed > 0:
        options.append((clear_cost(situation, clear), situation.used - clear.freed, "clear"))
    for option in (memory, summary):
        if option is not None:
            options.append((compact_cost(situation, option), option.after, option.kind))
    if not options:
        return Decision("wait", wait_cost(situation), fits=False)
    limit = math.inf if situation.threshold is None else situation.threshold
    spare = situation.pressure_requests * situation.growth
    fitting = [o for o in options if o[1] + spare < limit]
    if fitting:
        cost, _, action = min(fitting)
        return Decision(action, cost)
    cost, _, action = min(options, key=lambda o: (o[1], o[0]))
    return Decision(action, cost, fits=False)


def expected_horizon(requests_so_far: float) -> float:
    """H: a session that has made N requests makes at least N / 2 more, 2 times in 3."""
    return max(MIN_HORIZON, requests_so_far / 2)


def compaction_follows(
    situation: Situation, clearable_now: float, horizon: float = MIN_HORIZON
) -> bool:
    """Whether clearing alone cannot hold the context under the threshold for ``horizon``
    requests, so a compaction is coming and session notes for it are worth paying for."""
    if situation.threshold is None:
        return False
    lasting = max(situation.growth - situation.clearable_growth, 0.0)
    floor = situation.used - max(clearable_now, 0.0) + horizon * lasting
    return floor + situation.pressure_requests * situation.growth >= situation.threshold
