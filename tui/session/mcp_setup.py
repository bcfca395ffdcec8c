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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.core.locations import config_dir
from agent.loop.agent import Agent
from agent.loop.tool_runner import AskPermission, PermissionRequest, RememberRule, Reply, ToolRunner
from agent.mcp.config import load_mcp_config
from agent.mcp.names import normalize_name
from agent.mcp.resources import resource_tools
from agent.mcp.servers import McpServers
from agent.permissions.gate import PermissionGate
from agent.permissions.rules import Rule
from agent.permissions.settings import project_root
from tools.base import Tool
from tui.session.notify import Notify
from tui.session.options import RunOptions


def build_mcp_servers(
    cwd: Path,
    options: RunOptions,
    settings: dict[str, Any],
    notify: Notify,
    on_change: Callable[[], None],
    in_context: Callable[[str], bool],
) -> McpServers:
    """The configured servers; nothing connects before ``start_mcp_servers``. ``settings``:
    the merged settings as written (which project servers are approved)."""
    root = project_root(cwd)
    config = load_mcp_config(root, config_dir(), options.mcp_config)
    if options.strict_mcp_config:  # only --mcp-config's servers
        config.servers = {n: s for n, s in config.servers.items() if s.scope == "dynamic"}
    for warning in config.warnings:
        notify(f"MCP: {warning}")
    return McpServers(
        config,
        settings,
        options.project_trusted,
        root,
        root / ".claude" / "settings.local.json",
        on_change=on_change,
        in_context=in_context,
    )


def start_mcp_servers(
    servers: McpServers,
    ask: AskPermission | None,
    headless: bool,
    gate: PermissionGate,
    remember: RememberRule,
    notify: Notify,
) -> asyncio.Task[None] | None:
    """Connect the approved servers (in the background); returns the task asking about the
    others, if any (``ask``: the session's permission question, None where nobody answers)."""
    servers.start()
    pending = servers.pending()
    question: asyncio.Task[None] | None = None
    if pending and ask is not None and not headless:
        question = asyncio.get_running_loop().create_task(
            servers.ask_pending(
                lambda name, what: _ask_about_server(ask, gate, remember, name, what)
            )
        )
    else:
        for name in pending:
            notify(
                f"The project's .mcp.json has the MCP server {name}, not approved: "
                "enableAllProjectMcpServers or enabledMcpjsonServers in the settings start it",
                "info",
            )
    return question


def refresh_tools(
    builtin: list[Tool[Any]], servers: McpServers, runner: ToolRunner, agent: Agent
) -> None:
    """A server connected or failed: the runner and the next request get the built-in tools
    and the connected servers' ones."""
    tools = [*builtin, *resource_tools(servers), *servers.tools()]
    runner.tools = {tool.name: tool for tool in tools}
    agent.tools_api = runner.api_tools()


async def _ask_about_server(
    ask: AskPermission, gate: PermissionGate, remember: RememberRule, name: str, what: str
) -> str:
    """The permission question, about starting a server: yes, always (its tools too), no."""
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
        gate.allow_always(rule)
        remember(rule)
    return answer
