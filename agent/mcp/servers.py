"""A session's MCP servers: which may start, connecting them in the background, their tools.

Start-up never waits for a server in the interactive front ends: connections
run as tasks, and a server that connects later (Claude Code's "pending") joins
the tool list at the next turn boundary (``publish``), never inside a tool loop,
so the tools of a request change only where its cached prefix is being
rebuilt anyway. Headless ``-p`` waits before its one prompt: for the servers
``--mcp-config`` names (the caller's own, as the Agent SDK passes them) up to
``MCP_TIMEOUT``, as Claude Code does; for the configured ones up to
``CCX_MCP_PRINT_WAIT_MS`` (0.8 s from their start), so one that never answers costs a
run at most that. A server that connected and then died keeps its tools in the list: the
next call starts it again (``ServerConnection.revive``). A connected server's
instructions reach the model once as a reminder, and again in full after
every compaction (``announcements``), never twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.mcp.approval import approval, remember_answer
from agent.mcp.config import McpConfig, ServerConfig
from agent.mcp.connection import CONNECT_TIMEOUT_S, ServerConnection, timeout_setting
from agent.mcp.mentions import read_mentions
from agent.mcp.names import full_name, wire_names
from agent.mcp.sdk_transport import SdkSend
from agent.mcp.tools import McpTool

AskServer = Callable[[str, str], Awaitable[str]]
PRINT_WAIT_S = 0.8  # -p waits this long for configured servers (CCX_MCP_PRINT_WAIT_MS sets it)


@dataclass
class ServerStatus:
    name: str
    transport: str
    scope: str
    state: str  # connected, connecting, failed, pending approval, disabled, not trusted, closed
    error: str | None
    tools: list[str]
    prompts: list[str] = field(default_factory=list)  # as slash commands


class McpServers:
    def __init__(
        self,
        config: McpConfig,
        settings: dict[str, Any],
        trusted: bool,
        cwd: Path,
        settings_file: Path,
        on_change: Callable[[], None] = lambda: None,
        in_context: Callable[[str], bool] = lambda _text: False,
    ) -> None:
        """``in_context(text)``: whether the conversation already holds ``text`` (a resumed
        session that was told a server's instructions is not told them again)."""
        self.config = config
        self.cwd = cwd
        self.settings_file = settings_file  # where an approval is remembered
        self.on_change = on_change
        self.in_context = in_context
        self.approvals = {
            name: approval(server, settings, trusted) for name, server in config.servers.items()
        }
        self.connections: dict[str, ServerConnection] = {}
        self.switched_off: set[str] = set()  # mcp_toggle'd off for this session
        self.sdk_send: SdkSend | None = None  # the control protocol, where an SDK drives ccx
        self._announced: set[str] = set()
        self._started_at = 0.0  # when start() ran (the loop's clock)
        self._mentioned: list[str] = []  # resources the prompt mentioned, for its request
        # The tools requests carry, fixed at each turn boundary (``publish``).
        self._published: dict[tuple[str, str], tuple[ServerConnection, Any]] = {}

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Start every approved, well-configured server (needs the running loop)."""
        self._started_at = asyncio.get_running_loop().time()
        for name, server in self.config.servers.items():
            if self.approvals[name] == "approved" and server.error is None:
                self._connect(server)

    async def wait(self, timeout: float | None = None) -> None:
        """Until each started server is connected or failed, or its time is up: ``timeout``
        for all when given, else (a ``-p`` run) ``MCP_TIMEOUT`` for ``--mcp-config``'s
        servers and ``CCX_MCP_PRINT_WAIT_MS`` from their start for the configured ones (the
        mcp package's import, which holds up the loop meanwhile, is part of that wait)."""
        now = asyncio.get_running_loop().time()
        full = timeout_setting("MCP_TIMEOUT", CONNECT_TIMEOUT_S)
        short = min(full, timeout_setting("CCX_MCP_PRINT_WAIT_MS", PRINT_WAIT_S))

        def deadline(connection: ServerConnection) -> float:
            if timeout is not None:
                return now + timeout
            if connection.config.scope == "dynamic":
                # (past MCP_TIMEOUT: the connection's own deadline starts once the mcp
                # package is imported and the server spawned, later on a loaded machine)
                return now + full + 10
            return self._started_at + short

        await asyncio.gather(*(c.wait_until(deadline(c)) for c in self.connections.values()))

    def publish(self) -> bool:
        """At a turn boundary: the tools of the servers connected by now become the ones
        requests carry (True when they changed). A server that died keeps its tools (a call
        starts it again); one switched off or disabled loses them."""
        specs: dict[tuple[str, str], tuple[ServerConnection, Any]] = {}
        for connection in self.connections.values():
            if connection.ever_connected and connection.name not in self.switched_off:
                for spec in connection.tools:
                    specs.setdefault((connection.name, str(spec.name)), (connection, spec))
        changed = [(k, id(v[1])) for k, v in specs.items()] != [
            (k, id(v[1])) for k, v in self._published.items()
        ]
        self._published = specs
        return changed

    async def aclose(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()))

    def answer(self, name: str, approve: bool) -> str:
        """The user's answer for a project server: saved, then the server started or not."""
        server = self.config.servers[name]
        try:
            remember_answer(self.settings_file, name, approve)
            saved = f" (saved in {self.settings_file})"
        except (OSError, ValueError) as exc:
            saved = f" (for this session only: {exc})"
        self.approvals[name] = "approved" if approve else "disabled"
        if approve and server.error is None and name not in self.connections:
            self._connect(server)
        elif not approve and (connection := self.connections.pop(name, None)):
            asyncio.get_running_loop().create_task(connection.stop())
            self.on_change()
        return f"MCP server {name} {'approved' if approve else 'disabled'}{saved}"

    async def reconnect(self, name: str) -> None:
        """Stop and start one server again, until it is connected (ValueError why not)."""
        server = self._known(name)
        if server.error is not None:
            raise ValueError(server.error)
        if name in self.switched_off or self.approvals[name] != "approved":
            raise ValueError(f"MCP server {name} is not enabled")
        if (old := self.connections.pop(name, None)) is not None:
            await old.stop()
            self.on_change()
        await self._connect_and_wait(server)

    async def toggle(self, name: str, enabled: bool) -> None:
        """Switch a server off (stopped, its tools gone) or on again, for this session."""
        server = self._known(name)
        if not enabled:
            self.switched_off.add(name)
            if (connection := self.connections.pop(name, None)) is not None:
                await connection.stop()
                self.on_change()
            return
        self.switched_off.discard(name)
        approved = self.approvals[name] == "approved" and server.error is None
        if approved and name not in self.connections:
            await self._connect_and_wait(server)

    async def _connect_and_wait(self, server: ServerConfig) -> None:
        self._connect(server)
        connection = self.connections[server.name]
        await connection.wait_connected(timeout_setting("MCP_TIMEOUT", CONNECT_TIMEOUT_S))
        if connection.state != "connected":
            raise ValueError(connection.error or f"MCP server {server.name} did not connect")

    def _known(self, name: str) -> ServerConfig:
        if name not in self.config.servers:
            raise ValueError(f"Server not found: {name}")
        return self.config.servers[name]

    async def ask_pending(self, ask: AskServer) -> None:
        """Interactive front ends: ask once about each project server awaiting approval.

        ``ask(name, what)`` answers "allow" (start it), "always" (start it and allow its tools
        without asking) or "deny" (keep it off); either answer is saved, so it is asked once.
        """
        for name in self.pending():
            server = self.config.servers[name]
            what = server.url or " ".join([server.command, *server.args])
            answer = await ask(name, what)
            if self.approvals.get(name) == "pending":  # not answered meanwhile through /mcp
                self.answer(name, approve=answer in ("allow", "always"))

    def pending(self) -> list[str]:
        return [name for name, state in self.approvals.items() if state == "pending"]

    def _connect(self, server: ServerConfig) -> None:
        connection = ServerConnection(server, self.cwd, self._changed, self.sdk_send)
        self.connections[server.name] = connection
        connection.start()

    def _changed(self) -> None:
        self.on_change()

    # -- what the model sees ----------------------------------------------------------------

    def tools(self) -> list[McpTool]:
        """The published servers' tools, sorted by name as Claude Code sends them; each named
        validly and uniquely (``agent.mcp.names``). A tool a server lists twice comes once."""
        specs = self._published
        names = wire_names(specs)
        tools = [
            McpTool(connection, spec, names[pair]) for pair, (connection, spec) in specs.items()
        ]
        return sorted(tools, key=lambda tool: tool.name)

    def instruction_reminders(self) -> list[str]:
        """Instructions of servers connected since the last call (a reminder source)."""
        unsaid = [c for c in self._instructed() if c.name not in self._announced]
        fresh = [c for c in unsaid if not self.in_context(_server_block(c))]
        self._announced.update(c.name for c in unsaid)
        return [_instructions_text(fresh)] if fresh else []

    async def queue_mentions(self, prompt: str, tell: Callable[[str], None]) -> None:
        """Read the resources the prompt mentions (``@server:uri``) for its request; ``tell``
        the user about those that could not be read."""
        texts, problems = await read_mentions(self.connections, prompt)
        self._mentioned.extend(texts)
        for problem in problems:
            tell(problem)

    def mentioned(self) -> list[str]:
        """The mentioned resources' texts, once (a reminder source)."""
        out, self._mentioned = self._mentioned, []
        return out

    def announcements(self) -> list[str]:
        """Every connected server's instructions, for the context after a compaction."""
        every = self._instructed()
        self._announced.update(c.name for c in every)
        return [_instructions_text(every)] if every else []

    def forget_announced(self) -> None:
        """A new conversation (/clear): every server's instructions are news again."""
        self._announced.clear()

    def _instructed(self) -> list[ServerConnection]:
        """Servers with instructions whose tools requests carry (told with their tools)."""
        published = {server for server, _tool in self._published}
        return [c for c in self.connections.values() if c.name in published and c.instructions]

    # -- /mcp -------------------------------------------------------------------------------

    def status(self) -> list[ServerStatus]:
        known = {
            (c.name, str(spec.name)): None
            for c in self.connections.values()
            if c.ever_connected
            for spec in c.tools
        }
        wire = wire_names(known)
        out = []
        for name, server in self.config.servers.items():
            connection = self.connections.get(name)
            error = server.error
            if server.error is not None:
                state = "failed"
            elif name in self.switched_off:
                state = "disabled"
            elif connection is not None:
                state, error = connection.state, connection.error
            else:
                state = {
                    "pending": "pending approval",
                    "disabled": "disabled",
                    "untrusted": "not trusted",
                }.get(self.approvals[name], "not started")
            tools = sorted(n for (server_name, _), n in wire.items() if server_name == name)
            prompts = []
            if connection is not None and connection.state == "connected":
                prompts = [f"/{full_name(name, str(p.name))}" for p in connection.prompts]
            out.append(
                ServerStatus(name, server.transport, server.scope, state, error, tools, prompts)
            )
        return out


def _instructions_text(connections: list[ServerConnection]) -> str:
    parts = [
        "MCP servers gave these instructions for their tools (mcp__<server>__<tool>):",
        *(_server_block(c) for c in connections),
    ]
    return "\n\n".join(parts)


def _server_block(connection: ServerConnection) -> str:
    return f"## {connection.name}\n{connection.instructions}"


def conversation_holds(contents: Iterable[Any], text: str) -> bool:
    """Whether any text block of these message contents contains ``text``."""
    for content in contents:
        blocks = [content] if isinstance(content, str) else content
        for block in blocks:
            value = block if isinstance(block, str) else block.get("text", "")
            if isinstance(value, str) and text in value:
                return True
    return False


_STATE_WORDS = {"connecting": "pending (starting; its tools join when it answers)"}


def render_status(statuses: list[ServerStatus]) -> str:
    """``/mcp``'s text: each server, its transport and scope, its state and its tools."""
    if not statuses:
        return (
            "No MCP servers configured. Add them to .mcp.json (project), ~/.claude.json "
            "(mcpServers), or pass --mcp-config FILE|JSON."
        )
    lines = []
    for s in statuses:
        state = _STATE_WORDS.get(s.state, s.state)
        if s.state == "failed" and s.error:
            state = f"failed: {s.error}"
        if s.state in ("failed", "closed") and s.tools:
            state += " (its next tool call starts it again)"
        lines.append(f"{s.name}  ({s.transport}, {s.scope})  {state}")
        if s.state == "pending approval":
            lines.append(f"  approve with /mcp enable {s.name}, or /mcp disable {s.name}")
        for tool in s.tools:
            lines.append(f"  {tool}")
        for prompt in s.prompts:
            lines.append(f"  {prompt}  (prompt)")
    return "\n".join(lines)
