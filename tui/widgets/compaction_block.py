"""A compaction in the transcript: progress while it runs, then the result and its summary."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, Static

from tui.widgets.status_line import SPINNER

if TYPE_CHECKING:
    from agent.core.compaction_record import CompactionRecord


class CompactionBlock(Vertical):
    """Running (detail, elapsed time), then finished, failed or cancelled."""

    DEFAULT_CSS = """
    CompactionBlock {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border-left: thick $accent;
    }
    CompactionBlock > .compaction-line {
        height: auto;
    }
    CompactionBlock.-failed {
        border-left: thick $error;
    }
    CompactionBlock Collapsible {
        padding: 0;
        margin: 0;
        border: none;
        background: transparent;
    }
    CompactionBlock Collapsible Contents {
        padding: 0 0 0 2;
    }
    """

    def __init__(self, trigger: str, detail: str = "", tokens_before: int = 0) -> None:
        super().__init__()
        self.trigger = trigger
        self.detail = detail
        self.tokens_before = tokens_before
        self.state = "running"
        self.started = time.monotonic()
        self.summary: str | None = None  # the compaction's summary, once it is known
        self._frame = 0
        self._line = Static(classes="compaction-line")

    @classmethod
    def from_summary(cls, summary: str) -> CompactionBlock:
        """The summary message of an earlier compaction, in a resumed session."""
        block = cls("earlier")
        block.state = "earlier"
        block.summary = summary
        block._line.update(Text("⟲ The conversation before this point was compacted.", "dim"))
        return block

    def compose(self) -> ComposeResult:
        yield self._line

    def on_mount(self) -> None:
        if self.state == "running":
            self._timer = self.set_interval(0.1, self._tick)
            self._tick()
        elif self.summary:
            self._add_summary(self.summary)

    def _tick(self) -> None:
        if self.state != "running":
            return
        self._frame += 1
        elapsed = time.monotonic() - self.started
        text = Text()
        text.append(f"{SPINNER[self._frame % len(SPINNER)]} ", style="bold")
        text.append(f"Compacting ({self.trigger})", style="bold")
        if self.detail:
            text.append(f": {self.detail}")
        text.append(f" · {elapsed:.1f}s", style="dim")
        if self.trigger == "manual":
            text.append(" · esc to cancel", style="dim")
        self._line.update(text)

    def finish(self, record: CompactionRecord) -> None:
        from agent.app.commands import compaction_line

        self._stop("finished")
        self.summary = record.summary
        self._line.update(Text("✓ " + compaction_line(record), style="green"))
        if record.summary and self.is_mounted:
            self._add_summary(record.summary)  # else on_mount adds it

    def fail(self, reason: str) -> None:
        self._stop("failed")
        self.add_class("-failed")
        self._line.update(
            Text(f"✗ Compaction failed: {reason}. The conversation is unchanged.", style="red")
        )

    def cancel(self) -> None:
        self._stop("cancelled")
        self.add_class("-failed")
        self._line.update(
            Text("✗ Compaction cancelled. The conversation is unchanged.", style="yellow")
        )

    def _stop(self, state: str) -> None:
        self.state = state
        timer = getattr(self, "_timer", None)
        if timer is not None:
            timer.stop()

    def _add_summary(self, summary: str) -> None:
        body = Static(summary, markup=False, classes="compaction-summary")
        self.mount(Collapsible(body, title="Summary", collapsed=True))
