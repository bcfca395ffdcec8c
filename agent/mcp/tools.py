"""An MCP server's tool as a ccx tool: ``mcp__<server>__<tool>`` with the server's schema.

Names are built the way Claude Code builds them (characters outside
``[A-Za-z0-9_-]`` become ``_``). A call goes through the permission gate like
any tool that changes things (ask by default; ``mcp__server`` and
``mcp__server__tool`` rules apply). The result's text, images, embedded
resources and structured content become the tool result, cut at the same
30,000 characters as Bash and Grep output.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line

if TYPE_CHECKING:
    from agent.mcp.connection import ServerConnection

MAX_OUTPUT_CHARS = 30_000
MAX_DESCRIPTION_CHARS = 2_048
PREFIX = "mcp__"


class McpParams(ToolParams):
    """Whatever the server's schema allows: the server validates its own input."""

    model_config = ConfigDict(extra="allow")


def normalize_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def tool_name(server: str, tool: str) -> str:
    return f"{PREFIX}{normalize_name(server)}__{normalize_name(tool)}"


class McpTool(Tool[McpParams]):
    is_mutating = True  # an MCP tool may do anything: ask unless a rule allows it

    def __init__(self, connection: ServerConnection, spec: Any) -> None:
        self.connection = connection
        self.server = connection.name
        self.tool = str(spec.name)
        self.name = tool_name(self.server, self.tool)  # type: ignore[misc]
        self._description = (spec.description or "").strip()[:MAX_DESCRIPTION_CHARS]
        schema = spec.input_schema
        self._schema = (
            schema
            if isinstance(schema, dict) and schema.get("type") == "object"
            else {
                "type": "object",
                "properties": {},
            }
        )

    def to_api(self) -> dict[str, Any]:  # type: ignore[override]
        return {
            "name": self.name,
            "description": self._description or f"{self.tool} from the MCP server {self.server}",
            "input_schema": self._schema,
        }

    def label(self, params: McpParams, cwd: StrPath | None = None) -> str:
        arguments = ", ".join(
            f"{k}: {json.dumps(v)}" for k, v in (params.model_extra or {}).items()
        )
        return one_line(f"{self.server} - {self.tool} (MCP)({arguments})", 120)

    async def run(self, params: McpParams, ctx: ToolContext) -> ToolResult:
        from agent.mcp.connection import McpCallError

        try:
            result = await self.connection.call_tool(self.tool, dict(params.model_extra or {}))
        except McpCallError as exc:
            return ToolResult.error(str(exc))
        return convert_result(result)


def convert_result(result: Any) -> ToolResult:
    """A CallToolResult as what the model sees; isError becomes is_error."""
    blocks = [block for item in (getattr(result, "content", None) or []) for block in _block(item)]
    structured = getattr(result, "structured_content", None)
    # As Claude Code: structured content stands for text-only content (the JSON is exact).
    if structured is not None and all(b["type"] == "text" for b in blocks):
        blocks = [
            {
                "type": "text",
                "text": json.dumps(structured, ensure_ascii=False, separators=(",", ":")),
            }
        ]
    blocks = _cap(blocks)
    is_error = bool(getattr(result, "is_error", False))
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    display = "\n".join(texts) or ("(image)" if blocks else "(no output)")
    if all(b["type"] == "text" for b in blocks):
        return ToolResult(output="\n".join(texts), display=display, is_error=is_error)
    return ToolResult(output=blocks, display=display, is_error=is_error)


def _block(item: Any) -> list[dict[str, Any]]:
    kind = getattr(item, "type", None)
    if kind == "text":
        return [{"type": "text", "text": str(item.text)}]
    if kind == "image":
        return [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": item.mime_type, "data": item.data},
            }
        ]
    if kind == "resource":
        resource = item.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return [{"type": "text", "text": f"[Resource {resource.uri}]\n{text}"}]
        mime = getattr(resource, "mime_type", None) or "binary"
        return [{"type": "text", "text": f"[Resource {resource.uri}: {mime} data, not shown]"}]
    if kind == "resource_link":
        return [{"type": "text", "text": f"[Resource link: {item.name} {item.uri}]"}]
    if kind == "audio":
        return [{"type": "text", "text": f"[Audio: {item.mime_type}, not shown]"}]
    return [{"type": "text", "text": f"[{kind or 'unknown'} content, not shown]"}]


def _cap(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Text beyond MAX_OUTPUT_CHARS in all is cut, with a line saying so."""
    left, out = MAX_OUTPUT_CHARS, []
    for block in blocks:
        if block["type"] != "text":
            out.append(block)
            continue
        text = block["text"]
        if left == 0:
            continue
        if len(text) > left:
            cut = len(text) - left
            out.append(
                {
                    "type": "text",
                    "text": text[:left] + f"\n(Output cut: {cut:,} more "
                    f"characters not shown; MCP output is limited to {MAX_OUTPUT_CHARS:,})",
                }
            )
            left = 0
            continue
        left -= len(text)
        out.append(block)
    return out
