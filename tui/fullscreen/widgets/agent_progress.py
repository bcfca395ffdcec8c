"""A subagent's progress inside its Agent tool block: its latest tool calls and its tokens.

The Agent call's ``ToolBlock`` owns one ``AgentProgress``; the event view feeds
it the subagent's events (``SubagentEvent``), and the block draws
``lines()`` under its label: while the subagent runs the latest few calls,
expanded every call it kept, and after it ends the figures of its run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text

from agent.core.events import (
    Event,
    SubagentFinished,
    ToolFinished,
    ToolStarted,
    Usage,
)
from compaction.thresholds import format_tokens

LATEST = 3  # calls shown while collapsed
KEPT = 50  # calls kept for the expanded view


@dataclass
class Step:
    label: str
    status: str = "running"  # running, done, error


@dataclass
class AgentProgress:
    steps: list[Step] = field(default_factory=list)
    by_id: dict[str, Step] = field(default_factory=dict)
    tokens: int = 0
    tool_uses: int = 0
    finished: SubagentFinished | None = None

    def observe(self, event: Event) -> None:
        if isinstance(event, ToolStarted):
            step = Step(" ".join((event.label or event.name).split())[:90])
            self.by_id[event.tool_use_id] = step
            self.steps = [*self.steps, step][-KEPT:]
        elif isinstance(event, ToolFinished):
            self.tool_uses += 1
            ended = self.by_id.pop(event.tool_use_id, None)
            if ended is not None:
                ended.status = "error" if event.is_error else "done"
        elif isinstance(event, Usage):
            self.tokens = (
                event.input_tokens
                + event.cache_read_input_tokens
                + event.cache_creation_input_tokens
                + event.output_tokens
            )

    def finish(self, event: SubagentFinished) -> None:
        self.finished = event
        self.tokens = event.total_tokens or self.tokens
        self.tool_uses = event.tool_uses

    def hidden(self) -> int:
        """Calls the collapsed view leaves out."""
        return max(0, len(self.steps) - LATEST)

    def figures(self) -> str:
        calls = f"{self.tool_uses} tool use{'s' if self.tool_uses != 1 else ''}"
        words = f"{calls} · {format_tokens(self.tokens)} tokens"
        if self.finished is not None:
            words += f" · {self.finished.duration_ms / 1000:.1f}s"
        return words

    def lines(self, expanded: bool) -> Text:
        shown = self.steps if expanded else self.steps[-LATEST:]
        text = Text()
        if not expanded and self.hidden():
            text.append(f"… {self.hidden()} earlier calls\n", style="dim italic")
        for step in shown:
            glyph, style = {"running": ("○", "dim"), "done": ("✓", "green"), "error": ("✗", "red")}[
                step.status
            ]
            text.append(f"{glyph} ", style=style)
            text.append(step.label + "\n", style="dim")
        text.append(self.figures(), style="dim")
        return text
