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
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent.core.events import (
    Event,
    EventSink,
    SubagentEvent,
    SubagentFinished,
    SubagentStarted,
    ToolFinished,
    Usage,
)
from agent.instructions.agents import (
    AgentDefinition,
    AgentDefinitions,
    agents_listing,
    discover_agents,
    parse_agents,
)
from agent.loop.agent import Agent, AgentConfig, MaxTurnsReached
from agent.loop.stop_hooks import StopHook
from agent.loop.tool_hooks import ToolHooks
from agent.loop.tool_runner import ToolRunner
from agent.model.catalog import ModelName
from agent.model.client import ApiError, ModelClient
from agent.permissions.safe_git import env_for_command
from tools.agent import GENERAL_PURPOSE, AgentParams, AgentTool
from tools.base import Tool, ToolContext, ToolResult
from tools.bash import BashTool
from tools.exit_plan_mode import ExitPlanModeTool
from tools.file_state import FileStateCache
from tools.registry import default_tools
from tools.web_fetch import WebFetchTool
from tui.session.background_agents import start_in_background
from tui.session.context_setup import build_subagent_context

if TYPE_CHECKING:
    from tui.session.runtime import Runtime

# Tools a subagent never gets, whatever its definition lists.
WITHHELD = {AgentTool.name, *AgentTool.aliases, ExitPlanModeTool.name}


@dataclass
class RunStats:
    """What a subagent's events add up to, for its report and its finished event."""

    tool_uses: int = 0
    cost_usd: float = 0.0
    last_tokens: int = 0  # the context of its latest request, plus what it wrote

    def observe(self, event: Event) -> None:
        if isinstance(event, ToolFinished):
            self.tool_uses += 1
        elif isinstance(event, Usage):
            self.cost_usd += event.cost_usd
            self.last_tokens = (
                event.input_tokens
                + event.cache_read_input_tokens
                + event.cache_creation_input_tokens
                + event.output_tokens
            )


@dataclass(frozen=True)
class Ended:
    """How a subagent run ended: ``text`` is its report, or why it failed."""

    status: str  # completed, failed
    text: str
    total_tokens: int
    tool_uses: int
    duration_ms: int

    def report(self, agent_id: str) -> str:
        """The tool result: the report, then its figures (as Claude Code gives them)."""
        report = self.text or "(the agent finished without a report)"
        return (
            f"{report}\n\nagentId: {agent_id}\n"
            f"<usage>total_tokens: {self.total_tokens}\ntool_uses: {self.tool_uses}\n"
            f"duration_ms: {self.duration_ms}</usage>"
        )


def relay(emit: EventSink, tool_use_id: str, agent_id: str, stats: RunStats) -> EventSink:
    """The subagent's event sink: each event counted, then passed on under its Agent call."""

    def sink(event: Event) -> None:
        stats.observe(event)
        emit(SubagentEvent(tool_use_id, agent_id, event))

    return sink


class Subagents:
    """The session's agent definitions, its Agent tool, and the runs it launches."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.definitions = discover_agents(
            runtime.cwd, runtime.options.agents, include_project=runtime.options.project_trusted
        )
        for warning in self.definitions.warnings:
            runtime.emit_notice(warning)

    def tools(self) -> list[Tool]:
        """The Agent tool, unless the session runs without subagents."""
        return [AgentTool(self.launch, self.listing)] if self.runtime.options.subagents else []

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
        for warning in warnings:
            self.runtime.emit_notice(warning)
        self.runtime.agent.tools_api = self.runtime.runner.api_tools()

    def listing(self) -> str:
        """The available agent types, for the tool description and after a compaction."""
        if not self.runtime.options.subagents:
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
            return start_in_background(self, definition, params, tool_use_id)
        agent_id = "a" + uuid.uuid4().hex[:16]
        ended = await self.run(definition, params, tool_use_id, agent_id)
        if ended.status != "completed":
            return ToolResult.error(
                f"The {definition.name} agent failed before it could report: {ended.text}"
            )
        meta = {"agent_id": agent_id, "agent_type": definition.name, "tool_uses": ended.tool_uses}
        return ToolResult(output=ended.report(agent_id), display=_first_line(ended.text), meta=meta)

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
        emit = self.runtime.emit
        stats = RunStats()
        started = time.perf_counter()
        relayed = relay(emit, tool_use_id, agent_id, stats)
        sub_emit = relayed if on_event is None else _both(relayed, on_event)
        kind = definition.name
        brief = (params.description, params.prompt, background)
        emit(SubagentStarted(tool_use_id, agent_id, kind, *brief))
        agent = self.build(definition, params, sub_emit, agent_id)

        def finished(status: str, text: str) -> Ended:
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
        rt = self.runtime
        model = rt.agent.model
        if typed := params.model or definition.model:  # an alias or [1m] as the session's
            name = ModelName.parse(typed)
            model = name.id
            if name.long_context:
                rt.long_context_models.add(model)
        file_state = FileStateCache()
        context = ToolContext(
            cwd=rt.cwd,
            file_state=file_state,
            session_dir=rt.session.folder,
            read_denied=rt.gate.read_denied,
        )
        tools = self.tools_for(definition)
        runner = ToolRunner(
            tools,
            context,
            rt.gate,
            emit,
            rt.runner.ask,
            rt.remember_rule,
            ToolHooks(rt.hooks, emit),
        )
        parent_client = rt.agent.client
        client = ModelClient(client=parent_client.client, policy=parent_client.policy)
        client.emit = emit
        system = [{"type": "text", "text": definition.prompt}, *rt.system[1:]]
        agent = Agent(
            config=AgentConfig(
                model=model,
                limits=rt.limits_for,
                purpose="subagent",
                # The session's thinking, effort, metadata and model check.
                thinking=rt.agent.config.thinking,
                long_context_models=rt.long_context_models,
                metadata=rt.agent.config.metadata,
                model_check=rt.agent.config.model_check,
            ),
            client=client,
            runner=runner,
            system=system,
            emit=emit,
            stop_hook=self._stop_hook(agent_id, definition.name),
            costs=rt.agent.costs,
        )
        agent.policy = build_subagent_context(rt, model, file_state, emit)
        return agent

    def tools_for(self, definition: AgentDefinition) -> list[Tool]:
        """Fresh built-in tools and the session's others (Skill, MCP), as the definition lists."""
        rt = self.runtime
        fresh = default_tools(command_env=env_for_command)
        parent_bash = next((t for t in rt.tools if isinstance(t, BashTool)), None)
        parent_fetch = next((t for t in rt.tools if isinstance(t, WebFetchTool)), None)
        for tool in fresh:
            if isinstance(tool, BashTool) and parent_bash is not None:
                # Its own shell state, the session's sandbox (already warmed up).
                tool.sandbox = parent_bash.sandbox
            if isinstance(tool, WebFetchTool) and parent_fetch is not None:
                tool.read_page = parent_fetch.read_page  # the fast model reads its pages too
        names = {tool.name for tool in fresh}
        shared = [tool for tool in rt.tools if tool.name not in names]
        tools = [tool for tool in [*fresh, *shared] if tool.name not in WITHHELD]
        if definition.tools is None:
            return tools
        wanted = set(definition.tools)
        # An MCP tool named with its long spelling is found by it too (agent.mcp.names).
        return [tool for tool in tools if wanted & {tool.name, *tool.rule_aliases}]

    def _stop_hook(self, agent_id: str, agent_type: str) -> StopHook:
        hooks = self.runtime.session_hooks

        async def stop(active: bool, last_text: str) -> str | None:
            return await hooks.subagent_stop(active, last_text, agent_id, agent_type)

        return stop


def _both(first: EventSink, second: EventSink) -> EventSink:
    def sink(event: Event) -> None:
        first(event)
        second(event)

    return sink


def _release(tools: Iterable[Tool]) -> None:
    """A subagent's shell dies with it (its background commands too)."""
    for tool in tools:
        if isinstance(tool, BashTool):
            tool.kill_background()


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:200] if lines else ""
