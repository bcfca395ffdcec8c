"""The side-by-side first-paint benchmark looks for the right things: ccx's meter with a token
figure (never the "starting" meter of the first frame), Claude Code's footer."""

from __future__ import annotations

from bench.tui_startup_vs import CCX_FIGURE, CLAUDE_FOOTER
from compaction.thresholds import ContextLimits, context_state
from tui.meter import STARTING, meter_segments


def text(segments: list[tuple[str, str]]) -> str:
    return "".join(piece for piece, _role in segments)


def test_the_ccx_marker_is_a_token_figure_in_the_meter() -> None:
    assert not CCX_FIGURE.search(STARTING)
    assert not CCX_FIGURE.search(text(meter_segments(None)))
    for used, window in ((5_300, 1_000_000), (41_200, 200_000), (900, 200_000)):
        limits = ContextLimits(window, 32_000)
        state = context_state(used, limits, auto_enabled=True, compact_enabled=True)
        assert CCX_FIGURE.search(text(meter_segments(state))), text(meter_segments(state))


def test_the_claude_code_marker_is_its_footer() -> None:
    assert CLAUDE_FOOTER.search("  ⏵⏵ auto mode on (shift+tab to cycle) · ← for agents")
    assert CLAUDE_FOOTER.search("  ? for shortcuts")
    assert not CLAUDE_FOOTER.search("Detected a custom API key in your environment")
