"""A tool call in the transcript: one compact line that expands to its diff or output.

A finished call keeps the user's whole copy of what it returned (capped by the tool
layer, which says so); collapsed, a block shows a few lines of it and how many more
there are ("… +295 lines"), and ctrl+o or a click shows all of them.
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text

from agent.core.events import SubagentEvent, SubagentFinished
from tools.shown_output import shown_output
from tui.fullscreen.widgets.agent_progress import AgentProgress
from tui.fullscreen.widgets.expandable import HINT_EXPAND, Expandable

DIFF_LINES = 40  # a diff's first lines, shown collapsed (and in the permission dialog)
OUTPUT_LINES = 5  # a command's or an error's last lines, shown collapsed
ARG_WIDTH = 90
SHOWN_COLLAPSED = {"Edit", "Write", "MultiEdit", "Bash"}  # their first/last lines, unasked
AGENT_TOOLS = {"Agent", "Task"}


def _fit(label: str) -> str:
    label = " ".join(label.split())
    return label if len(label) <= ARG_WIDTH else label[: ARG_WIDTH - 1] + "…"


def diff_text(diff: str, limit: int | None = DIFF_LINES) -> Text:
    """The diff coloured; cut after ``limit`` lines with a count, or whole with ``None``."""
    lines = diff.rstrip("\n").splitlines()
    text = Text()
    for line in lines[:limit]:
        if line.startswith(("+++", "---")):
            style = "bold dim"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = "dim"
        text.append(line + "\n", style=style)
    if limit is not None and len(lines) > limit:
        text.append(f"… {len(lines) - limit} more lines\n", style="dim italic")
    text.rstrip()
    return text


def output_text(output: str, style: str = "") -> Text:
    return Text(output.rstrip("\n"), style=style)


def first_line(text: str) -> str:
    stripped = text.strip()
    return stripped.splitlines()[0][:ARG_WIDTH] if stripped else ""


def indented(text: Text, prefix: str = "    ") -> Text:
    out = Text()
    for index, line in enumerate(text.split("\n", allow_blank=True)):
        if index:
            out.append("\n")
        out.append(prefix)
        out.append_text(line)
    return out


class ToolBlock(Expandable):
    """Running, then done or failed; a click, enter or ctrl+o toggles the details."""

    DEFAULT_CSS = """
    ToolBlock {
        height: auto;
        padding: 0 1;
        margin: 0 0 1 0;
    }
    ToolBlock:focus {
        background: $boost;
    }
    ToolBlock.-error {
        color: $text-error;
    }
    """

    def __init__(
        self,
        tool_use_id: str,
        name: str,
        tool_input: dict[str, Any],
        *,
        label: str = "",
        id: str | None = None,
    ) -> None:
        """``label``: the tool's own label for the call (ToolStarted.label)."""
        super().__init__(id=id)
        self.tool_use_id = tool_use_id
        self.tool_name = name
        self.tool_input = tool_input
        self.label = _fit(label or name)
        self.status = "running"  # or "asking" (its permission question is open), "done"...
        self.started = time.monotonic()
        self.output_lines = 0  # a running command's lines so far (ToolProgress)
        self.summary = ""
        self.body: Text | None = None  # every line the user can expand to
        # How many of the body's lines show while collapsed: its first ones (> 0), its last (< 0).
        self.shown = 0
        # An Agent call: its subagent's latest calls and tokens, drawn under the label.
        self.progress = AgentProgress() if name in AGENT_TOOLS else None

    @classmethod
    def from_history(cls, view: Any) -> ToolBlock:
        """A collapsed block for a stored call (a ``tui.fullscreen.history.ToolView``)."""
        block = cls(view.tool_use_id, view.name, view.input, label=view.label)
        if not view.answered:
            block.status, block.summary = "error", "interrupted"
        else:
            block.status = "error" if view.is_error else "done"
            block.summary = first_line(view.result) if view.is_error else ""
            if view.result.strip():
                style = "red" if view.is_error else ""
                block.body = output_text(shown_output(view.result), style=style)
                block.shown = -OUTPUT_LINES if view.is_error or view.name == "Bash" else 0
        block.set_class(block.status == "error", "-error")
        return block

    def can_expand(self) -> bool:
        return self.hidden_lines() > 0

    def hidden_lines(self) -> int:
        return (self.progress.hidden() if self.progress is not None else 0) + self.body_hidden()

    def body_hidden(self) -> int:
        """The body's lines the collapsed block leaves out."""
        if self.body is None:
            return 0
        return max(0, self.body.plain.count("\n") + 1 - abs(self.shown))

    def subagent(self, event: SubagentEvent | SubagentFinished) -> None:
        """A subagent's event, from under this Agent call."""
        if self.progress is None:
            self.progress = AgentProgress()
        if isinstance(event, SubagentFinished):
            self.progress.finish(event)
            if event.status == "interrupted":  # no result follows: the turn is over
                self.status, self.summary = "error", "interrupted"
                self.set_class(True, "-error")
        else:
            self.progress.observe(event.event)
        self.refresh_content()

    def finish(self, is_error: bool, display: str, preview: str, meta: dict[str, Any]) -> None:
        self.status = "error" if is_error else "done"
        self.set_class(is_error, "-error")
        if is_error:
            self.summary = first_line(display or preview) or "failed"
        elif self.tool_name == "Bash":
            code = meta.get("exit_code")
            self.summary = f"exit {code}" if code not in (None, 0) else ""
        elif self.progress is not None and meta.get("background"):
            self.summary = first_line(display)  # it runs on: /tasks follows it
        elif self.progress is not None:
            self.summary = self.progress.figures()
            preview = preview.split("\n\nagentId: ")[0]  # the report, without its figures
        else:
            self.summary = first_line(meta.get("display") or display)
        self.body = self._body(is_error, display, preview, meta)
        if self.body is not None and (is_error or self.tool_name in SHOWN_COLLAPSED):
            self.shown = DIFF_LINES if meta.get("diff") and not is_error else -OUTPUT_LINES
        self.claim_latest()
        self.refresh_content()

    def asking(self, waiting: bool) -> None:
        """Its permission question is open (True), or was answered yes: it runs from now."""
        if self.status not in ("running", "asking"):
            return
        self.status = "asking" if waiting else "running"
        self.started = time.monotonic()
        self.refresh_content()

    def interrupt(self) -> None:
        """The turn was stopped before this call finished: it never will."""
        if self.status not in ("running", "asking"):
            return
        self.status, self.summary = "error", "interrupted"
        self.set_class(True, "-error")
        self.refresh_content()

    def deny(self, reason: str) -> None:
        self.status = "denied"
        self.summary = "denied"
        self.body = Text(reason, style="red")
        self.shown = -OUTPUT_LINES
        self.set_class(True, "-error")
        self.claim_latest()
        self.refresh_content()

    def _body(
        self, is_error: bool, display: str, preview: str, meta: dict[str, Any]
    ) -> Text | None:
        if is_error:
            return output_text(preview or display, style="red") if (preview or display) else None
        if meta.get("diff"):
            return diff_text(meta["diff"], limit=None)
        if self.tool_name == "Bash":
            return output_text(display) if display.strip() else None
        if preview.strip() and self.tool_name not in ("Read",):
            return output_text(preview)
        return None

    def on_mount(self) -> None:
        self.claim_latest()  # a block from a resumed session, mounted in order
        self.refresh_content()
        if self.status == "running":
            self._clock = self.set_interval(0.5, self._tick)

    def _tick(self) -> None:
        if self.status in ("running", "asking"):
            self.refresh_content()
        else:
            self._clock.stop()

    def refresh_content(self) -> None:
        glyph, style = {
            "running": ("○", "dim"),
            "asking": ("○", "yellow"),
            "done": ("●", "green"),
            "error": ("●", "red"),
            "denied": ("⊘", "red"),
        }[self.status]
        text = Text()
        text.append(f"{glyph} ", style=style)
        text.append(self.label, style="bold")
        if self.status == "running":
            took = time.monotonic() - self.started
            words = f"  running… {took:.0f}s" if took >= 1 else "  running…"
            if self.output_lines:
                words += f" · {self.output_lines} line{'s' if self.output_lines != 1 else ''}"
            text.append(words, style="dim italic")
        elif self.status == "asking":
            text.append("  waiting for permission", style="yellow italic")
        elif self.summary:
            text.append(f"  ⎿ {self.summary}", style="red" if self.status != "done" else "dim")
        if self.progress is not None and (
            self.status == "running" or (self.expanded and self.progress.steps)
        ):
            text.append("\n")
            text.append_text(indented(self.progress.lines(self.expanded)))
        if self.body is not None and (self.expanded or not self.shown):
            text.append(self.marker(), style="dim")
            if self.expanded:
                text.append("\n")
                text.append_text(indented(self.body))
        elif self.body is not None:
            text.append("\n")
            text.append_text(indented(self._collapsed_body()))
        self.update(text)

    def _collapsed_body(self) -> Text:
        """The body's first or last lines, and how many more there are."""
        assert self.body is not None
        lines = self.body.split("\n", allow_blank=True)
        hidden = self.body_hidden()
        if not hidden:
            return self.body
        words = f"… +{hidden} lines" + (f" ({HINT_EXPAND})" if self.is_latest else "")
        note = Text(words, style="dim")
        if self.shown > 0:
            return Text("\n").join([*lines[: self.shown], note])
        return Text("\n").join([note, *lines[self.shown :]])
