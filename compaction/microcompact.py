"""Microcompact: clear old tool results every turn, without a model call.

Old results of the compactable tools are replaced by a one-line marker; the
tool_use blocks stay, so the conversation keeps its shape and the model knows
what it did. What stays in full: every result the model has not yet seen (the
latest round), the latest Read of each of the most recently read files, and
the latest few other results.

When to clear is a cost decision, because clearing an old result changes the
prompt prefix and every token after it must be written to the cache again
(1.25x) instead of read from it (0.1x):

- cache cold (the last response is older than the cache TTL): everything after
  the change point is rewritten anyway, so clear everything clearable;
- cache warm: clear in one batch once the clearable tokens S reach
  sqrt(20 * R * g), where R is the extra cost of the rewrite and g the
  clearable tokens added per request. That is the batch size that minimizes
  rewrite cost plus the cost of carrying uncleared tokens (each read at 0.1x
  per request) — the economic-order-quantity rule;
- under pressure (the next requests would reach the auto-compact threshold):
  clear everything clearable now, which is far cheaper than a summary.

The functions here are pure: they plan and apply; the manager does the IO
(saving large outputs, updating the file-state cache).
"""

from __future__ import annotations

import math
import operator
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from agent.core.messages import Message

COMPACTABLE_TOOLS = frozenset(
    {"Read", "Bash", "Grep", "Glob", "Edit", "Write", "WebFetch", "WebSearch"}
)
CLEARED_PREFIX = "[Cleared to save context"
CACHE_READ = 0.1
CACHE_WRITE = 1.25

Reason = Literal["none", "time", "cost", "pressure"]


@dataclass(frozen=True)
class MicrocompactConfig:
    keep_recent_files: int = 5  # the latest Read of each of the 5 most recently read files stays
    keep_recent_results: int = 3  # and the 3 latest results of the other compactable tools
    min_result_tokens: int = 150  # a smaller result is not worth a marker
    cache_ttl_s: float = 300.0
    save_over_tokens: int = 1_000  # a cleared output larger than this is saved to disk
    pressure_requests: float = (
        2.0  # clear everything when this many requests' growth reaches the threshold
    )


@dataclass(slots=True)
class Candidate:
    """One uncleared tool result (the index keeps one per result; the clearable ones are candidates)."""

    tool_use_id: str
    tool_name: str | None
    tool_input: dict[str, Any]
    message_index: int
    tokens: float
    is_error: bool = False


@dataclass
class ClearPlan:
    reason: Reason
    clear: list[Candidate] = field(default_factory=list)
    clearable_tokens: float = 0.0
    rewrite_tokens: float = 0.0  # what would be written to the cache again after the change point
    batch_threshold: float = 0.0  # the S the cost rule asked for

    @property
    def tokens_freed(self) -> float:
        return sum(c.tokens for c in self.clear)


def is_cleared(block: dict[str, Any]) -> bool:
    content = block.get("content")
    return isinstance(content, str) and content.startswith(CLEARED_PREFIX)


class ResultIndex:
    """The conversation's tool results and per-message token prefix sums, kept up to date cheaply.

    Messages are never edited in place (a change replaces the message), so
    when the list still starts with the very message objects scanned last
    time, only the new tail is scanned; otherwise it is rebuilt. That keeps
    the every-turn decision near O(new messages) on long conversations.
    """

    def __init__(
        self,
        estimate_message: Callable[[Message], float],
        estimate_block: Callable[[dict[str, Any]], float],
    ) -> None:
        self.estimate_message = estimate_message
        self.estimate_block = estimate_block
        self.scanned: list[Message] = []
        self.results: list[Candidate] = []
        self.prefix: list[float] = [0.0]  # prefix[i] = tokens of messages[:i]
        self.uses: dict[str, tuple[str, dict[str, Any]]] = {}

    def update(self, messages: list[Message]) -> None:
        count = len(self.scanned)
        if len(messages) < count or not all(map(operator.is_, messages[:count], self.scanned)):
            self.scanned, self.results, self.prefix, self.uses = [], [], [0.0], {}
            count = 0
        for index in range(count, len(messages)):
            message = messages[index]
            self.scanned.append(message)
            self.prefix.append(self.prefix[-1] + self.estimate_message(message))
            for block in message.content:
                kind = block.get("type")
                if kind == "tool_use":
                    self.uses[block["id"]] = (block["name"], block.get("input") or {})
                elif kind == "tool_result" and not is_cleared(block):
                    name, tool_input = self.uses.get(block["tool_use_id"], (None, {}))
                    tokens = self.estimate_block(block)
                    self.results.append(
                        Candidate(
                            block["tool_use_id"],
                            name,
                            tool_input,
                            index,
                            tokens,
                            bool(block.get("is_error")),
                        )
                    )

    def tokens_from(self, index: int) -> float:
        return self.prefix[-1] - self.prefix[index]


def find_candidates(
    messages: list[Message],
    config: MicrocompactConfig,
    estimate_block: Callable[[dict[str, Any]], float],
    index: ResultIndex | None = None,
) -> list[Candidate]:
    """Clearable results, oldest first: compactable, large enough, not protected."""
    if index is None:
        index = ResultIndex(lambda m: 0.0, estimate_block)
    index.update(messages)
    last_results_index = _last_tool_result_index(messages)
    protected = _protected_ids(index.results, config)
    minimum = config.min_result_tokens
    return [
        r
        for r in index.results
        if r.message_index != last_results_index
        and r.tool_name in COMPACTABLE_TOOLS
        and r.tool_use_id not in protected
        and r.tokens >= minimum
    ]


def _last_tool_result_index(messages: list[Message]) -> int:
    """The latest round's results: the model has not seen them yet, so they are never cleared."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return -1
        if messages[index].tool_results():
            return index
    return -1


def _protected_ids(results: list[Candidate], config: MicrocompactConfig) -> set[str]:
    protected: set[str] = set()
    files: set[str] = set()
    others = 0
    for result in reversed(results):
        if len(files) >= config.keep_recent_files and others >= config.keep_recent_results:
            break
        if result.tool_name == "Read":
            path = _path_key(result.tool_input.get("file_path"))
            if path not in files and len(files) < config.keep_recent_files:
                files.add(path)
                protected.add(result.tool_use_id)
        elif others < config.keep_recent_results and result.tool_name in COMPACTABLE_TOOLS:
            others += 1
            protected.add(result.tool_use_id)
    return protected


def _path_key(path: Any) -> str:
    return os.path.normpath(str(path)) if path else ""


def economic_batch(rewrite_tokens: float, growth_per_request: float) -> float:
    """The economic batch S: clearing pays once S >= sqrt(2 (write - read) / read * R * g)."""
    return math.sqrt(
        2 * (CACHE_WRITE - CACHE_READ) * rewrite_tokens * growth_per_request / CACHE_READ
    )


def plan_clearing(
    messages: list[Message],
    *,
    now: float,
    last_response_at: float | None,
    used_tokens: float,
    auto_threshold: float | None,
    growth_per_request: float,
    message_tokens: Callable[[Message], float],
    estimate_block: Callable[[dict[str, Any]], float],
    config: MicrocompactConfig | None = None,
    index: ResultIndex | None = None,
) -> ClearPlan:
    """Decide what to clear before the next request (pure but for the index's cache)."""
    config = config or MicrocompactConfig()
    index = index or ResultIndex(message_tokens, estimate_block)
    candidates = find_candidates(messages, config, estimate_block, index)
    if not candidates:
        return ClearPlan("none")
    clearable = sum(c.tokens for c in candidates)
    rewrite = max(0.0, index.tokens_from(candidates[0].message_index) - clearable)
    growth = max(growth_per_request, 1.0)
    batch = economic_batch(rewrite, growth)
    plan = ClearPlan("none", [], clearable, rewrite, batch)
    if last_response_at is None or now - last_response_at > config.cache_ttl_s:
        plan.reason = "time"
    elif (
        auto_threshold is not None
        and used_tokens + config.pressure_requests * growth >= auto_threshold
    ):
        plan.reason = "pressure"
    elif clearable >= batch:
        plan.reason = "cost"
    else:
        return plan
    plan.clear = candidates
    return plan


def apply_clearing(messages: list[Message], markers: dict[str, str]) -> list[Message]:
    """A new list where the results named in ``markers`` read as their markers.

    Messages are replaced, never edited in place, so anything holding the old
    list (an undo snapshot, a token memo) stays correct.
    """
    updated = list(messages)
    for index, message in enumerate(messages):
        if message.role != "user" or not any(
            b.get("type") == "tool_result" and b.get("tool_use_id") in markers
            for b in message.content
        ):
            continue
        content = []
        for block in message.content:
            if block.get("type") == "tool_result" and block.get("tool_use_id") in markers:
                cleared = {"type": "tool_result", "tool_use_id": block["tool_use_id"]}
                cleared["content"] = markers[block["tool_use_id"]]
                if block.get("is_error"):
                    cleared["is_error"] = True
                block = cleared
            content.append(block)
        updated[index] = replace(message, content=content)
    return updated


def marker_for(
    candidate: Candidate,
    *,
    saved_path: str | None = None,
    file_unchanged: bool | None = None,
    line_count: int | None = None,
) -> str:
    """The line the model sees instead of a cleared result: what it was and how to get it back."""
    tool, params = candidate.tool_name, candidate.tool_input
    if tool == "Read":
        path = params.get("file_path", "?")
        lines = f" ({line_count} lines)" if line_count else ""
        state = (
            "The file has not changed since; Read it again if you need the text."
            if file_unchanged
            else "Read the file again if you need its current text."
        )
        return f"{CLEARED_PREFIX}: earlier Read of {path}{lines}. {state}]"
    what = _describe(tool, params)
    if saved_path:
        lines = f", {line_count} lines" if line_count else ""
        return f"{CLEARED_PREFIX}: output of {what}{lines}. Saved in full at {saved_path}; Read or Grep it if needed.]"
    outcome = "failed" if candidate.is_error else "succeeded"
    if tool in ("Edit", "Write"):
        return f"{CLEARED_PREFIX}: {what} {outcome}.]"
    return f"{CLEARED_PREFIX}: old output of {what}.]"


def _describe(tool: str, params: dict[str, Any]) -> str:
    if tool == "Bash":
        command = str(params.get("command", ""))
        return f"Bash `{command[:120]}`"
    if tool in ("Grep", "Glob"):
        return f"{tool} `{params.get('pattern', '')}`"
    if tool in ("Edit", "Write"):
        return f"{tool} of {params.get('file_path', '?')}"
    return tool
