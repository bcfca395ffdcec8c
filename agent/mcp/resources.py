"""MCP resources for the model: ListMcpResourcesTool and ReadMcpResourceTool (Claude Code's names
and input schemas), offered while a connected server has resources.

A listing is JSON: each resource's fields plus the ``server`` it came from.
A read gives ``{"contents": [...]}`` with the text of text resources; a
binary one is saved under the session's folder (``mcp-resources/``) and
its entry says where, so the model can open it with Read. Output is capped
as MCP tool results are (``agent.mcp.tools``). Both only read:
no permission question, and plan mode lets them run.
"""

from __future__ import annotations

import json
import mimetypes
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.mcp.tools import cap_text, spill_path
from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line

if TYPE_CHECKING:
    from agent.mcp.connection import ServerConnection
    from agent.mcp.servers import McpServers

LIST_DESCRIPTION = """\
Lists the resources that the connected MCP servers offer (files, records, documents...).
Each entry has the resource's uri, name, description and mimeType, and the server it
belongs to. Give server to list one server's resources only; leave it out for all of them.
Read one with ReadMcpResourceTool."""

READ_DESCRIPTION = """\
Reads one resource from an MCP server: give the server's name and the resource's uri (as
ListMcpResourcesTool lists them). Text comes back as it is; binary content is saved to a
file whose path is given."""


class ListParams(ToolParams):
    server: str | None = None


class ReadParams(ToolParams):
    server: str
    uri: str


def resource_tools(servers: McpServers) -> list[Tool[Any]]:
    """The two tools, while at least one connected server says it has resources."""
    if not any(_has_resources(c) for c in servers.connections.values()):
        return []
    return [ListMcpResourcesTool(servers), ReadMcpResourceTool(servers)]


class ListMcpResourcesTool(Tool[ListParams]):
    name = "ListMcpResourcesTool"
    is_mutating = False

    def __init__(self, servers: McpServers) -> None:
        self.servers = servers

    @classmethod
    def description(cls) -> str:
        return LIST_DESCRIPTION

    def label(self, params: ListParams, cwd: StrPath | None = None) -> str:
        return f"List MCP resources ({params.server or 'all servers'})"

    async def run(self, params: ListParams, ctx: ToolContext) -> ToolResult:
        from agent.mcp.connection import McpCallError

        if params.server is not None:
            found = _connection(self.servers, params.server)
            if isinstance(found, ToolResult):
                return found
            chosen = [found]
        else:
            chosen = [c for c in self.servers.connections.values() if _has_resources(c)]
        listed: list[dict[str, Any]] = []
        for connection in chosen:
            try:
                answer = await connection.request(
                    "resources/list", lambda session: session.list_resources()
                )
            except McpCallError as exc:
                return ToolResult.error(str(exc))
            for resource in answer.resources:
                entry = resource.model_dump(by_alias=True, mode="json", exclude_none=True)
                listed.append({**entry, "server": connection.name})
        if not listed:
            return ToolResult("No resources found.", display="no resources")
        text = json.dumps(listed, ensure_ascii=False, separators=(",", ":"))
        text = cap_text(text, spill_path(ctx.session_dir, "resources"))
        return ToolResult(text, display=f"{len(listed)} resources")


class ReadMcpResourceTool(Tool[ReadParams]):
    name = "ReadMcpResourceTool"
    is_mutating = False

    def __init__(self, servers: McpServers) -> None:
        self.servers = servers

    @classmethod
    def description(cls) -> str:
        return READ_DESCRIPTION

    def label(self, params: ReadParams, cwd: StrPath | None = None) -> str:
        return one_line(f"Read MCP resource {params.uri} ({params.server})", 120)

    async def run(self, params: ReadParams, ctx: ToolContext) -> ToolResult:
        from agent.mcp.connection import McpCallError

        found = _connection(self.servers, params.server)
        if isinstance(found, ToolResult):
            return found
        try:
            answer = await found.request(
                f"resources/read {params.uri}", lambda session: session.read_resource(params.uri)
            )
        except McpCallError as exc:
            return ToolResult.error(str(exc))
        contents = [_content(item, found.name, ctx.session_dir) for item in answer.contents]
        text = json.dumps({"contents": contents}, ensure_ascii=False, separators=(",", ":"))
        text = cap_text(text, spill_path(ctx.session_dir, found.name, "resource"))
        return ToolResult(text, display=f"{params.uri}: {len(contents)} part(s)")


def _has_resources(connection: ServerConnection) -> bool:
    capabilities = connection.capabilities
    return connection.state == "connected" and getattr(capabilities, "resources", None) is not None


def _connection(servers: McpServers, name: str) -> ServerConnection | ToolResult:
    connection = servers.connections.get(name)
    if connection is None or connection.state != "connected":
        known = ", ".join(servers.config.servers) or "none"
        state = f" ({connection.describe()})" if connection is not None else ""
        return ToolResult.error(f'Server "{name}" not found{state}. Available servers: {known}')
    if not _has_resources(connection):
        return ToolResult.error(f'Server "{name}" offers no resources')
    return connection


def _content(item: Any, server: str, folder: Path | None) -> dict[str, Any]:
    mime = getattr(item, "mime_type", None) or "application/octet-stream"
    entry: dict[str, Any] = {"uri": str(item.uri), "mimeType": mime}
    text = getattr(item, "text", None)
    if isinstance(text, str):
        return {**entry, "text": text}
    import base64

    data = base64.b64decode(getattr(item, "blob", "") or "")
    where = _save(data, mime, folder)
    if where is None:
        entry["text"] = f"[Resource from {server} at {item.uri}] Binary content ({mime}, "
        entry["text"] += f"{len(data):,} bytes), not saved: no session folder"
        return entry
    return {
        **entry,
        "blobSavedTo": str(where),
        "text": f"[Resource from {server} at {item.uri}] Binary content ({mime}, "
        f"{len(data):,} bytes) saved to {where}",
    }


def _save(data: bytes, mime: str, folder: Path | None) -> Path | None:
    if folder is None:
        return None
    from tools.atomic_file import atomic_write

    suffix = mimetypes.guess_extension(mime) or ".bin"
    path = Path(folder) / "mcp-resources" / f"{uuid.uuid4()}{suffix}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
    except OSError:
        return None
    return path
