"""fit_footer with a statusLine text: the meter and the rest of the line never give way to it."""

from __future__ import annotations

import pytest

from tests.tui.test_footer_snapshots import STATES
from tui.fullscreen.widgets.footer import MODE_LABELS, SPACER, _left_width, fit_footer, meter_text

SHORT = "main ✓"
LONG = "~/src/project on main [+3 -1] · node 20.11 · py 3.11 · kube prod-eu-1 · 14:02"


@pytest.mark.parametrize("width", range(58, 201))
@pytest.mark.parametrize("mode", list(MODE_LABELS))
@pytest.mark.parametrize("status", [SHORT, LONG])
def test_the_status_text_never_costs_the_meter_anything(width: int, mode: str, status: str) -> None:
    for context in [*STATES.values(), None]:
        without = fit_footer(width, "claude-sonnet-4-5", mode, 1.5, context)
        layout = fit_footer(width, "claude-sonnet-4-5", mode, 1.5, context, status)
        assert (layout.model, layout.mode, layout.hint, layout.cost, layout.bar_width) == (
            without.model,
            without.mode,
            without.hint,
            without.cost,
            without.bar_width,
        )
        meter = meter_text(context, layout.bar_width).cell_len
        if layout.status_apart:  # its own line, cut to the width
            assert layout.status_width == min(len(status), width)
        else:  # beside the rest, whole, with its gap
            assert layout.status_width == len(status)
            assert meter + SPACER + _left_width(layout) + layout.status_width + 2 <= width


def test_a_status_beside_the_meter_when_it_fits_else_on_its_own_line() -> None:
    """At 80 columns (78 inside the padding) the meter and the model leave no room: apart."""
    for status in (SHORT, LONG):
        narrow = fit_footer(78, "claude-sonnet-4-5", "default", 0.05, STATES["ok"], status)
        assert narrow.status_apart and narrow.status_width == len(status)
    inline = fit_footer(120, "claude-sonnet-4-5", "default", 0.05, STATES["ok"], SHORT)
    assert not inline.status_apart and inline.status_width == len(SHORT)
    cut = fit_footer(60, "claude-sonnet-4-5", "default", 0.05, STATES["ok"], LONG)
    assert cut.status_apart and cut.status_width == 60  # the widget cuts it with an ellipsis
    assert fit_footer(78, "claude-sonnet-4-5", "default", 0.05, STATES["ok"], "").status_width == 0
