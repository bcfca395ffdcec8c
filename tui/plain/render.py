"""How the plain REPL shows a session: agent events as lines on a rich Console, and the meter.

Assistant text is written as it streams; each tool call becomes one line
(✓/✗, name, what it touched, the tail of its output), with a "running" line
first when it takes more than a second; compaction shows what is being
summarized, a ticking elapsed time on a terminal, then the ``Compacted …``
line. The meter is the full-screen footer's (``tui.meter``), a pure function of the
context state, so both front ends and the tests read the same text.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable

from rich.console import Console
from rich.markup import escape

from agent.core.context_state import ContextState
from agent.core.events import (
    ApiRetry,
    AssistantMessage,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    ContextUpdate,
    ErrorEvent,
    Event,
    Microcompacted,
    Notice,
    ResponseDiscarded,
    SubagentEvent,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from compaction.thresholds import format_tokens, warning_text
from tools.paths import short_path
from tui.commands.builtin import compaction_line
from tui.meter import meter_line
from tui.plain.wrap import StreamWrapper
from tui.words import clearing_words, retry_words

LEVEL_STYLES = {"ok": "green", "warning": "yellow", "error": "red", "blocking": "bold red"}
RUNNING_AFTER_S = 1.0
TAIL_CHARS = 70


# -- the meter ------------------------------------------------------------------------------


def meter_text(state: ContextState) -> str:
    """The footer's meter (``tui.meter``), as the toolbar's plain text."""
    return meter_line(state)


def status_text(model: str, mode: str, state: ContextState | None) -> str:
    """The whole status line: model · permission mode · meter."""
    parts = [model, mode]
    if state is not None:
        parts.append(meter_text(state))
    return " · ".join(parts)


# -- tool lines -----------------------------------------------------------------------------


def call_words(name: str, label: str) -> str:
    """What follows the tool's name on its line, from the tool's own label (``Read src/app.py``
    gives ``src/app.py``; a label without the name, a Bash description say, stays whole)."""
    if label == name:
        return ""
    return label[len(name) + 1 :] if label.startswith(name + " ") else label


def output_tail(text: str, limit: int = TAIL_CHARS) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    last = lines[-1]
    return last if len(last) <= limit else "…" + last[-(limit - 1) :]


def hidden_lines(text: str) -> int:
    """The lines of a tool's output the one-line summary leaves out (it shows the last)."""
    return max(0, len([line for line in text.splitlines() if line.strip()]) - 1)


# -- the renderer ---------------------------------------------------------------------------


class PlainRenderer:
    """Turns agent events into console output; says so when the context level rises."""

    def __init__(
        self,
        console: Console,
        cwd: str = ".",
        context_state: Callable[[], ContextState | None] = lambda: None,
    ) -> None:
        self.console = console
        self.cwd = cwd
        self.context_state = context_state
        self.level = "ok"
        self._streaming = False
        self._thinking = False
        self._wrap = StreamWrapper(lambda: self.console.width)
        self._running: dict[str, asyncio.TimerHandle] = {}
        self._tool_labels: dict[str, tuple[str, str]] = {}  # tool_use id -> (name, words)
        self._background_agents: set[str] = set()  # their calls are not shown, their end is
        self._compaction_started: float | None = None
        self._ticker: asyncio.Task[None] | None = None

    # -- output helpers -----------------------------------------------------------------

    def line(self, text: str, style: str | None = None) -> None:
        self.end_stream()
        # A terminal wraps it at words; piped output keeps each line whole.
        self.console.print(text, style=style, markup=False, highlight=False, soft_wrap=self._piped)

    def markup(self, text: str) -> None:
        self.end_stream()
        self.console.print(text, highlight=False, soft_wrap=self._piped)

    @property
    def _piped(self) -> bool:
        return not self.console.is_terminal

    def end_stream(self) -> None:
        if self._streaming:
            rest = self._wrap.end()
            self.console.print(rest, end="", markup=False, highlight=False, soft_wrap=True)
        if self._streaming or self._thinking:
            self.console.print()
            self._streaming = self._thinking = False

    # -- events -------------------------------------------------------------------------

    def handle(self, event: Event) -> None:
        handler = getattr(self, f"_on_{type(event).__name__}", None)
        if handler is not None:
            handler(event)

    def _on_TextDelta(self, event: TextDelta) -> None:
        if self._thinking:
            self.end_stream()
        if not self._streaming:
            self.console.print("● ", style="bold", end="", markup=False)
            self._streaming = True
            self._wrap = StreamWrapper(lambda: self.console.width, column=2)
        text = event.text if self._piped else self._wrap.feed(event.text)
        self.console.print(text, end="", markup=False, highlight=False, soft_wrap=True)
        self.console.file.flush()

    def _on_ThinkingDelta(self, event: ThinkingDelta) -> None:
        if not self._thinking:
            self.end_stream()
            self.console.print("∴ Thinking… ", style="dim italic", end="", markup=False)
            self._thinking = True

    def _on_AssistantMessage(self, _event: AssistantMessage) -> None:
        self.end_stream()

    def _on_ToolStarted(self, event: ToolStarted) -> None:
        self.end_stream()
        label = call_words(event.name, event.label)
        self._tool_labels[event.tool_use_id] = (event.name, label)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._running[event.tool_use_id] = loop.call_later(
            RUNNING_AFTER_S,
            self.line,
            f"  … {event.name} {label} (running; Ctrl-C stops it)",
            "dim",
        )

    def quiet_running(self, tool_use_id: str) -> None:
        """No "running" line for this call (it is waiting for the user, who can see that)."""
        timer = self._running.pop(tool_use_id, None)
        if timer is not None:
            timer.cancel()

    def _on_ToolFinished(self, event: ToolFinished) -> None:
        self.quiet_running(event.tool_use_id)
        name, label = self._tool_labels.pop(event.tool_use_id, (event.name, ""))
        mark, style = ("✗", "red") if event.is_error else ("✓", "green")
        output = event.display or event.output_preview
        tail = output_tail(output)
        text = f"[{style}]{mark}[/] [bold]{escape(name)}[/] {escape(label)}"
        if tail:
            text += f" [dim]· {escape(tail)}[/]"
        hidden = hidden_lines(output)
        if hidden:
            text += f" [dim](+{hidden} lines)[/]"
        self.markup(text)

    # A subagent: one dim line per tool call it makes, under its Agent call, and its end.

    def _on_SubagentStarted(self, event: SubagentStarted) -> None:
        self.quiet_running(event.tool_use_id)
        if event.background:  # its calls would land among the parent's lines: its end only
            self._background_agents.add(event.agent_id)
            return
        self.line(f"  ⎿ {event.agent_type}: {event.description}", "dim")

    def _on_SubagentEvent(self, event: SubagentEvent) -> None:
        inner = event.event
        if event.agent_id in self._background_agents:
            return
        if isinstance(inner, ToolStarted):
            self._tool_labels[inner.tool_use_id] = (inner.name, call_words(inner.name, inner.label))
        elif isinstance(inner, ToolFinished):
            name, label = self._tool_labels.pop(inner.tool_use_id, (inner.name, ""))
            mark = "✗" if inner.is_error else "✓"
            self.line(f"    {mark} {name} {label}".rstrip(), "dim")

    def _on_SubagentFinished(self, event: SubagentFinished) -> None:
        calls = f"{event.tool_uses} tool use{'s' if event.tool_uses != 1 else ''}"
        figures = f"{calls} · {format_tokens(event.total_tokens)} tokens"
        took = f"{event.duration_ms / 1000:.1f}s"
        style = "dim" if event.status == "completed" else "red"
        self.line(f"  ⎿ {event.agent_type} {event.status} · {figures} · {took}", style)

    def _on_ApiRetry(self, event: ApiRetry) -> None:
        # A printed line cannot count down: it says how long the wait is.
        words = retry_words(event.attempt, event.max_attempts, event.reason, event.delay_s)
        self.line(f"  {words}", "yellow")

    def _on_ResponseDiscarded(self, event: ResponseDiscarded) -> None:
        # Printed text cannot be taken back: say that what follows replaces it.
        self.line(f"({event.reason}; the partial reply above is discarded)", "dim")

    def _on_Notice(self, event: Notice) -> None:
        style = {"info": "dim", "warning": "yellow", "error": "red"}.get(event.level, "yellow")
        self.line(event.text, style)

    def _on_ErrorEvent(self, event: ErrorEvent) -> None:
        self.line(f"Error: {event.message}", "red")

    def _on_TurnFinished(self, _event: TurnFinished) -> None:
        self.end_stream()

    def _on_ContextUpdate(self, event: ContextUpdate) -> None:
        previous = self.level
        self.level = event.state.level
        if self.level != previous and self.level != "ok":
            text = self.warning()
            if text:
                self.line(f"⚠ {text}", LEVEL_STYLES.get(self.level, "yellow"))

    def _on_Microcompacted(self, event: Microcompacted) -> None:
        self.line(f"  {clearing_words(event)}", "dim")

    def _on_CompactionStarted(self, event: CompactionStarted) -> None:
        self._compaction_started = time.monotonic()
        detail = f": {event.detail}" if event.detail else ""
        self.line(
            f"⟳ Compacting ({event.trigger}){detail}, {format_tokens(event.tokens_before)} "
            "tokens… (Ctrl-C cancels)",
            "cyan",
        )
        self._start_ticker()

    def _on_CompactionFinished(self, event: CompactionFinished) -> None:
        self._stop_ticker()
        record = event.record
        restored = dict(record.restored)
        if restored.get("files"):
            restored["files"] = [short_path(path, self.cwd) for path in restored["files"]]
        grew = record.tokens_after >= record.tokens_before  # did not make the context smaller
        line = compaction_line(dataclasses.replace(record, restored=restored))
        self.line(line, "yellow" if grew else "green")
        summary_tokens = record.summary_tokens
        if summary_tokens:
            self.line(
                f"  Summary: {format_tokens(summary_tokens)} tokens. /undo-compact restores "
                "the conversation as it was.",
                "dim",
            )

    def _on_CompactionFailed(self, event: CompactionFailed) -> None:
        self._stop_ticker()
        self.line(f"Compaction ({event.trigger}) failed: {event.reason}", "red")

    # -- the meter's words ----------------------------------------------------------------

    def warning(self) -> str | None:
        state = self.context_state()
        return warning_text(state) if state is not None else None

    @property
    def compacting(self) -> bool:
        """A compaction started and has neither finished nor failed."""
        return self._compaction_started is not None

    def compaction_cancelled(self) -> None:
        self._stop_ticker()
        self.line("Compaction cancelled; the conversation is unchanged.", "yellow")

    def _start_ticker(self) -> None:
        if not self.console.is_terminal:
            return
        try:
            self._ticker = asyncio.get_running_loop().create_task(self._tick())
        except RuntimeError:
            self._ticker = None

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
            self.console.file.write("\r\x1b[2K")
            self.console.file.flush()
        self._compaction_started = None

    async def _tick(self) -> None:
        while self._compaction_started is not None:
            await asyncio.sleep(0.5)
            if self._compaction_started is None:
                return
            elapsed = time.monotonic() - self._compaction_started
            self.console.file.write(f"\r\x1b[2K  summarizing… {elapsed:.0f}s")
            self.console.file.flush()

    def close(self) -> None:
        for timer in self._running.values():
            timer.cancel()
        self._running.clear()
        self._stop_ticker()
