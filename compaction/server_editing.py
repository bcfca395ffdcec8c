"""Server-side context editing: the API clears old tool results in place of microcompact.

With the option on (settings ``serverContextEditing``, or
``CCX_SERVER_CONTEXT_EDITING``), every request asks the API for its
``clear_tool_uses_20250919`` edit (beta ``context-management-2025-06-27``) and
the local microcompact does not run; full compaction and the thresholds stay
local. The API clears its own copy: the conversation kept here is never
edited, and each response says how much was cleared
(``context_management.applied_edits``).

The edit's parameters are the local rule's (microcompact.py), so the switch
changes who clears, not what is kept or when clearing pays:

- trigger T: the local pressure point, the auto-compact threshold (the
  effective window when auto-compaction is off) less ``pressure_requests``
  requests' growth;
- keep K: what the local rule keeps in full, the latest reads of
  ``keep_recent_files`` files plus ``keep_recent_results`` other results;
- clear_at_least C: the economic batch at T. Clearing makes the cache be
  written again from the first cleared result on, about T - C tokens, so C
  solves C = sqrt(2 (write - read) / read * (T - C) * g);
- exclude_tools: every tool outside the compactable set (Skill,
  ExitPlanMode, ...), whose results the local rule never clears either.

g is the nominal growth per request, not the one the session learns: the
parameters then stay the same from request to request, the API clears the
same oldest results each time, and the cached prefix after them holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agent.core.messages import Message
from agent.core.request import with_beta
from compaction.clearing import INITIAL_GROWTH
from compaction.cost_model import economic_batch
from compaction.microcompact import COMPACTABLE_TOOLS, MicrocompactConfig
from compaction.thresholds import ContextLimits

BETA = "context-management-2025-06-27"
CLEAR_TOOL_USES = "clear_tool_uses_20250919"
SETTING = "serverContextEditing"
ENV_SWITCH = "CCX_SERVER_CONTEXT_EDITING"
_ON = {"1", "true", "yes", "on"}
_OFF = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class ClearToolUses:
    """One ``clear_tool_uses_20250919`` edit: clear from ``trigger`` input tokens on."""

    trigger: int
    keep: int
    clear_at_least: int
    exclude_tools: tuple[str, ...] = ()

    def to_api(self) -> dict[str, Any]:
        return {
            "type": CLEAR_TOOL_USES,
            "trigger": {"type": "input_tokens", "value": self.trigger},
            "keep": {"type": "tool_uses", "value": self.keep},
            "clear_at_least": {"type": "input_tokens", "value": self.clear_at_least},
            "exclude_tools": list(self.exclude_tools),
        }


@dataclass(frozen=True)
class ServerClearing:
    """What the API reported clearing from one request."""

    tool_uses: int = 0
    input_tokens: int = 0


def plan_server_edit(
    limits: ContextLimits,
    *,
    auto_enabled: bool,
    tool_names: Iterable[str],
    config: MicrocompactConfig | None = None,
    growth: float = INITIAL_GROWTH,
) -> ClearToolUses:
    """The edit that asks the API for what microcompact would do locally (see the module doc)."""
    config = config or MicrocompactConfig()
    trigger = max(1, round(limits.threshold(auto_enabled) - config.pressure_requests * growth))
    slope = economic_batch(1.0, growth) ** 2  # the batch rule is S = sqrt(slope * rewrite)
    clear_at_least = round((math.sqrt(slope * slope + 4 * slope * trigger) - slope) / 2)
    excluded = tuple(sorted({name for name in tool_names if name not in COMPACTABLE_TOOLS}))
    keep = config.keep_recent_files + config.keep_recent_results
    return ClearToolUses(trigger, keep, clear_at_least, excluded)


def with_server_edit(extra: dict[str, Any] | None, edit: ClearToolUses) -> dict[str, Any]:
    """The request ``extra`` with the beta header and the edit in the body (idempotent)."""
    merged = with_beta(extra, BETA)
    body = dict(merged.get("extra_body") or {})
    body["context_management"] = {"edits": [edit.to_api()]}
    merged["extra_body"] = body
    return merged


def server_clearing(applied_edits: Iterable[Mapping[str, Any]]) -> ServerClearing:
    """The totals of the response's ``clear_tool_uses`` edits (none: zeros)."""
    tool_uses = tokens = 0
    for edit in applied_edits:
        if edit.get("type") == CLEAR_TOOL_USES:
            tool_uses += _count(edit.get("cleared_tool_uses"))
            tokens += _count(edit.get("cleared_input_tokens"))
    return ServerClearing(tool_uses, tokens)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def cleared_tool_use_ids(messages: list[Message], cleared: int, edit: ClearToolUses) -> list[str]:
    """Which results the API cleared: the response says how many, its rule says which.

    The oldest first, never one of the last ``keep`` tool uses nor one of an
    excluded tool.
    """
    uses = [(b["id"], b["name"]) for m in messages if m.role == "assistant" for b in m.tool_uses()]
    kept = {tool_id for tool_id, _ in uses[len(uses) - edit.keep :]} if edit.keep > 0 else set()
    names = dict(uses)
    eligible = [
        block["tool_use_id"]
        for message in messages
        for block in message.tool_results()
        if block["tool_use_id"] not in kept
        and names.get(block["tool_use_id"]) not in edit.exclude_tools
    ]
    return eligible[: max(0, cleared)]


def cleared_read_paths(
    messages: list[Message],
    cleared_ids: Iterable[str],
    resolve: Callable[[str], str] = lambda path: path,
) -> list[str]:
    """Files whose latest Read is among the cleared results: the model no longer sees their text."""
    latest: dict[str, str] = {}
    for message in messages:
        for block in message.tool_uses():
            path = (block.get("input") or {}).get("file_path")
            if block["name"] == "Read" and isinstance(path, str):
                latest[resolve(path)] = block["id"]
    cleared = set(cleared_ids)
    return [path for path, tool_id in latest.items() if tool_id in cleared]


def resolve_server_editing(setting: Any, env: Mapping[str, str]) -> tuple[bool, list[str]]:
    """Whether the option is on: the environment variable wins over the settings key.

    Returns the choice and warnings about values that could not be used.
    """
    warnings: list[str] = []
    raw = env.get(ENV_SWITCH, "")
    if raw.strip():
        value = raw.strip().lower()
        if value in _ON or value in _OFF:
            return value in _ON, warnings
        warnings.append(f"Ignoring {ENV_SWITCH}={raw!r}: expected 1, true, 0 or false")
    if setting is None or isinstance(setting, bool):
        return bool(setting), warnings
    warnings.append(f"Ignoring the setting {SETTING}={setting!r}: expected true or false")
    return False, warnings
