"""Microcompact: clear old tool results every turn, without a model call.

Old results of the compactable tools are replaced by a one-line marker
(markers.py), and so are the bulky inputs of old Edit and Write calls
(inputs.py); the tool_use blocks stay, so the conversation keeps its shape
and the model knows what it did. A result or input under
``min_result_tokens`` (50) is not worth its marker (10-25 tokens: the call beside it
names the file or command, so the marker does not).

Protection, by tokens scaled to the window W. What stays in full: every
result the model has not yet seen (the latest round); the latest Read of each
of the most recently read files, newest first, at most ``keep_recent_files``
(5, the files Claude Code restores after a compaction), together at most
B_read = ``read_budget`` x W tokens (W/4: 30K on a 120K window), and each only
while what followed it in the conversation is under B_read too (recent in
tokens, not only in files), so five large files no longer pin half a small
window; the latest ``keep_recent_results`` other results within B_other =
``other_budget`` x W (W/40); the inputs of the ``keep_recent_inputs`` latest
Edit / Write calls. A file that does not fit is cleared, and older files may
still fit. A re-read answered "unchanged" (tools/read.py's stub) is no read of
its own: it makes its file recent, and the full read it points to is the one
protected, aged from the stub, so the latest read is never a pointer at
cleared text. A read under ``min_result_tokens`` is never cleared, so it takes
none of the five file slots.

The cache. Clearing a result changes the prompt from that point on, and the
API reads from its cache only the longest prefix that ends at a breakpoint of
an earlier request. So microcompact names two anchors, user messages that end
prefixes it keeps stable, and requests put breakpoints there
(agent/core/request.py):

- the frozen anchor: the last user message before the first result (or
  Edit / Write input) that any clear may ever replace, protected or not.
  Nothing before it changes again until a compaction;
- the frontier: the last user message at or before the newest cleared block,
  where the last clear ended. What is uncleared before it was protected then;
  once old, it is a straggler.

The cost of a clear, in input-token equivalents (read r = 0.1, write w =
1.25; cost_model.py): the prefix after the latest anchor before the first
change that the last request cached, less what is cleared, R tokens, is
written again instead of read, an extra (w - r) R. What it saves: the cleared
tokens S are no longer read, r S each request. With the clearable tokens
growing by g each request (learned per session), clearing every time S
reaches S* costs (w - r) R / T + r g T / 2 per request for a cycle of
T = S / g requests, least at

    S* = sqrt(2 (w - r) / r * R * g) = sqrt(23 R g)

(the economic order quantity). So, before each request (cost_model.choose):

- cache cold (the last response is older than the cache TTL): R = 0, since
  everything after the change point is written anyway: clear everything;
- under pressure (used + ``pressure_requests`` x g reaches the auto-compact
  threshold): clear everything clearable now; it is far cheaper than a
  summary, and the compaction that follows if it is not enough is weighed by
  the same model;
- cache warm: clear everything clearable once S >= S* with R from the frozen
  anchor; else the batch after the frontier alone once it pays with R from
  the frontier (the stragglers wait for a batch from the frozen anchor); else
  wait. Each clear takes all it may (the low-water mark): the next is another
  S* of growth away, so rewrites stay rare, and the change point never moves
  back before an anchor: a later clear starts after the frozen anchor, and
  mostly after the frontier.

Thinking. The thinking blocks of earlier responses may be dropped, whole (never
the one the tool loop continues: agent/core/thinking.py), and a clear
rewrites the prompt from its change point anyway: so every clear drops the
earlier thinking after that point and counts it in S (and out of R); cold or
under pressure, all of it. With nothing else to clear, the thinking after the
latest anchor is a batch of its own, weighed by the same rule; the thinking a
request adds counts in g.

The functions here are pure: they plan and apply; clearing.py does the IO
(saving large outputs, updating the file-state cache) and the manager hands
the anchors to the conversation.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from agent.core.messages import ContentBlock, Message, ToolResultBlock
from agent.core.thinking import continued_response
from compaction.cost_model import ClearOption, Situation, choose
from compaction.result_index import Candidate, ResultIndex

COMPACTABLE_TOOLS = frozenset(
    {
        "Read",
        "Bash",
        "Grep",
        "Glob",
        "Edit",
        "Write",
        "NotebookEdit",
        "WebFetch",
        "WebSearch",
        "TaskOutput",
    }
)

Reason = Literal["none", "time", "cost", "pressure"]


@dataclass(frozen=True)
class MicrocompactConfig:
    keep_recent_files: int = 5  # at most the latest Read of each of the 5 most recent files stays
    read_budget: float = 0.25  # and those reads together within this share of the window
    keep_recent_results: int = 3  # the 3 latest results of the other compactable tools
    other_budget: float = 0.025  # within this share of the window
    clear_inputs: bool = True  # old Edit / Write inputs are cleared too (inputs.py)
    keep_recent_inputs: int = 1  # but not those of the latest such call
    fold_rounds: bool = True  # a clear folds the old rounds it leaves only markers of (fold.py)
    min_result_tokens: int = 50  # a smaller result or input is not worth its 10-25-token marker
    cache_ttl_s: float = 300.0
    save_over_tokens: int = 1_000  # a cleared output larger than this is saved to disk
    pressure_requests: float = (
        2.0  # clear everything when this many requests' growth reaches the threshold
    )


@dataclass
class ClearPlan:
    reason: Reason
    clear: list[Candidate] = field(default_factory=list)
    inputs: list[Candidate] = field(default_factory=list)  # calls whose inputs are cleared
    clearable_tokens: float = 0.0
    rewrite_tokens: float = 0.0  # R: the cached prefix after the anchor a clear would rewrite
    batch_threshold: float = 0.0  # S*, the batch the cost rule asks for
    anchors: tuple[int, ...] = ()  # the frozen anchor and the frontier once this plan is applied
    # assistant messages whose earlier thinking goes: the rewritten part of the prompt
    thinking: list[int] = field(default_factory=list)
    thinking_tokens: float = 0.0
    rewrite_from: int = 0  # the first message the clear rewrites (after the anchor it reads)

    @property
    def tokens_freed(self) -> float:
        return (
            sum(c.tokens for c in self.clear)
            + sum(c.tokens for c in self.inputs)
            + self.thinking_tokens
        )

    @property
    def changes(self) -> int:
        """How many results, inputs and thinking blocks' messages the plan clears."""
        return len(self.clear) + len(self.inputs) + len(self.thinking)


def find_candidates(
    messages: list[Message],
    config: MicrocompactConfig,
    estimate_block: Callable[[Mapping[str, Any]], float],
    index: ResultIndex | None = None,
    window: int | None = None,
) -> list[Candidate]:
    """Clearable results, oldest first: compactable, large enough, not protected.

    ``window`` scales the protection budgets; without it only the counts apply.
    """
    if index is None:
        index = ResultIndex(lambda m: 0.0, estimate_block)
    index.update(messages)
    last_results_index = _last_tool_result_index(messages)
    protected = _protected_ids(index, config, window)
    return [
        r
        for r in _clearable(index.results, config)
        if r.message_index != last_results_index and r.tool_use_id not in protected
    ]


def find_input_candidates(
    messages: list[Message], index: ResultIndex, config: MicrocompactConfig
) -> list[Candidate]:
    """Old Edit / Write calls whose inputs may be cleared, oldest first: large enough, not
    among the ``keep_recent_inputs`` latest, not in the last response. Call after ``update``."""
    if not config.clear_inputs:
        return []
    last = _last_response_index(messages)
    recent = len(index.inputs) - config.keep_recent_inputs
    return [
        c
        for position, c in enumerate(index.inputs)
        if position < recent and c.message_index < last and c.tokens >= config.min_result_tokens
    ]


def _mutable_inputs(index: ResultIndex, config: MicrocompactConfig) -> list[Candidate]:
    if not config.clear_inputs:
        return []
    return [c for c in index.inputs if c.tokens >= config.min_result_tokens]


def _clearable(results: list[Candidate], config: MicrocompactConfig) -> list[Candidate]:
    """Results that some clear may replace: compactable and large enough, protected or not."""
    minimum = config.min_result_tokens
    return [r for r in results if r.tool_name in COMPACTABLE_TOOLS and r.tokens >= minimum]


def _last_tool_result_index(messages: list[Message]) -> int:
    """The latest round's results: the model has not seen them yet, so they are never cleared."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return -1
        if messages[index].tool_results():
            return index
    return -1


def _protected_ids(index: ResultIndex, config: MicrocompactConfig, window: int | None) -> set[str]:
    """The latest read of each recent file and the latest other results, newest first,
    each kind within its count and its share of the window; a read also only while
    what followed it fits in the read budget (recent in tokens, not only in files)."""
    read_budget = math.inf if window is None else config.read_budget * window
    other_budget = math.inf if window is None else config.other_budget * window
    protected: set[str] = set()
    files: set[str] = set()
    pending: dict[str, float] = {}  # file -> age of its "unchanged" re-read, full read not yet met
    tiny: set[str] = set()  # files whose latest read is too small to clear
    others = 0
    read_tokens = other_tokens = 0.0
    for result in reversed(index.results):
        full = len(files) >= config.keep_recent_files
        if full and not pending and others >= config.keep_recent_results:
            break
        if result.tool_name == "Read":
            path = _path_key(result.tool_input.get("file_path"))
            if (path in files and path not in pending) or path in tiny:
                continue  # an older read of a file whose latest read was met already
            if path not in files and full:
                continue
            age = index.tokens_from(result.message_index + 1)
            if result.unchanged:
                # No read of its own: it points at an earlier read, which is what must stay,
                # and that read is as recent as the stub.
                files.add(path)
                pending.setdefault(path, age)
                continue
            if result.tokens < config.min_result_tokens and path not in pending:
                tiny.add(path)  # never cleared anyway: it takes none of the recent-file slots
                continue
            files.add(path)  # a recent file, kept if it fits; its older reads never are
            age = pending.pop(path, age)
            if read_tokens + result.tokens <= read_budget and age <= read_budget:
                read_tokens += result.tokens
                protected.add(result.tool_use_id)
        elif others < config.keep_recent_results and result.tool_name in COMPACTABLE_TOOLS:
            others += 1
            if other_tokens + result.tokens <= other_budget:
                other_tokens += result.tokens
                protected.add(result.tool_use_id)
    return protected


def _path_key(path: Any) -> str:
    return os.path.normpath(str(path)) if path else ""


def frozen_anchor(
    messages: list[Message],
    results: list[Candidate],
    config: MicrocompactConfig,
    inputs: Sequence[Candidate] = (),
) -> int | None:
    """The last user message before the first result (or input) a later clear may replace.

    None when there is no user message before it (nothing worth anchoring).
    With nothing left to clear, the anchor is the latest user message before the
    last response: everything the last request sent is frozen.
    """
    mutable = _clearable(results, config)
    firsts = [mutable[0].message_index] if mutable else []
    firsts += [inputs[0].message_index] if inputs else []
    end = min(firsts) if firsts else _last_response_index(messages)
    return _user_before(messages, end)


def frontier(messages: list[Message], last_cleared: int) -> int | None:
    """The last user message at or before the newest cleared block: where the last clear
    ended. What is still uncleared before it was protected then (a straggler now)."""
    return _user_before(messages, last_cleared + 1) if last_cleared >= 0 else None


def _user_before(messages: list[Message], end: int) -> int | None:
    for index in range(min(end, len(messages)) - 1, -1, -1):
        if messages[index].role == "user":
            return index
    return None


def _last_response_index(messages: list[Message]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return index
    return len(messages)


def rewrite_start(anchors: Sequence[int], changes: Sequence[Candidate]) -> int:
    """Where a clear of ``changes`` starts rewriting the prompt: after the latest anchor before
    its first change (with no change: after the latest anchor); 0 without one."""
    first = min((c.message_index for c in changes), default=math.inf)
    return max((a + 1 for a in anchors if a < first), default=0)


def rewrite_tokens(
    index: ResultIndex, messages: list[Message], anchors: Sequence[int], clear: list[Candidate]
) -> float:
    """R: what the last request cached after the latest anchor before the first change,
    less what clearing removes; with no such anchor, only the system prompt and tools
    survive."""
    if not clear:
        return 0.0
    return _rewrite_from(index, messages, rewrite_start(anchors, clear), clear)


def _rewrite_from(
    index: ResultIndex, messages: list[Message], start: int, clear: Sequence[Candidate]
) -> float:
    cached_end = max(start, _last_response_index(messages))
    cleared = sum(c.tokens for c in clear if start <= c.message_index < cached_end)
    return max(0.0, index.tokens_between(start, cached_end) - cleared)


def thinking_from(
    index: ResultIndex, messages: list[Message], start: int
) -> list[tuple[int, float]]:
    """The earlier thinking a clear rewriting from ``start`` drops at no extra write: every
    droppable one after it (never the continued response's: agent/core/thinking.py)."""
    keep = continued_response(messages)
    return [(i, tokens) for i, tokens in index.thinking if i >= start and i != keep]


def plan_clearing(
    messages: list[Message],
    *,
    now: float,
    last_response_at: float | None,
    used_tokens: float,
    auto_threshold: float | None,
    growth_per_request: float,
    message_tokens: Callable[[Message], float],
    estimate_block: Callable[[Mapping[str, Any]], float],
    config: MicrocompactConfig | None = None,
    index: ResultIndex | None = None,
    window: int | None = None,
    anchors: Sequence[int] = (),
) -> ClearPlan:
    """Decide what to clear before the next request (pure but for the index's cache).

    ``anchors`` are the breakpoints the last request had on frozen prefixes (the
    conversation's ``cache_anchors``); the plan names the next ones. Every clear
    also drops the earlier thinking in the part of the prompt it rewrites, and
    counts it as freed; with nothing else to clear, the thinking after the latest
    anchor is a batch of its own, weighed the same way.
    """
    config = config or MicrocompactConfig()
    index = index or ResultIndex(message_tokens, estimate_block)
    results = find_candidates(messages, config, estimate_block, index, window)
    changes = [*results, *find_input_candidates(messages, index, config)]
    growth = max(growth_per_request, 1.0)
    cold = last_response_at is None or now - last_response_at > config.cache_ttl_s
    situation = Situation(
        used=used_tokens,
        threshold=auto_threshold,
        growth=growth,
        clearable_growth=growth,
        pressure_requests=config.pressure_requests,
        cache_cold=cold,
    )
    # Cold, everything is written anyway; due, every token counts: all earlier thinking goes.
    start = 0 if cold or situation.due else rewrite_start(anchors, changes)
    plan, chosen = _option(index, messages, start, changes, situation), changes
    if plan.reason == "none" and not situation.due:
        # The batch after the frontier alone, leaving the stragglers before it (with nothing
        # there, the thinking after the latest anchor alone).
        edge = frontier(messages, index.last_cleared)
        fresh = [c for c in changes if edge is not None and c.message_index > edge]
        fresh_start = rewrite_start(anchors, fresh)
        recent = _option(index, messages, fresh_start, fresh, situation)
        if recent.reason != "none":
            plan, chosen = recent, fresh
    if plan.reason != "none":
        is_result = {id(c) for c in results}
        plan.clear = [c for c in chosen if id(c) in is_result]
        plan.inputs = [c for c in chosen if id(c) not in is_result]
    else:
        plan.thinking, plan.thinking_tokens = [], 0.0
    plan.anchors = anchors_after(messages, index, config, plan)
    return plan


def _option(
    index: ResultIndex,
    messages: list[Message],
    start: int,
    changes: list[Candidate],
    situation: Situation,
) -> ClearPlan:
    """What clearing ``changes`` (and the thinking from ``start``) would free and rewrite, and
    whether the cost model clears (``reason``; the candidates are filled in by the caller)."""
    thinking = thinking_from(index, messages, start)
    dropped = sum(tokens for _, tokens in thinking)
    rewrite = max(0.0, _rewrite_from(index, messages, start, changes) - dropped)
    if not changes and not thinking:
        rewrite = 0.0
    clearable = sum(c.tokens for c in changes) + dropped
    decision = choose(situation, ClearOption(clearable, rewrite))
    reason: Reason = "none"
    if (changes or thinking) and decision.action == "clear":
        reason = "time" if situation.cache_cold else "pressure" if situation.due else "cost"
    plan = ClearPlan(reason, [], [], clearable, rewrite, decision.batch, rewrite_from=start)
    plan.thinking = [i for i, _ in thinking]
    plan.thinking_tokens = dropped
    return plan


def anchors_after(
    messages: list[Message],
    index: ResultIndex,
    config: MicrocompactConfig,
    plan: ClearPlan,
) -> tuple[int, ...]:
    """The frozen anchor and the frontier once ``plan`` is applied (the frontier only when
    it lies after the anchor)."""
    cleared = {c.tool_use_id for c in plan.clear}
    remaining = [r for r in index.results if r.tool_use_id not in cleared]
    cleared_inputs = {c.tool_use_id for c in plan.inputs}
    inputs = [c for c in _mutable_inputs(index, config) if c.tool_use_id not in cleared_inputs]
    first = frozen_anchor(messages, remaining, config, inputs)
    changed = [c.message_index for c in (*plan.clear, *plan.inputs)]
    edge = frontier(messages, max([index.last_cleared, *changed]))
    anchors: tuple[int, ...] = () if first is None else (first,)
    if edge is not None and (first is None or edge > first):
        anchors += (edge,)
    return anchors


def apply_clearing(messages: list[Message], markers: dict[str, str]) -> list[Message]:
    """A new list where the results named in ``markers`` read as their markers.

    Messages are replaced, never edited in place, so anything holding the old
    list (an undo snapshot, a token memo) stays correct.
    """
    updated = list(messages)
    for index, message in enumerate(messages):
        if message.role != "user" or not any(
            b["tool_use_id"] in markers for b in message.tool_results()
        ):
            continue
        content: list[ContentBlock] = []
        for block in message.content:
            if block["type"] == "tool_result" and block["tool_use_id"] in markers:
                cleared: ToolResultBlock = {
                    "type": "tool_result",
                    "tool_use_id": block["tool_use_id"],
                }
                cleared["content"] = markers[block["tool_use_id"]]
                if block.get("is_error"):
                    cleared["is_error"] = True
                block = cleared
            content.append(block)
        updated[index] = replace(message, content=content)
    return updated
