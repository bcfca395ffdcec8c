"""Wiring a session's MCP servers: which are configured, starting them, their tools in the loop.

Part of the composition root, beside context_setup and sandbox_setup. The
servers connect in the background (headless ``-p`` waits a bounded time, see
``agent.mcp.servers``); at each turn boundary ``McpToolList`` publishes the
servers connected by then to the runner and the requests, never inside a tool
loop. With tool search on (``agent.mcp.tool_search``) the MCP tools are deferred, and so
are the built-in tools marked ``deferred``: the runner knows them all, requests carry
``ToolSearch`` and the ones it loaded.
A project server awaiting approval is asked about once in an interactive front
end (through the permission question) and named in a notice in ``-p``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.core.locations import config_dir
from agent.core.messages import Message
from agent.instructions.hooks.runner import PLUGIN_ROOT
from agent.loop.agent import Agent
from agent.loop.tool_runner import AskPermission, PermissionRequest, RememberRule, Reply, ToolRunner
from agent.mcp.config import add_servers, load_mcp_config
from agent.mcp.early_start import end_unclaimed
from agent.mcp.names import normalize_name
from agent.mcp.resources import resource_tools
from agent.mcp.servers import McpServers
from agent.mcp.tool_search import (
    PLACEHOLDER,
    ToolSearchTool,
    defers,
    defers_builtins,
    names_reminder,
)
from agent.permissions.gate import PermissionGate
from agent.permissions.rules import Rule
from agent.permissions.settings import project_root
from tools.base import Tool
from tui.session.notify import Notify
from tui.session.options import RunOptions

if TYPE_CHECKING:
    from agent.plugins.manifest import Plugin


def build_mcp_servers(
    cwd: Path,
    options: RunOptions,
    settings: dict[str, Any],
    notify: Notify,
    on_change: Callable[[], None],
    in_context: Callable[[str], bool],
    plugins: Sequence[Plugin] = (),
) -> McpServers:
    """The configured servers; nothing connects before ``start_mcp_servers``. ``settings``:
    the merged settings as written (which project servers are approved); ``plugins``: the
    session's plugins, whose servers are named ``plugin:<plugin>:<server>``."""
    root = project_root(cwd)
    config = load_mcp_config(root, config_dir(), options.mcp_config)
    for plugin in plugins:
        named = {f"plugin:{plugin.name}:{n}": s for n, s in plugin.mcp_servers.items()}
        add_servers(config, named, "plugin", f"plugin {plugin.source}")
        for name in named:
            server = config.servers.get(name)
            if server is not None and server.transport == "stdio":
                server.env.setdefault(PLUGIN_ROOT, str(plugin.root))
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
    end_unclaimed()  # servers the command line started early that this session did not take
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


class McpToolList:
    """The tools the runner runs and requests carry, MCP ones included (see the module
    docstring). ``turn_started`` is the agent's ``before_turn``."""

    def __init__(
        self, builtin: list[Tool[Any]], servers: McpServers, runner: ToolRunner, agent: Agent
    ) -> None:
        self.builtin = builtin
        self.servers = servers
        self.runner = runner
        self.agent = agent
        self.search = ToolSearchTool(self.unloaded, self.load)
        self.deferring = False
        self.loaded: set[str] = set()  # deferred tools ToolSearch loaded: sent from then on
        self._told: list[str] = []  # the deferred names the model was told about
        self._deferred: list[Tool[Any]] = []  # the tools behind the search
        self._model = agent.model
        self.refresh()

    def turn_started(self) -> None:
        """A turn boundary: servers connected (or gone) since become the tool list."""
        if self.servers.publish() or self.agent.model != self._model:
            self.refresh()

    def refresh(self) -> None:
        self._model = self.agent.model  # a Haiku model cannot search: the choice depends on it
        self.loaded |= referenced_tools(self.agent.messages)  # a resumed session's loads
        mcp = self.servers.tools()
        fixed = [*self.builtin, *resource_tools(self.servers)]
        mcp_deferred = defers([t.to_api() for t in mcp], self._window(), self.agent.model)
        # built-in tools marked ``deferred`` go behind the search whenever it is always on
        rare = [t for t in fixed if t.deferred] if defers_builtins(self.agent.model) else []
        self._deferred = [*rare, *(mcp if mcp_deferred else [])]
        self.deferring = bool(self._deferred)
        search = [self.search] if self.deferring else []
        self.runner.tools = {t.name: t for t in [*fixed, *search, *mcp]}
        held = {t.name for t in self._deferred}
        sent = [t for t in fixed if t.name not in held] + search
        if not mcp_deferred:
            sent += mcp
        api = [t.to_api() for t in sent]
        if self.deferring:
            api.append(dict(PLACEHOLDER))
            api += [
                t.to_api() | {"defer_loading": True}
                for t in self._deferred
                if t.name in self.loaded
            ]
        self.agent.tools_api = api

    def unloaded(self) -> list[dict[str, Any]]:
        """The deferred tools' definitions (what ToolSearch searches)."""
        return [t.to_api() for t in self._deferred if t.name not in self.loaded]

    def load(self, names: list[str]) -> None:
        """ToolSearch loaded these: the next request (in this loop too) carries them,
        deferred, where the API finds what its tool references name."""
        self.loaded.update(names)
        self.refresh()

    def reminders(self) -> list[str]:
        """The deferred tools' names, the first time, then what changed (a reminder source)."""
        # the built-in ones are named in the system prompt (tui/session/system_prompt.py)
        names = [t.name for t in self._deferred if not t.deferred]
        added = [n for n in names if n not in self._told]
        removed = [n for n in self._told if n not in names]
        if not added and not removed:
            return []
        first = not self._told
        self._told = names
        return [names_reminder(added, removed, first)]

    def announcements(self) -> list[str]:
        """After a compaction: every deferred name again (the summary does not keep them)."""
        self._told = []
        return self.reminders()

    def forget(self) -> None:
        """A new conversation (/clear): nothing is loaded or told."""
        self.loaded.clear()
        self._told = []
        self.refresh()

    def deferred_count(self) -> int:
        return len(self.unloaded()) if self.deferring else 0

    def _window(self) -> int:
        agent = self.agent
        window = agent.policy.context_window(agent)
        return window or agent.config.limits(agent.model).context_window


def referenced_tools(messages: Sequence[Message]) -> set[str]:
    """The tools ToolSearch results in ``messages`` name: the API resolves each such reference
    against the request's deferred tools, so they are sent for as long as it is there."""
    names: set[str] = set()
    for message in messages:
        if message.role != "user":
            continue
        for block in message.content:
            content = block.get("content") if block.get("type") == "tool_result" else None
            if isinstance(content, list):
                names.update(
                    str(part.get("tool_name"))
                    for part in content
                    if isinstance(part, dict) and part.get("type") == "tool_reference"
                )
    return names


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
