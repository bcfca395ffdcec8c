"""Wiring a session's MCP servers: which are configured, starting them, their tools in the loop.

Part of the composition root, beside context_setup and sandbox_setup. The
servers connect in the background (headless ``-p`` waits for them, since its
one prompt needs their tools); each time one connects or fails the runner
and the next request list exactly the connected servers' tools. A project
server awaiting approval is asked about once in an interactive front end
(through the permission question) and named in a notice in ``-p``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from agent.core.locations import config_dir
from agent.loop.tool_runner import PermissionRequest, Reply
from agent.mcp.config import load_mcp_config
from agent.mcp.names import normalize_name
from agent.mcp.resources import resource_tools
from agent.mcp.servers import McpServers, conversation_holds
from agent.permissions.rules import Rule
from agent.permissions.settings import project_root

if TYPE_CHECKING:
    from tui.session.runtime import Runtime


def build_mcp_servers(runtime: Runtime) -> McpServers:
    """The configured servers; nothing connects before ``start_mcp_servers``."""
    root = project_root(runtime.cwd)
    config = load_mcp_config(root, config_dir(), runtime.options.mcp_config)
    if runtime.options.strict_mcp_config:  # only --mcp-config's servers
        config.servers = {n: s for n, s in config.servers.items() if s.scope == "dynamic"}
    for warning in config.warnings:
        runtime.emit_notice(f"MCP: {warning}")
    return McpServers(
        config,
        runtime.settings.raw,
        runtime.options.project_trusted,
        root,
        root / ".claude" / "settings.local.json",
        on_change=lambda: refresh_tools(runtime),
        in_context=lambda text: conversation_holds(
            (m.content for m in runtime.agent.messages), text
        ),
    )


def start_mcp_servers(runtime: Runtime) -> asyncio.Task[None] | None:
    """Connect the approved servers (in the background); returns the task asking about the
    others, if any."""
    servers = runtime.mcp
    servers.start()
    pending = servers.pending()
    question: asyncio.Task[None] | None = None
    if pending and runtime.runner.ask is not None and not runtime.options.headless:
        question = asyncio.get_running_loop().create_task(
            servers.ask_pending(lambda name, what: _ask_about_server(runtime, name, what))
        )
    else:
        for name in pending:
            runtime.emit_notice(
                f"The project's .mcp.json has the MCP server {name}, not approved: "
                "enableAllProjectMcpServers or enabledMcpjsonServers in the settings start it",
                "info",
            )
    return question


def refresh_tools(runtime: Runtime) -> None:
    """A server connected or failed: the runner and the next request get the connected tools."""
    mcp = runtime.mcp
    runtime.tools = [*runtime.builtin_tools, *resource_tools(mcp), *mcp.tools()]
    runtime.runner.tools = {tool.name: tool for tool in runtime.tools}
    runtime.agent.tools_api = runtime.runner.api_tools()


async def _ask_about_server(runtime: Runtime, name: str, what: str) -> str:
    """The permission question, about starting a server: yes, always (its tools too), no."""
    ask = runtime.runner.ask
    assert ask is not None
    rule = Rule(f"mcp__{normalize_name(name)}", None, "session")
    request = PermissionRequest(
        f"mcp-server-{name}",
        f"MCP server {name}",
        {"server": name, "command": what},
        f"start {what} (from .mcp.json)",
        "a project's MCP server runs with your permissions; the answer is saved in "
        ".claude/settings.local.json",
        rule,
    )
    reply = await ask(request)
    answer = reply.behavior if isinstance(reply, Reply) else reply  # the SDK client's answer
    if answer == "always":
        runtime.gate.allow_always(rule)
        runtime.remember_rule(rule)
    return answer
