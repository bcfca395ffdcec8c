"""MCP tools behind a search, as Claude Code sends them: names in the conversation, schemas on
demand.

When tool search is on, a request carries no MCP tool definition up front. The model is
told the deferred tools' names (a reminder, once, then only what changed) and loads the
ones it needs with ``ToolSearch``: by name (``select:a,b``) or by keywords (``+word``
requires ``word`` in the name). Its result is the API's ``tool_reference`` blocks, which
the API expands into the tools' definitions at that point of the conversation; each loaded
tool is then sent with ``defer_loading: true`` (never rendered into the prompt's prefix, so
loading one keeps the cached prefix). A placeholder deferred tool is sent from the start so
the first load changes nothing the API renders ahead of the conversation, as Claude Code
does. A deferred tool the model calls without loading it still runs.

Built-in tools marked ``deferred`` (tools/base.py: the rarely used ones, as Claude Code
defers NotebookEdit, WebFetch, WebSearch and the task-list tools) go behind the same search
whenever it is always on.

``ENABLE_TOOL_SEARCH`` decides, with Claude Code's values: unset or ``true``, always on;
``false``, off (every definition sent whole); ``auto``, on when the MCP tools' definitions
exceed 10% of the context window; ``auto:N``, N%. Haiku models cannot search: off for them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import Field

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult
from tools.result_content import ToolReferenceBlock

SEARCH_TOOL = "ToolSearch"
AUTO_PERCENT = 10.0
CHARS_PER_TOKEN = 4
PLACEHOLDER: dict[str, Any] = {
    "name": "DeferredToolsAnchor",
    "description": "Not a tool to call: it only keeps deferred tool loading switched on.",
    "input_schema": {"type": "object", "properties": {}},
    "defer_loading": True,
}
DESCRIPTION = """\
Loads the definitions of deferred tools so that they can be called.

Some tools (rarely used built-in ones, and those of MCP servers) are deferred: a message lists \
their names, but their parameters are unknown until this tool loads them, and a call made \
without them may fail. Load before calling:
- "select:NAME1,NAME2" loads exactly the named tools;
- keywords ("calendar event") load the best matches of names and descriptions, up to \
max_results;
- "+word other" keeps only tools whose name contains "word", ranked by the other words.
Loaded tools stay callable for the rest of the conversation."""


def search_threshold(env: Mapping[str, str] | None = None) -> float | None:
    """The share of the context window MCP definitions must exceed before they are deferred
    (0: always), or None when tool search is off."""
    value = (os.environ if env is None else env).get("ENABLE_TOOL_SEARCH", "").strip().lower()
    if value in ("", "true", "1", "yes", "on"):
        return 0.0
    if value in ("false", "0", "no", "off"):
        return None
    if value == "auto":
        return AUTO_PERCENT / 100
    if match := re.fullmatch(r"auto:(\d+(?:\.\d+)?)", value):
        return min(100.0, float(match.group(1))) / 100
    return 0.0  # an unknown value: Claude Code's default


def can_search(model: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether tool search is on for ``model`` at all."""
    return search_threshold(env) is not None and "haiku" not in model.lower()


def defers_builtins(model: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether the built-in tools marked ``deferred`` (tools/base.py) go behind the search:
    when it is always on (the default), not in the ``auto`` modes, which weigh MCP tools."""
    return search_threshold(env) == 0.0 and can_search(model, env)


def defers(
    mcp_tools: Sequence[Mapping[str, Any]],
    window: int,
    model: str,
    env: Mapping[str, str] | None = None,
) -> bool:
    """Whether these MCP tool definitions go behind the search for ``model``."""
    threshold = search_threshold(env)
    if not mcp_tools or threshold is None or not can_search(model, env):
        return False
    tokens = sum(len(json.dumps(t)) for t in mcp_tools) / CHARS_PER_TOKEN
    return tokens > threshold * window


def deferred_tools_text(names: Sequence[str]) -> str:
    """The system prompt's section on the built-in tools behind the search: it names them
    (their definitions come only when loaded) and stays the same for the whole session."""
    return "\n".join(
        [
            "# Tools loaded on demand",
            f"These tools can be used, but their parameters are sent only once {SEARCH_TOOL} "
            'has loaded them (query "select:NAME"): load one before its first call.',
            *names,
        ]
    )


def names_reminder(added: Sequence[str], removed: Sequence[str], first: bool) -> str:
    """What the model is told about the deferred tools: all of them the first time, then
    what changed."""
    parts = []
    if added:
        head = (
            "These tools are deferred: only their names are known. Load a tool with "
            f'{SEARCH_TOOL} (query "select:NAME") before calling it:'
            if first
            else f"More deferred tools, to load with {SEARCH_TOOL} before calling:"
        )
        parts.append("\n".join([head, *added]))
    if removed:
        parts.append("\n".join(["These deferred tools are gone (their server left):", *removed]))
    return "\n\n".join(parts)


def match(query: str, catalog: Sequence[Mapping[str, Any]], limit: int) -> list[str]:
    """The names of the tools ``query`` asks for, best first (see the module docstring)."""
    query = query.strip()
    names = [str(t["name"]) for t in catalog]
    if query.lower().startswith("select:"):
        wanted = [w.strip() for w in query[len("select:") :].split(",") if w.strip()]
        by_lower = {n.lower(): n for n in names}
        return list(dict.fromkeys(by_lower[w.lower()] for w in wanted if w.lower() in by_lower))
    words = [w.lower() for w in re.split(r"\s+", query) if w]
    required = [w[1:] for w in words if w.startswith("+") and len(w) > 1]
    ranked = [w for w in words if not w.startswith("+")] or required
    scored = []
    for position, tool in enumerate(catalog):
        name = str(tool["name"]).lower()
        if any(r not in name for r in required):
            continue
        text = f"{name} {tool.get('description', '')}".lower()
        words_of_name = set(re.split(r"[^a-z0-9]+", name))
        score = sum(3 if w in words_of_name else 2 if w in name else 1 for w in ranked if w in text)
        if score:
            scored.append((-score, position, str(tool["name"])))
    return [name for _, _, name in sorted(scored)[: max(1, limit)]]


class ToolSearchParams(ToolParams):
    query: str = Field(
        description='"select:NAME1,NAME2" for exact names, or keywords ("+word" required)'
    )
    max_results: int = Field(default=5, ge=1, le=50, description="At most this many tools")


class ToolSearchTool(Tool[ToolSearchParams]):
    name = SEARCH_TOOL
    is_mutating = False

    def __init__(
        self,
        catalog: Callable[[], list[dict[str, Any]]],
        load: Callable[[list[str]], None],
    ) -> None:
        """``catalog()``: the deferred tools' definitions; ``load(names)``: send these from the
        next request on."""
        self.catalog = catalog
        self.load = load

    @classmethod
    def description(cls) -> str:
        return DESCRIPTION

    def label(self, params: ToolSearchParams, cwd: StrPath | None = None) -> str:
        return f"{SEARCH_TOOL}({params.query})"

    async def run(self, params: ToolSearchParams, ctx: ToolContext) -> ToolResult:
        catalog = self.catalog()
        if not catalog:
            return ToolResult.error("No deferred tools: every tool is already loaded.")
        found = match(params.query, catalog, params.max_results)
        if not found:
            return ToolResult(
                f"No deferred tool matches {params.query!r}. Deferred tools: "
                + ", ".join(str(t["name"]) for t in catalog)
            )
        self.load(found)
        blocks: list[ToolReferenceBlock] = [
            {"type": "tool_reference", "tool_name": name} for name in found
        ]
        return ToolResult(list(blocks), display="Loaded " + ", ".join(found))
