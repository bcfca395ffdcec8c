"""What a subagent's run adds up to: its figures as its events come in, and how it ended.

Shared by the runs the Agent tool waits for (tui.session.subagents) and the
ones it leaves in the background (tui.session.background_agents).
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.core.events import (
    Event,
    EventSink,
    SubagentEvent,
    SubagentStatus,
    ToolFinished,
    Usage,
)


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

    status: SubagentStatus
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
