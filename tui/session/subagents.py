"""Running subagents: what the Agent tool launches, built from the session's own parts.

A subagent is a second ``Agent`` loop with a conversation of its own (it
starts from the Agent call's prompt alone: nothing of the parent's
conversation reaches its requests), its own context manager (microcompact
and compaction over its own messages), fresh instances of its tools (its own
shell, its own file-read state) filtered to what its definition lists, never
the Agent tool itself (no recursion) nor ExitPlanMode. It shares with the
parent: the permission gate (rules and mode), the way permission questions
reach the user, the hooks (SubagentStop fires when it would end), the SDK's
HTTP client, and the cost tracker (its requests count as ``subagent``). Its
events reach the front ends wrapped in ``SubagentEvent`` under the Agent
call's id. Cancelling the Agent call (an interrupt) cancels the subagent.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.core.events import (
    Event,
    EventSink,
    Notice,
    SubagentFinished,
    SubagentStarted,
    SubagentStatus,
)
from agent.core.messages import text_block
from agent.instructions.agents import (
    AgentDefinition,
    AgentDefinitions,
    agents_listing,
    parse_agents,
)
from agent.instructions.hooks import HookRunner
from agent.loop.agent import Agent, AgentConfig, MaxTurnsReached
from agent.loop.stop_hooks import StopHook
from agent.loop.tool_hooks import ToolHooks
from agent.loop.tool_runner import RememberRule, ToolRunner
from agent.mcp.tool_search import SEARCH_TOOL
from agent.model.client import ApiError, ModelClient
from agent.permissions.gate import PermissionGate
from agent.permissions.safe_git import env_for_command
from compaction.manager import ContextManager
from tools.agent import GENERAL_PURPOSE, AgentParams, AgentTool
from tools.base import Tool, ToolContext, ToolResult
from tools.bash import BashTool
from tools.exit_plan_mode import ExitPlanModeTool
from tools.file_state import FileStateCache
from tools.jobs import JobRegistry
from tools.registry import default_tools
from tools.web_fetch import WebFetchTool
from tools.worktree_tools import EnterWorktreeTool, ExitWorktreeTool
from tui.session.background_agents import start_in_background
from tui.session.session_hooks import SessionHooks
from tui.session.session_model import SessionModel
from tui.session.subagent_report import Ended, RunStats, relay
from tui.session.system_prompt import SystemPrompt

# Tools a subagent never gets, whatever its definition lists.
# ToolSearch loads into the parent's tool list: a subagent is sent its MCP tools whole.
# The worktree tools move the whole session's working directory: the parent's to decide.
WITHHELD = {
    AgentTool.name, *AgentTool.aliases, ExitPlanModeTool.name, SEARCH_TOOL,
    EnterWorktreeTool.name, ExitWorktreeTool.name,
}  # fmt: skip

# A subagent's own context manager, for its model, file reads and events.
ContextFor = Callable[[str, FileStateCache, EventSink], ContextManager]


@dataclass(frozen=True)
class ParentSession:
    """What subagents share with the session that starts them (see the module doc)."""

    cwd: Path
    emit: EventSink
    gate: PermissionGate
    remember_rule: RememberRule
    hooks: HookRunner
    session_hooks: SessionHooks
    jobs: JobRegistry
    models: SessionModel
    prompt: SystemPrompt
    tool_context: ToolContext  # its session folder follows /clear
    context_for: ContextFor
    # The parent's loop: built after its tools (this Agent tool among them), asked for only
    # once the session runs.
    agent: Callable[[], Agent]
    # Rebuild the tool list the parent's requests carry (MCP tools deferred or not).
    refresh_tools: Callable[[], None] = lambda: None


class Subagents:
    """The session's agent definitions, its Agent tool, and the runs it launches."""

    def __init__(
        self,
        definitions: AgentDefinitions,
        enabled: bool,
        parent: ParentSession,
        given: tuple[str, ...] = (),
    ) -> None:
        """``enabled``: False for a session without subagents (no Agent tool); ``given``:
        the names of the agents given as JSON (``--agents``)."""
        self.definitions = definitions
        self.enabled = enabled
        self.parent = parent
        self.given = given

    def tools(self) -> list[Tool[Any]]:
        """The Agent tool, unless the session runs without subagents."""
        return [AgentTool(self.launch, self.listing)] if self.enabled else []

    def add_json(self, agents: dict[str, Any]) -> None:
        """Agents given as JSON after start-up (the Agent SDK's initialize request): they take
        precedence, as --agents does, and the tool list the model is sent says so."""
        warnings: list[str] = []
        given = AgentDefinitions()
        for definition in parse_agents(agents, "the SDK's agents", warnings):
            given.offer(definition)
        for definition in self.definitions.values():
            given.offer(definition)
        given.warnings = [*self.definitions.warnings, *warnings]
        self.definitions = given
        self.given = (*self.given, *(name for name in agents if name not in self.given))
        for warning in warnings:
            self.parent.emit(Notice(warning, "warning"))
        self.parent.refresh_tools()

    def listing(self) -> str:
        """The available agent types, for the tool description and after a compaction."""
        if not self.enabled:
            return ""
        return agents_listing(self.definitions.values())

    async def launch(self, params: AgentParams, tool_use_id: str) -> ToolResult:
        """The Agent tool's call: an unknown type is the model's error, said plainly."""
        kind = params.subagent_type or GENERAL_PURPOSE
        definition = self.definitions.get(kind)
        if definition is None:
            known = ", ".join(self.definitions)
            return ToolResult.error(
                f"Unknown subagent_type {kind!r}. Available agent types: {known}."
            )
        if params.run_in_background:
            return start_in_background(self.parent.jobs, self.run, definition, params, tool_use_id)
        agent_id = "a" + uuid.uuid4().hex[:16]
        ended = await self.run(definition, params, tool_use_id, agent_id)
        if ended.status != "completed":
            return ToolResult.error(
                f"The {definition.name} agent failed before it could report: {ended.text}"
            )
        meta = {"agent_id": agent_id, "agent_type": definition.name, "tool_uses": ended.tool_uses}
        # One text block, as Claude Code gives it (the Agent SDK shows the list as it comes).
        return ToolResult(
            output=[text_block(ended.report(agent_id))],
            display=_first_line(ended.text),
            meta=meta,
        )

    async def run(
        self,
        definition: AgentDefinition,
        params: AgentParams,
        tool_use_id: str,
        agent_id: str,
        background: bool = False,
        on_event: EventSink | None = None,
        output_file: str = "",
    ) -> Ended:
        """One subagent to its end (its report, or why it failed); an interrupt propagates.
        ``on_event`` also sees each of its events (a background agent's output file)."""
        emit = self.parent.emit
        stats = RunStats()
        started = time.perf_counter()
        relayed = relay(emit, tool_use_id, agent_id, stats)
        sub_emit = relayed if on_event is None else _both(relayed, on_event)
        kind = definition.name
        brief = (params.description, params.prompt, background)
        emit(SubagentStarted(tool_use_id, agent_id, kind, *brief))
        agent = self.build(definition, params, sub_emit, agent_id)

        def finished(status: SubagentStatus, text: str) -> Ended:
            took = round((time.perf_counter() - started) * 1000)
            ended = Ended(status, text, stats.last_tokens, stats.tool_uses, took)
            figures = (ended.total_tokens, ended.tool_uses, took, round(stats.cost_usd, 6))
            emit(SubagentFinished(tool_use_id, agent_id, kind, status, text, *figures, output_file))
            return ended

        try:
            outcome = await agent.submit(params.prompt)
        except asyncio.CancelledError:
            finished("interrupted", "")
            raise
        except (ApiError, MaxTurnsReached) as exc:
            return finished("failed", getattr(exc, "message", None) or str(exc))
        finally:
            _release(agent.runner.tools.values())
        return finished("completed", outcome.result.strip())

    def build(
        self, definition: AgentDefinition, params: AgentParams, emit: EventSink, agent_id: str
    ) -> Agent:
        """The subagent's loop, wired to the session's shared parts (see the module doc)."""
        parent = self.parent
        main = parent.agent()
        model = main.model
        if typed := params.model or definition.model:  # an alias or [1m] as the session's
            model = parent.models.parse(typed).id
        file_state = FileStateCache()
        context = ToolContext(
            cwd=parent.tool_context.cwd,  # the session's working directory now (a worktree)
            file_state=file_state,
            session_dir=parent.tool_context.session_dir,
            read_denied=parent.gate.read_denied,
            respect_gitignore=parent.tool_context.respect_gitignore,
        )
        tools = self.tools_for(definition)
        runner = ToolRunner(
            tools,
            context,
            parent.gate,
            emit,
            main.runner.ask,
            parent.remember_rule,
            ToolHooks(parent.hooks, emit),
        )
        client = ModelClient(client=main.client.client, policy=main.client.policy)
        client.emit = emit
        client.key_helper = main.client.key_helper  # a rotated key reaches subagents too
        system = [text_block(definition.prompt), *parent.prompt.blocks[1:]]
        agent = Agent(
            config=AgentConfig(
                model=model,
                limits=parent.models.limits_for,
                purpose="subagent",
                # The session's thinking, effort, metadata and model check.
                thinking=main.config.thinking,
                long_context_models=parent.models.long_context,
                metadata=main.config.metadata,
                model_check=main.config.model_check,
            ),
            client=client,
            runner=runner,
            system=system,
            emit=emit,
            stop_hook=self._stop_hook(agent_id, definition.name),
            costs=main.costs,
            policy=parent.context_for(model, file_state, emit),
        )
        return agent

    def tools_for(self, definition: AgentDefinition) -> list[Tool[Any]]:
        """Fresh built-in tools and the session's others (Skill, MCP), as the definition lists."""
        session_tools = list(self.parent.agent().runner.tools.values())
        fresh = default_tools(command_env=env_for_command)
        parent_bash = next((t for t in session_tools if isinstance(t, BashTool)), None)
        parent_fetch = next((t for t in session_tools if isinstance(t, WebFetchTool)), None)
        for tool in fresh:
            if isinstance(tool, BashTool) and parent_bash is not None:
                # Its own shell state, the session's sandbox (already warmed up).
                tool.sandbox = parent_bash.sandbox
            if isinstance(tool, WebFetchTool) and parent_fetch is not None:
                tool.read_page = parent_fetch.read_page  # the fast model reads its pages too
        names = {tool.name for tool in fresh}
        shared = [tool for tool in session_tools if tool.name not in names]
        tools = [tool for tool in [*fresh, *shared] if tool.name not in WITHHELD]
        if definition.tools is None:
            return tools
        wanted = set(definition.tools)
        # An MCP tool named with its long spelling is found by it too (agent.mcp.names).
        return [tool for tool in tools if wanted & {tool.name, *tool.rule_aliases}]

    def _stop_hook(self, agent_id: str, agent_type: str) -> StopHook:
        hooks = self.parent.session_hooks

        async def stop(active: bool, last_text: str) -> str | None:
            return await hooks.subagent_stop(active, last_text, agent_id, agent_type)

        return stop


def _both(first: EventSink, second: EventSink) -> EventSink:
    def sink(event: Event) -> None:
        first(event)
        second(event)

    return sink


def _release(tools: Iterable[Tool[Any]]) -> None:
    """A subagent's shell dies with it (its background commands too)."""
    for tool in tools:
        if isinstance(tool, BashTool):
            tool.kill_background()


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:200] if lines else ""
