"""How each agent event shows: transcript entries, the status line, the footer, the warning bar."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    ModeChanged,
    Notice,
    PermissionDenied,
    RequestStarted,
    ResponseDiscarded,
    SessionStarted,
    SubagentEvent,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnFinished,
    Usage,
    WorkingDirectoryChanged,
)
from tui.fullscreen.widgets.compaction_block import CompactionBlock
from tui.words import clearing_words, retry_words

if TYPE_CHECKING:
    from agent.core.context_state import ContextState
    from tui.fullscreen.agent_messages import JobFinished
    from tui.fullscreen.widgets.footer import StatusFooter
    from tui.fullscreen.widgets.status_line import StatusLine
    from tui.fullscreen.widgets.task_panel import TaskPanel
    from tui.fullscreen.widgets.transcript import Transcript
    from tui.fullscreen.widgets.warning_bar import WarningBar


class EventView:
    """Applies agent events to the app's widgets, in the order they arrive."""

    def __init__(
        self,
        transcript: Transcript,
        status: StatusLine,
        footer: StatusFooter,
        warning: WarningBar,
        tasks: TaskPanel | None = None,
    ) -> None:
        self.transcript = transcript
        self.tasks = tasks
        self.status = status
        self.footer = footer
        self.warning = warning
        self.compaction: CompactionBlock | None = None
        self.show_cost = True  # off where nothing is billed (the demo)
        self.moved: Callable[[Path], object] = lambda _cwd: None  # the session's folder changed

    def show_state(self, state: ContextState | None) -> None:
        self.footer.state = state
        self.warning.state = state

    async def show(self, event: Event) -> None:
        transcript = self.transcript
        if isinstance(event, TextDelta):
            self.status.show("Responding…")
            transcript.append_text(event.text)
        elif isinstance(event, ThinkingDelta):
            self.status.show("Thinking…")
            transcript.append_thinking(event.text)
        elif isinstance(event, RequestStarted):
            self.status.show("Thinking…")
        elif isinstance(event, AssistantMessage):
            transcript.end_text()
        elif isinstance(event, ResponseDiscarded):
            transcript.discard_text()
        elif isinstance(event, ToolStarted):
            transcript.end_text()
            self.status.show(f"Running {event.label or event.name}…")
            transcript.tool_started(event.tool_use_id, event.name, event.input, event.label)
        elif isinstance(event, ToolFinished):
            transcript.tool_finished(
                event.tool_use_id, event.is_error, event.display, event.output_preview, event.meta
            )
            if self.tasks is not None and isinstance(rows := event.meta.get("tasks"), list):
                self.tasks.show_tasks(rows)
        elif isinstance(event, ToolProgress):
            transcript.tool_progress(event.tool_use_id, event.lines)
        elif isinstance(event, PermissionDenied):
            transcript.tool_denied(event.tool_use_id, event.reason)
        elif isinstance(event, (SubagentEvent, SubagentFinished)):
            transcript.subagent_event(event)
        elif isinstance(event, SubagentStarted):
            self.status.show(f"Running the {event.agent_type} agent: {event.description}…")
        elif isinstance(event, ContextUpdate):
            self.show_state(event.state)
        elif isinstance(event, Usage):
            if self.show_cost:
                self.footer.cost_usd = event.total_cost_usd
        elif isinstance(event, ApiRetry):
            attempt, most, reason = event.attempt, event.max_attempts, event.reason
            self.status.count_down(
                lambda left: retry_words(attempt, most, reason, left), event.delay_s
            )
        elif isinstance(event, TurnFinished):
            transcript.end_text()
            if event.interrupted:
                transcript.tools_interrupted()
        else:
            await self._show_other(event)

    async def _show_other(self, event: Event) -> None:
        transcript = self.transcript
        if isinstance(event, CompactionStarted):
            transcript.end_text()
            self.status.clear()  # the block shows the progress
            self.compaction = CompactionBlock(event.trigger, event.detail, event.tokens_before)
            transcript.add(self.compaction)
        elif isinstance(event, CompactionFinished):
            block = self.compaction or transcript.add(CompactionBlock(event.record.trigger))
            assert isinstance(block, CompactionBlock)
            block.finish(event.record, transcript.cwd)
            self.compaction = None
        elif isinstance(event, CompactionFailed):
            if self.compaction is not None:
                self.compaction.fail(event.reason)
                self.compaction = None
            else:
                transcript.add_line(f"Auto-compaction failed: {event.reason}", "error")
        elif isinstance(event, Microcompacted):
            transcript.add_line(clearing_words(event), "notice")
        elif isinstance(event, Notice):
            kind = {"error": "error", "warning": "warning"}.get(event.level, "notice")
            transcript.add_line(event.text, kind)
        elif isinstance(event, ErrorEvent):
            transcript.add_line(f"Error: {event.message}", "error")
        elif isinstance(event, SessionStarted):
            if self.footer.model.split(" · ")[0] != event.model:  # keep the effort shown
                self.footer.model = event.model
            self.footer.mode = event.permission_mode
        elif isinstance(event, ModeChanged):
            self.footer.mode = event.mode
        elif isinstance(event, WorkingDirectoryChanged):
            self.transcript.cwd = Path(event.cwd)
            self.moved(Path(event.cwd))

    def cancel_compaction(self) -> None:
        if self.compaction is not None:
            self.compaction.cancel()
            self.compaction = None

    async def show_outcome(self, message: JobFinished) -> None:
        """How a line ended: interrupted, failed, or the command's result."""
        transcript = self.transcript
        if message.outcome == "interrupted":
            self.cancel_compaction()
            transcript.tools_interrupted()
            transcript.add_line("⎿ Interrupted · tell ccx what to do instead", "interrupted")
            return
        if message.error is not None:
            transcript.add_line(f"Error: {message.error}", "error")
            return
        result = message.result
        if result is None or result.command is None:
            return  # a prompt's reply has streamed already
        if result.command == "help" and "help" in result.data:
            from textual.widgets import Static

            from tui.fullscreen.widgets.welcome import KEYS
            from tui.help_table import help_table

            transcript.add(Static(help_table(result.data["help"], KEYS), classes="line -output"))
            return
        if "context" in result.data:
            from tui.fullscreen.widgets.context_view import ContextView

            transcript.add(ContextView(result.data["context"], transcript.cwd))
            return
        if result.command == "tasks" and any(
            r["status"] == "running" for r in result.data.get("jobs", [])
        ):
            self._pick_job(result.data["jobs"])
        if "compaction" in result.data and not result.is_error:
            return  # the CompactionFinished event already showed it
        if "copy" in result.data and not result.is_error:
            from tui.clipboard import copied_words

            copied = result.data["copy"]
            transcript.app.copy_to_clipboard(copied)  # OSC 52: the terminal's clipboard
            transcript.add_line(copied_words(copied), "output")
            return
        if result.command == "clear" and not result.is_error:
            await transcript.clear_all()
        if self.tasks is not None and result.command in ("clear", "todos"):
            self.tasks.show_tasks(result.data.get("tasks", []))
        if result.is_error:
            self.cancel_compaction()
        transcript.add_line(result.text, "error" if result.is_error else "output")

    def _pick_job(self, rows: list[dict[str, Any]]) -> None:
        """/tasks with jobs running: the dialog; the job chosen is stopped through the driver."""
        from tui.fullscreen.screens.tasks import TasksScreen
        from tui.fullscreen.widgets.prompt_box import PromptBox

        app = self.transcript.app

        def chosen(job_id: str | None) -> None:
            if job_id:
                app.post_message(PromptBox.Submitted(f"/tasks stop {job_id}"))

        app.push_screen(TasksScreen(rows), chosen)
