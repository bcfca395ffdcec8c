"""A ContextState rebuilt from a ContextUpdate event's JSON, for the meter and the warning bar."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compaction.thresholds import ContextState


def state_from_json(data: dict[str, Any]) -> ContextState:
    """The inverse of ``ContextState.to_json``.

    The JSON carries the effective window rather than the output limit; the
    reserve it implies (window - effective) is exactly the reserve a limit of
    that size gives, so the rebuilt thresholds are the original ones.
    """
    from compaction.thresholds import ContextLimits, ContextState

    window = int(data["window"])
    reserved = window - int(data.get("effective_window", window))
    return ContextState(
        used=int(data["used"]),
        window=window,
        limits=ContextLimits(window=window, max_output=reserved),
        level=data["level"],
        percent_used=float(data["percent_used"]),
        percent_until_auto_compact=int(data["percent_until_auto_compact"]),
        auto_compact_enabled=bool(data["auto_compact_enabled"]),
        compact_enabled=bool(data["compact_enabled"]),
        circuit_open=bool(data.get("circuit_open", False)),
        consecutive_failures=int(data.get("consecutive_failures", 0)),
        source=str(data.get("source", "estimate")),
    )
