"""What the real Messages API refuses about deferred tools and tool references.

A tool sent with ``defer_loading: true`` is not shown to the model until a
``tool_reference`` block in a tool result names it (a client's own search tool
returns them, as Claude Code's ToolSearch does; the API's server search tools
``tool_search_tool_regex_20251119`` / ``_bm25_`` produce them too). The rules: not
every tool may be deferred, a search tool itself is never deferred, and a
reference must name a tool of the request that is deferred. A client-side search
tool is enough: Claude Code sends deferred tools with no server search tool.
"""

from __future__ import annotations

from typing import Any

from tui.fake_api.rejection import Rejection, invalid

SEARCH_TOOL_TYPES = ("tool_search_tool_regex_20251119", "tool_search_tool_bm25_20251119")


def check_deferred_tools(body: dict[str, Any], _spec: Any = None) -> Rejection | None:
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    deferred = set()
    for i, tool in enumerate(tools):
        flag = tool.get("defer_loading", False)
        if not isinstance(flag, bool):
            return invalid(f"tools.{i}.defer_loading: Input should be a valid boolean")
        if flag and tool.get("type") in SEARCH_TOOL_TYPES:
            return invalid(f"tools.{i}: a tool search tool cannot have defer_loading set")
        if flag:
            deferred.add(tool.get("name"))
    if tools and len(deferred) == len(tools):
        return invalid("tools: at least one tool must not have defer_loading set")
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for b, block in enumerate(content if isinstance(content, list) else []):
            # (a tool_reference outside a tool result fails the block-type check first)
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            if not isinstance(block.get("content"), list):
                continue
            for part in block["content"]:
                if not isinstance(part, dict) or part.get("type") != "tool_reference":
                    continue
                name = part.get("tool_name")
                if name not in deferred:
                    return invalid(
                        f"messages.{m}.content.{b}: tool_reference to {name!r}, which is not "
                        "a tool of this request with defer_loading set (tool_reference_unresolved)"
                    )
    return None
