"""MCP prompts as slash commands: ``/mcp__<server>__<prompt> args`` becomes the prompt's text.

As in Claude Code, the words after the command fill the prompt's arguments
in their declared order (the last one takes the rest of the line); a
missing required argument, an unknown prompt or a server that fails is an
error for the user, and nothing is sent to the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.mcp.names import PREFIX, full_name

if TYPE_CHECKING:
    from agent.mcp.connection import ServerConnection
    from agent.mcp.servers import McpServers


class McpPromptError(Exception):
    """Why the prompt could not be fetched (words for the user)."""


def prompt_commands(servers: McpServers) -> list[tuple[str, str]]:
    """(command name, description) of every connected server's prompts."""
    return [
        (full_name(connection.name, str(prompt.name)), (prompt.description or "").strip())
        for connection in servers.connections.values()
        if connection.state == "connected"
        for prompt in connection.prompts
    ]


def is_prompt_command(name: str) -> bool:
    return name.startswith(PREFIX)


async def expand(servers: McpServers, line: str) -> str:
    """The text the command stands for (McpPromptError when it cannot be had)."""
    head, _, rest = line.strip().lstrip("/").partition(" ")
    found = _find(servers, head)
    if found is None:
        known = ", ".join(f"/{name}" for name, _ in prompt_commands(servers)) or "none"
        raise McpPromptError(f"Unknown MCP prompt /{head}. MCP prompts: {known}")
    connection, prompt = found
    arguments = _arguments(prompt, rest.strip(), head)
    from agent.mcp.connection import McpCallError

    try:
        result = await connection.request(
            f"prompts/get {prompt.name}",
            lambda session: session.get_prompt(str(prompt.name), arguments),
        )
    except McpCallError as exc:
        raise McpPromptError(str(exc)) from None
    texts = [_text(message.content) for message in result.messages]
    text = "\n\n".join(t for t in texts if t.strip())
    if not text:  # nothing to send: the API refuses a prompt without words
        raise McpPromptError(f"/{head} gave no text (empty or only whitespace); nothing was sent")
    return text


def _find(servers: McpServers, name: str) -> tuple[ServerConnection, Any] | None:
    for connection in servers.connections.values():
        if connection.state != "connected":
            continue
        for prompt in connection.prompts:
            if full_name(connection.name, str(prompt.name)) == name:
                return connection, prompt
    return None


def _arguments(prompt: Any, text: str, head: str) -> dict[str, str]:
    declared = list(prompt.arguments or [])
    words = text.split(maxsplit=max(len(declared) - 1, 0)) if declared else []
    values = {arg.name: word for arg, word in zip(declared, words, strict=False)}
    missing = [arg.name for arg in declared if arg.required and arg.name not in values]
    if missing:
        usage = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in declared)
        raise McpPromptError(f"/{head} needs {', '.join(missing)}: /{head} {usage}")
    return values


def _text(content: Any) -> str:
    if getattr(content, "type", None) == "text":
        return str(content.text)
    resource = getattr(content, "resource", None)
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return f"[Resource {getattr(resource, 'uri', None)}]\n{text}"
    return f"[{getattr(content, 'type', 'unknown')} content, not shown]"
