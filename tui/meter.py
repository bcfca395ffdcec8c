"""The context meter's words: one function for the full-screen footer and the plain REPL's toolbar.

``▰▰▰▱▱▱▱▱▱▱▱▱ 41.2K / 200K (21%) · 62% until auto-compact``. The meter is a
list of segments, each with a role ("level": the level's colour, "dim",
"stopped", or "" for none), so the footer colours them with rich styles and
the plain REPL joins them into its toolbar line; both read the same words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from agent.core.context_state import ContextState

BAR_WIDTH = 12
STARTING = "context: starting…"

Role = Literal["level", "dim", "stopped", ""]
Segment = tuple[str, Role]


def meter_segments(state: ContextState | None, width: int = BAR_WIDTH) -> list[Segment]:
    """The meter for ``state`` (None: the session is still starting), as (text, role) pieces.

    ``width`` is the bar's length in cells; 0 leaves the bar out (a narrow footer
    gives up the bar before any of the figures).
    """
    if state is None:
        return [(STARTING, "dim")]
    from compaction.thresholds import format_tokens

    segments: list[Segment] = []
    if width > 0:
        filled = min(width, round(state.percent_used * width / 100))
        if state.used > 0:
            filled = max(1, filled)
        segments += [("▰" * filled, "level"), ("▱" * (width - filled), "dim")]
    gap = " " if width > 0 else ""
    segments += [
        (f"{gap}{format_tokens(state.used)} / {format_tokens(state.window)}", ""),
        (f" ({state.percent_used:.0f}%)", "level"),
    ]
    left = state.percent_until_auto_compact
    if not state.compact_enabled:
        segments.append((" · compaction off", "dim"))
    elif state.circuit_open:
        segments.append((f" · {left}% until auto-compact (stopped)", "stopped"))
    elif state.auto_compact_enabled:
        segments.append(
            (f" · {left}% until auto-compact", "level" if state.level != "ok" else "dim")
        )
    else:
        segments.append((f" · {left}% left, auto-compact off", "dim"))
    return segments


def meter_line(state: ContextState | None, width: int = BAR_WIDTH) -> str:
    """The meter as plain text."""
    return "".join(text for text, _role in meter_segments(state, width))
