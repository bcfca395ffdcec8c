"""A compaction in the transcript: progress while it runs, then the result and its summary."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tui.fullscreen.widgets.expandable import Expandable
from tui.fullscreen.widgets.status_line import SPINNER
from tui.words import relative

if TYPE_CHECKING:
    from agent.core.compaction_record import CompactionRecord, CompactionTrigger


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
    """

    def __init__(
        self,
        trigger: CompactionTrigger | Literal["earlier"],  # earlier: a resumed session's, unknown
        detail: str = "",
        tokens_before: int = 0,
    ) -> None:
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

    def compacted_here(self, summarized: int, kept: int) -> None:
        """An earlier compaction's marker, once what it summarized is read back above it."""
        kept_words = f", {kept} kept below" if kept else ""
        self._line.update(
            Text(
                f"⟲ Compacted here: the {summarized} messages above were summarized{kept_words}.",
                "dim",
            )
        )

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

    def finish(self, record: CompactionRecord, cwd: Path | None = None) -> None:
        from tui.commands.builtin import compaction_line

        self._stop("finished")
        self.summary = record.summary
        line = relative(compaction_line(record), cwd)
        if record.tokens_after >= record.tokens_before:  # it did not make the context smaller
            self._line.update(Text("⚠ " + line, style="yellow"))
        else:
            self._line.update(Text("✓ " + line, style="green"))
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
        self.mount(SummaryToggle(summary))


class SummaryToggle(Expandable):
    """The compaction's summary: one line, collapsed; a click, enter or ctrl+o shows it."""

    DEFAULT_CSS = """
    SummaryToggle {
        height: auto;
    }
    SummaryToggle:focus {
        background: $boost;
    }
    """

    def __init__(self, summary: str) -> None:
        super().__init__(classes="compaction-summary")
        self.summary = summary

    def can_expand(self) -> bool:
        return bool(self.summary.strip())

    def hidden_lines(self) -> int:
        return len(self.summary.strip().splitlines())

    def on_mount(self) -> None:
        self.claim_latest()
        self.refresh_content()

    def refresh_content(self) -> None:
        text = Text("Summary", style="bold")
        text.append(self.marker(), style="dim")
        if self.expanded:
            text.append("\n")
            for line in self.summary.strip().splitlines():
                text.append(f"  {line}\n")
            text.rstrip()
        self.update(text)
