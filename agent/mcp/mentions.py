"""``@server:uri`` in a prompt: the MCP resource is read and its text goes with the prompt.

As in Claude Code, a mention names a connected server that has resources
and a resource's URI (``@calc:calc://notes``); anything else that looks
like one (an e-mail address, an unknown server) is left alone. The text of
each resource reaches the model as a reminder beside the prompt; a resource
that cannot be read is a notice for the user, and the prompt is sent anyway.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from agent.mcp.connection import McpCallError, ServerConnection

MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_-]+):(\S+)")
MAX_CHARS = 30_000


def mentions(connections: Mapping[str, ServerConnection], text: str) -> list[tuple[str, str]]:
    """(server, uri) of each mention of a connected server with resources, once each;
    ``connections`` by server name."""
    found: list[tuple[str, str]] = []
    for match in MENTION.finditer(text):
        server, uri = match.group(1), match.group(2).rstrip(".,;:!?)]}\"'")
        connection = connections.get(server)
        if connection is None or connection.state != "connected":
            continue
        if getattr(connection.capabilities, "resources", None) is None:
            continue
        if (server, uri) not in found:
            found.append((server, uri))
    return found


async def read_mentions(
    connections: Mapping[str, ServerConnection], text: str
) -> tuple[list[str], list[str]]:
    """(texts for the model, problems for the user) of the prompt's mentions."""
    texts: list[str] = []
    problems: list[str] = []
    for server, uri in mentions(connections, text):
        connection = connections[server]
        try:
            answer = await connection.request(f"resources/read {uri}", _reader(uri))
        except McpCallError as exc:
            problems.append(f"@{server}:{uri} was not read: {exc}")
            continue
        body = "\n".join(_text(item) for item in answer.contents)
        if len(body) > MAX_CHARS:
            body = body[:MAX_CHARS] + f"\n(cut at {MAX_CHARS:,} characters)"
        texts.append(f"The user mentioned the MCP resource {uri} of the server {server}:\n{body}")
    return texts, problems


def _reader(uri: str) -> Callable[[Any], Any]:
    """The request that reads ``uri``, given the server's session."""
    return lambda session: session.read_resource(uri)


def _text(item: Any) -> str:
    text = getattr(item, "text", None)
    if isinstance(text, str):
        return text
    mime = getattr(item, "mime_type", None) or "binary"
    return f"[{mime} content, not shown: ReadMcpResourceTool saves it to a file]"
