"""One meter: the full-screen footer and the plain REPL's toolbar read the same words."""

from __future__ import annotations

import pytest

from agent.core.context_state import ContextLimits, ContextState, context_state
from tui.fullscreen.widgets.footer import meter_text as footer_meter
from tui.meter import meter_line, meter_segments
from tui.plain.render import meter_text as toolbar_meter

LIMITS = ContextLimits(200_000, 64_000)


def state(used: int, **flags: bool) -> ContextState:
    auto, compact = flags.get("auto", True), flags.get("compact", True)
    made = context_state(used, LIMITS, auto_enabled=auto, compact_enabled=compact)
    if flags.get("stopped"):
        return context_state(
            used, LIMITS, auto_enabled=True, compact_enabled=True, failures=3, circuit_open=True
        )
    return made


@pytest.mark.parametrize(
    ("context", "tail"),
    [
        (state(41_200), " · 75% until auto-compact"),
        (state(150_000), " · 10% until auto-compact"),
        (state(100_000, stopped=True), " · 40% until auto-compact (stopped)"),
        (state(100_000, compact=False), " · compaction off"),
        (state(100_000, auto=False), " · 44% left, auto-compact off"),
    ],
)
def test_both_front_ends_show_the_same_meter(context: ContextState, tail: str) -> None:
    line = meter_line(context)
    assert footer_meter(context).plain == toolbar_meter(context) == line
    assert line.endswith(tail) and f" / 200K ({context.percent_used:.0f}%)" in line
    bar = line.split(" ")[0]
    assert len(bar) == 12 and set(bar) <= {"▰", "▱"}


def test_the_colours_follow_the_level() -> None:
    warning = meter_segments(state(150_000))
    assert [role for _text, role in warning] == ["level", "dim", "", "level", "level"]
    ok = meter_segments(state(41_200))
    assert ok[-1] == (" · 75% until auto-compact", "dim")
    spans = footer_meter(state(150_000)).spans
    assert any(span.style == "yellow" for span in spans)


def test_an_empty_context_still_shows_one_cell_and_starting_is_said() -> None:
    assert meter_line(state(1)).startswith("▰▱")
    assert meter_line(None) == footer_meter(None).plain == "context: starting…"
