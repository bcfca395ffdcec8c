"""Pictures of the footer meter and the warning bar at each context level (fixed states).

The pictures are taken at 120 and at 80 columns; below them, every width from
60 to 200 is checked to keep the meter whole while the other pieces give way.
"""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from compaction.thresholds import ContextLimits, ContextState, context_state, warning_text
from tests.tui.screen import screen_lines, widget_text
from tui.fullscreen.widgets.footer import (
    MIN_MODEL,
    MODE_LABELS,
    MODE_SHORT,
    ContextMeter,
    FooterLayout,
    StatusFooter,
    _left_width,
    fit_footer,
    meter_text,
)
from tui.fullscreen.widgets.warning_bar import WarningBar
from tui.meter import BAR_WIDTH

WIDTH = 120  # columns of the pictures: the widest meter (circuit open) fits exactly

# 200K window, 64K output: auto-compact at 167K, warning at 147K, error at 157K, blocking at 177K.
LIMITS = ContextLimits(window=200_000, max_output=64_000)


def state(used: int, failures: int = 0) -> ContextState:
    return context_state(
        used,
        LIMITS,
        auto_enabled=True,
        compact_enabled=True,
        failures=failures,
        circuit_open=failures >= 3,
    )


STATES = {
    "ok": state(41_200),
    "warning": state(150_000),
    "error": state(160_000),
    "blocking": state(178_000),
    "circuit_open": state(150_000, failures=3),
}


class FooterApp(App[None]):
    """The warning bar over the footer, as they sit at the bottom of the app."""

    CSS = "Screen { align: left bottom; }"

    def __init__(self, context: ContextState, mode: str = "default") -> None:
        super().__init__()
        self.context = context
        self.mode = mode

    def compose(self) -> ComposeResult:
        yield WarningBar()
        yield StatusFooter()

    def on_mount(self) -> None:
        footer = self.query_one(StatusFooter)
        footer.model = "claude-sonnet-4-5"
        footer.mode = self.mode
        footer.cost_usd = 0.42
        footer.state = self.context
        self.query_one(WarningBar).state = self.context


SIZES = {"80x24": (80, 24), "120x40": (120, 40)}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("name", list(STATES))
def test_footer_and_warning_bar(snap_compare, name: str, size: str) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(FooterApp(STATES[name]), terminal_size=SIZES[size])


@pytest.mark.parametrize("size", list(SIZES))
def test_footer_in_plan_mode_while_starting(snap_compare, size: str) -> None:  # type: ignore[no-untyped-def]
    app = FooterApp(None, mode="plan")  # type: ignore[arg-type]
    assert snap_compare(app, terminal_size=SIZES[size])


def test_levels_are_what_the_snapshots_claim() -> None:
    assert [s.level for s in STATES.values()] == ["ok", "warning", "error", "blocking", "warning"]
    assert STATES["circuit_open"].circuit_open


@pytest.mark.parametrize("name", list(STATES))
async def test_meter_and_bar_text(name: str) -> None:
    context = STATES[name]
    app = FooterApp(context)
    async with app.run_test(size=(WIDTH, 4)) as pilot:
        await pilot.pause()
        meter = widget_text(app, app.query_one(ContextMeter))
        bar = app.query_one(WarningBar)
        assert meter == meter_text(context).plain  # all of it, nothing clipped
        assert f"{context.percent_until_auto_compact}% until auto-compact" in meter
        assert " / 200K" in meter
        assert screen_lines(app)[-1].endswith(meter)
        if name == "ok":
            assert not bar.display or not bar.has_class("-shown")
            assert widget_text(app, bar) == ""
        else:
            assert bar.has_class("-shown")
            assert bar.has_class("-error") == (name != "warning")
            assert warning_text(context) in " ".join(widget_text(app, bar).split())


@pytest.mark.parametrize("width", [60, 80, 100, 110])
@pytest.mark.parametrize("name", list(STATES))
async def test_the_whole_meter_shows_in_a_narrower_terminal(width: int, name: str) -> None:
    context = STATES[name]
    app = FooterApp(context, mode="bypassPermissions")
    async with app.run_test(size=(width, 4)) as pilot:
        await pilot.pause()
        row = screen_lines(app)[-1]
        meter = widget_text(app, app.query_one(ContextMeter))
        assert row.endswith(meter) and len(row) <= width
        figures = meter_text(context, 0).plain  # the meter without its bar
        assert meter.endswith(figures), (width, row)
        assert "…" not in meter
        if len(figures) + len("⚠ bypass") + 3 <= width - 2:
            assert "⚠ bypass" in row  # a mode that widens what runs unasked outranks the bar


@pytest.mark.parametrize("width", range(58, 201))
@pytest.mark.parametrize("mode", list(MODE_LABELS))
def test_every_width_keeps_the_meter_and_gives_way_in_order(width: int, mode: str) -> None:
    for context in [*STATES.values(), state(999_000 - 1), None]:
        layout = fit_footer(width, "claude-sonnet-4-5", mode, 12.34, context)
        meter = meter_text(context, layout.bar_width).plain
        assert len(meter) + _left_width(layout) + 1 <= width
        if width >= 60:
            assert meter.endswith(meter_text(context, 0).plain)
        if layout.bar_width < BAR_WIDTH:
            assert layout.model == layout.cost == "" and layout.mode in ("", MODE_SHORT[mode])
        figures = meter_text(context, 0).plain
        if mode != "default" and len(figures) + len(MODE_SHORT[mode]) + 3 <= width:
            assert layout.mode.startswith(MODE_SHORT[mode])
        if layout.model not in ("claude-sonnet-4-5", "sonnet-4-5", ""):
            assert layout.model.endswith("…") and len(layout.model) >= MIN_MODEL
        if layout.hint:
            assert layout.model == "claude-sonnet-4-5"


def test_the_footer_at_80_columns_reads_whole() -> None:
    layout = fit_footer(78, "claude-sonnet-4-5", "acceptEdits", 0.05, STATES["ok"])
    assert layout == FooterLayout("", "⏵⏵ accept", False, "$0.05", BAR_WIDTH)
    plain = fit_footer(78, "claude-sonnet-4-5", "default", 0.05, STATES["ok"])
    assert plain == FooterLayout("sonnet-4-5", "", False, "$0.05", BAR_WIDTH)
    whole = fit_footer(78, "claude-sonnet-4-5", "plan", 0, STATES["ok"])
    assert whole == FooterLayout("sonnet-4-5", "⏸ plan", False, "", BAR_WIDTH)
    cut = fit_footer(78, "claude-opus-4-1-20250805", "plan", 0, STATES["ok"])
    assert cut == FooterLayout("opus-4-1-2…", "⏸ plan", False, "", BAR_WIDTH)
    wide = fit_footer(118, "claude-sonnet-4-5", "default", 0.42, STATES["ok"])
    assert wide == FooterLayout("claude-sonnet-4-5", "default mode", True, "$0.42", BAR_WIDTH)


def test_meter_text_counts() -> None:
    text = meter_text(STATES["ok"]).plain
    assert "41.2K / 200K (21%)" in text and "75% until auto-compact" in text
    assert meter_text(None).plain == "context: starting…"


def test_state_round_trips_through_the_event_json() -> None:
    for context in STATES.values():
        assert ContextState.from_json(context.to_json()).to_json() == context.to_json()
