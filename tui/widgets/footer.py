"""The always-visible footer: model, permission mode, cost and the context meter."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Static

from tui.meter import BAR_WIDTH, STARTING, meter_segments

if TYPE_CHECKING:
    from agent.core.context_state import ContextState

LEVEL_STYLES = {"ok": "green", "warning": "yellow", "error": "red", "blocking": "bold red"}
MODE_LABELS = {
    "default": ("default mode", "dim"),
    "acceptEdits": ("⏵⏵ accept edits", "magenta"),
    "plan": ("⏸ plan mode", "cyan"),
    "bypassPermissions": ("⚠ bypass permissions", "bold red"),
}


def meter_text(state: ContextState | None, width: int = BAR_WIDTH) -> Text:
    """The meter (``tui.meter``, the plain REPL's too), coloured by level."""
    if state is None:
        return Text(STARTING, style="dim")
    level = LEVEL_STYLES.get(state.level, "")
    styles = {"level": level or None, "dim": "dim", "stopped": "red", "": None}
    text = Text()
    for part, role in meter_segments(state, width):
        text.append(part, style=styles[role])
    return text


class ContextMeter(Static):
    """How full the context is: bar, used / window, percent, and the distance to auto-compact."""

    DEFAULT_CSS = """
    ContextMeter {
        width: auto;
        height: 1;
    }
    """

    state: reactive[ContextState | None] = reactive(None, layout=True)

    def render(self) -> Text:
        return meter_text(self.state)


class StatusFooter(Horizontal):
    """One line: model · permission mode · cost, and the context meter on the right."""

    DEFAULT_CSS = """
    StatusFooter {
        height: 1;
        dock: bottom;
        padding: 0 1;
        background: $panel;
    }
    StatusFooter > Static {
        width: auto;
        height: 1;
        margin-right: 2;
    }
    StatusFooter > #footer-spacer {
        width: 1fr;
        margin: 0;
    }
    StatusFooter > ContextMeter {
        margin: 0;
    }
    """

    model: reactive[str] = reactive("")
    mode: reactive[str] = reactive("default")
    cost_usd: reactive[float] = reactive(0.0)
    state: reactive[ContextState | None] = reactive(None)

    def compose(self) -> ComposeResult:
        yield Static(id="footer-model")
        yield Static(id="footer-mode")
        yield Static(id="footer-cost")
        yield Static(id="footer-spacer")
        yield ContextMeter()

    def watch_model(self, model: str) -> None:
        self._set("#footer-model", Text(model or "…", style="bold"))

    def watch_mode(self, mode: str) -> None:
        label, style = MODE_LABELS.get(mode, (mode, ""))
        text = Text(label, style=style)
        text.append(" (shift+tab)", style="dim")
        self._set("#footer-mode", text)

    def watch_cost_usd(self, cost: float) -> None:
        self._set("#footer-cost", Text(f"${cost:.2f}" if cost else "", style="dim"))

    def watch_state(self, state: ContextState | None) -> None:
        for meter in self.query(ContextMeter):
            meter.state = state

    def _set(self, selector: str, text: Text) -> None:
        for label in self.query(selector).results(Static):
            label.update(text)
