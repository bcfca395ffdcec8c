"""The servers' state in Claude Code's shapes: stream-json ``system/init`` and ``mcp_status``.

Status words are the Agent SDK's (``connected``, ``failed``, ``pending``,
``disabled``); a server's tools are listed by their own names with their
annotations (``readOnly``, ``destructive``, ``openWorld``), as Claude Code
answers ``mcp_status``.
"""

from __future__ import annotations

from typing import Any

from agent.mcp.config import ServerConfig
from agent.mcp.servers import McpServers, ServerStatus

_WORDS = {"connected": "connected", "failed": "failed", "connecting": "pending"}
_HINTS = {
    "readOnly": "read_only_hint",
    "destructive": "destructive_hint",
    "openWorld": "open_world_hint",
}


def status_word(state: str) -> str:
    return _WORDS.get(state, "disabled")


def init_entries(statuses: list[ServerStatus]) -> list[dict[str, str]]:
    """``mcp_servers`` of ``system/init``: name, status and where it was configured."""
    return [{"name": s.name, "status": status_word(s.state), "source": s.scope} for s in statuses]


def status_report(servers: McpServers) -> dict[str, Any]:
    """The answer to the ``mcp_status`` control request."""
    entries = []
    for status in servers.status():
        server = servers.config.servers[status.name]
        entry: dict[str, Any] = {"name": status.name, "status": status_word(status.state)}
        connection = servers.connections.get(status.name)
        if connection is not None and connection.state == "connected":
            entry["serverInfo"] = {
                "name": connection.server_name or status.name,
                "version": connection.server_version,
            }
        if status.state == "failed" and status.error:
            entry["error"] = status.error
        entry |= {"config": config_json(server), "scope": server.scope}
        if connection is not None and connection.state == "connected":
            entry["tools"] = [tool_json(spec) for spec in connection.tools]
        entries.append(entry)
    return {"mcpServers": entries}


def config_json(server: ServerConfig) -> dict[str, Any]:
    if server.transport == "sdk":
        return {"type": "sdk", "name": server.name}
    if server.transport == "stdio":
        return {"type": "stdio", "command": server.command, "args": list(server.args)}
    return {"type": server.transport, "url": server.url}


def tool_json(spec: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": str(spec.name)}
    if spec.description:
        entry["description"] = str(spec.description)
    notes = getattr(spec, "annotations", None)
    entry["annotations"] = {
        key: value
        for key, field in _HINTS.items()
        if isinstance(value := getattr(notes, field, None), bool)
    }
    return entry
