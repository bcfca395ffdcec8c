"""The always-visible footer: model, permission mode, cost, the statusLine text and the meter.

The meter has priority at every width: when the line is short, the mode's key
hint goes first, then the model's ``claude-`` prefix, then the mode's long
words, then the model is cut with an ellipsis or dropped, then the cost, and
only then the meter's bar shortens (to keep a mode other than the default in
sight); the figures (used / window, percent, the distance to
auto-compact) are never cut from 60 columns up. ``fit_footer`` makes that
choice as a pure function of the width, so tests can check every width.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.events import Resize
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
# What a narrow footer keeps of the mode: the default says nothing, the others stay visible.
MODE_SHORT = {
    "default": "",
    "acceptEdits": "⏵⏵ accept",
    "plan": "⏸ plan",
    "bypassPermissions": "⚠ bypass",
}
MODE_HINT = " (shift+tab)"
GAP = 2  # cells after each piece on the left (its margin in the CSS below)
SPACER = 1  # the flexible cell before the meter: Textual gives a 1fr column at least one
MIN_MODEL = 6  # a model cut shorter than this (with its ellipsis) says nothing; drop it instead


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


@dataclass(frozen=True)
class FooterLayout:
    """What each piece of the footer shows at one width ("" hides a piece)."""

    model: str
    mode: str
    hint: bool
    cost: str
    bar_width: int
    status_width: int = 0  # cells of the statusLine command's text; 0 hides it
    status_apart: bool = False  # on a line of its own above the footer


def fit_footer(
    width: int,
    model: str,
    mode: str,
    cost_usd: float,
    state: ContextState | None,
    status: str = "",
) -> FooterLayout:
    """The richest footer that fits ``width`` cells, giving way in the module's order; the
    statusLine command's text (``status``, plain) goes after the cost when it fits whole,
    else on a line of its own, cut with an ellipsis at ``width``: never at the meter's cost."""
    layout = _fit_line(width, model, mode, cost_usd, state)
    cells = Text(status).cell_len
    if not cells:
        return layout
    free = width - meter_text(state, layout.bar_width).cell_len - SPACER - _left_width(layout)
    if cells + GAP <= free:
        return replace(layout, status_width=cells)
    return replace(layout, status_width=min(cells, width), status_apart=True)


def _fit_line(
    width: int, model: str, mode: str, cost_usd: float, state: ContextState | None
) -> FooterLayout:
    bar = BAR_WIDTH
    while bar > 0 and meter_text(state, bar).cell_len > width:
        bar -= 1
    room = width - meter_text(state, bar).cell_len - SPACER
    cost = f"${cost_usd:.2f}" if cost_usd else ""
    label = MODE_LABELS.get(mode, (mode, ""))[0]
    short_mode = MODE_SHORT.get(mode, mode)
    short_model = model.removeprefix("claude-")
    tries = [
        (model, label, True),
        (model, label, False),
        (short_model, label, False),
        (short_model, short_mode, False),
    ]
    for shown_model, shown_mode, hint in tries:
        layout = FooterLayout(shown_model, shown_mode, hint, cost, bar)
        if _left_width(layout) <= room:
            return layout
    rest = _left_width(FooterLayout("", short_mode, False, cost, bar))
    space = room - rest - GAP
    cut = short_model if len(short_model) <= space else short_model[: space - 1] + "…"
    if space >= MIN_MODEL:
        return FooterLayout(cut, short_mode, False, cost, bar)
    for shown_mode, shown_cost in ((short_mode, cost), (short_mode, "")):
        layout = FooterLayout("", shown_mode, False, shown_cost, bar)
        if _left_width(layout) <= room:
            return layout
    # A mode that changes what runs unasked outranks the bar: the bar gives way to it.
    need = _left_width(FooterLayout("", short_mode, False, "", 0))
    while bar > 0 and meter_text(state, bar).cell_len + need + SPACER > width:
        bar -= 1
    if meter_text(state, bar).cell_len + need + SPACER <= width:
        return FooterLayout("", short_mode, False, "", bar)
    return FooterLayout("", "", False, "", bar)


def _left_width(layout: FooterLayout) -> int:
    mode = layout.mode + (MODE_HINT if layout.hint and layout.mode else "")
    pieces = [Text(piece).cell_len for piece in (layout.model, mode, layout.cost) if piece]
    return sum(pieces) + GAP * len(pieces)  # each piece's margin, the last one's before the meter


class ContextMeter(Static):
    """How full the context is: bar, used / window, percent, and the distance to auto-compact."""

    DEFAULT_CSS = """
    ContextMeter {
        width: auto;
        height: 1;
    }
    """

    state: reactive[ContextState | None] = reactive(None, layout=True)
    bar_width: reactive[int] = reactive(BAR_WIDTH, layout=True)

    def render(self) -> Text:
        return meter_text(self.state, self.bar_width)


class StatusFooter(Vertical):
    """One line: model · permission mode · cost (· the statusLine text), and the context meter
    on the right; the statusLine text moves to a line above when it does not fit whole."""

    DEFAULT_CSS = """
    StatusFooter {
        height: auto;
        dock: bottom;
        padding: 0 1;
        background: $panel;
    }
    StatusFooter > #footer-status-apart {
        height: 1;
        display: none;
    }
    StatusFooter > #footer-row {
        height: 1;
    }
    #footer-row > Static {
        width: auto;
        height: 1;
        margin-right: 2;
    }
    #footer-row > #footer-spacer {
        width: 1fr;
        margin: 0;
    }
    #footer-row > ContextMeter {
        margin: 0;
    }
    """

    model: reactive[str] = reactive("")
    mode: reactive[str] = reactive("default")
    cost_usd: reactive[float] = reactive(0.0)
    state: reactive[ContextState | None] = reactive(None)
    status_text: reactive[str] = reactive("")  # the statusLine command's first line (ANSI kept)

    def compose(self) -> ComposeResult:
        yield Static(id="footer-status-apart")
        with Horizontal(id="footer-row"):
            yield Static(id="footer-model")
            yield Static(id="footer-mode")
            yield Static(id="footer-cost")
            yield Static(id="footer-status")
            yield Static(id="footer-spacer")
            yield ContextMeter()

    def on_mount(self) -> None:
        self._fit()

    def on_resize(self, _event: Resize) -> None:
        self._fit()

    def watch_model(self, _model: str) -> None:
        self._fit()

    def watch_mode(self, _mode: str) -> None:
        self._fit()

    def watch_cost_usd(self, _cost: float) -> None:
        self._fit()

    def watch_state(self, _state: ContextState | None) -> None:
        self._fit()

    def watch_status_text(self, _text: str) -> None:
        self._fit()

    def _fit(self) -> None:
        if not self.is_mounted:
            return
        width = self.content_size.width or self.app.size.width - 2
        status = Text.from_ansi(self.status_text) if self.status_text else Text()
        layout = fit_footer(
            width, self.model or "…", self.mode, self.cost_usd, self.state, status.plain
        )
        status.truncate(layout.status_width, overflow="ellipsis")
        self._set("#footer-status", status if not layout.status_apart else Text())
        self._set("#footer-status-apart", status if layout.status_apart else Text())
        style = MODE_LABELS.get(self.mode, (self.mode, ""))[1]
        mode = Text(layout.mode, style=style)
        if layout.hint and layout.mode:
            mode.append(MODE_HINT, style="dim")
        self._set("#footer-model", Text(layout.model, style="bold"))
        self._set("#footer-mode", mode)
        self._set("#footer-cost", Text(layout.cost, style="dim"))
        for meter in self.query(ContextMeter):
            meter.state, meter.bar_width = self.state, layout.bar_width

    def _set(self, selector: str, text: Text) -> None:
        for label in self.query(selector).results(Static):
            label.update(text)
            label.display = bool(text.plain)
