"""How full the context is, as every layer sees it: the thresholds of a window and the state.

The numbers are the reference's: of the window, min(max_output, 20,000) is
reserved for the reply; auto-compaction fires 13,000 below that effective
window, the warning shows 20,000 below auto-compaction, the error 20,000 below
the blocking limit, and the blocking limit (manual /compact still allowed,
requests refused locally) sits 3,000 below the effective window.

These are plain values in the core so the event channel can carry them typed
(``ContextUpdate.state``) to every front end; ``compaction/`` decides the
window (``compaction.thresholds``) and fills them in.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

MAX_RESERVED_OUTPUT = 20_000
AUTO_COMPACT_BUFFER = 13_000
WARNING_BUFFER = 20_000
ERROR_BUFFER = 20_000
BLOCKING_BUFFER = 3_000

Level = Literal["ok", "warning", "error", "blocking"]


class ModelWindow(Protocol):
    """A model's context window and output limit (``agent.model.catalog.ModelLimits`` is one)."""

    @property
    def context_window(self) -> int: ...

    @property
    def max_output(self) -> int: ...


def _buffer(amount: int, space: int, share: int = 4) -> int:
    """The reference's fixed buffer, shrunk for small windows so the levels stay ordered."""
    return min(amount, max(0, space) // share)


@dataclass(frozen=True)
class ContextLimits:
    """Token thresholds for one window and output limit.

    For windows of ~80K and more these are exactly the reference's fixed
    offsets; below that each buffer is capped at a share of the space it is
    cut from, so a small ``--autocompact`` window never yields negative or
    out-of-order levels.
    """

    window: int
    max_output: int

    @classmethod
    def for_model(cls, limits: ModelWindow, window: int | None = None) -> ContextLimits:
        chosen = limits.context_window if window is None else min(window, limits.context_window)
        return cls(window=chosen, max_output=limits.max_output)

    @property
    def reserved(self) -> int:
        return min(self.max_output, MAX_RESERVED_OUTPUT, self.window // 4)

    @property
    def effective(self) -> int:
        return self.window - self.reserved

    @property
    def auto_compact(self) -> int:
        return self.effective - _buffer(AUTO_COMPACT_BUFFER, self.effective)

    @property
    def blocking(self) -> int:
        return self.effective - _buffer(BLOCKING_BUFFER, self.effective, share=10)

    @property
    def warning(self) -> int:
        return self.warning_at(auto_enabled=True)

    @property
    def error(self) -> int:
        return self.error_at(auto_enabled=True)

    def threshold(self, auto_enabled: bool) -> int:
        """What the levels are measured against: auto-compaction, or the effective window without it."""
        return self.auto_compact if auto_enabled else self.effective

    def warning_at(self, auto_enabled: bool) -> int:
        threshold = self.threshold(auto_enabled)
        return threshold - _buffer(WARNING_BUFFER, threshold)

    def error_at(self, auto_enabled: bool) -> int:
        return max(
            self.warning_at(auto_enabled), self.blocking - _buffer(ERROR_BUFFER, self.blocking)
        )


@dataclass(frozen=True)
class ContextState:
    """How full the context is, for the footer meter, the warning bar and stream-json."""

    used: int
    window: int
    limits: ContextLimits
    level: Level
    percent_used: float
    percent_until_auto_compact: int
    auto_compact_enabled: bool
    compact_enabled: bool
    circuit_open: bool
    consecutive_failures: int
    source: str

    @property
    def threshold(self) -> int:
        return self.limits.threshold(self.auto_compact_enabled)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("limits")
        data.update(
            effective_window=self.limits.effective,
            auto_compact_at=self.limits.auto_compact,
            warning_at=self.limits.warning_at(self.auto_compact_enabled),
            error_at=self.limits.error_at(self.auto_compact_enabled),
            blocking_at=self.limits.blocking,
        )
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ContextState:
        """The inverse of ``to_json``, for a reader on the other side of a boundary.

        The JSON carries the effective window rather than the output limit; the
        reserve it implies (window - effective) is exactly the reserve a limit of
        that size gives, so the rebuilt thresholds are the original ones.
        """
        window = int(data["window"])
        reserved = window - int(data.get("effective_window", window))
        return cls(
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


def context_state(
    used: int,
    limits: ContextLimits,
    *,
    auto_enabled: bool,
    compact_enabled: bool,
    failures: int = 0,
    circuit_open: bool = False,
    source: str = "estimate",
) -> ContextState:
    """The level and percentages for ``used`` tokens.

    Without auto-compaction the warning level and the "until" percentage are
    measured against the effective window rather than the auto-compact
    threshold, since nothing will compact on its own.
    """
    auto_enabled = auto_enabled and compact_enabled
    threshold = limits.threshold(auto_enabled)
    if used >= limits.blocking:
        level: Level = "blocking"
    elif used >= limits.error_at(auto_enabled):
        level = "error"
    elif used >= limits.warning_at(auto_enabled):
        level = "warning"
    else:
        level = "ok"
    percent_used = round(min(100.0, max(0.0, used * 100 / limits.window)), 1)
    left = 0
    if threshold > 0 and used < threshold:
        left = min(100, math.floor((threshold - max(0, used)) * 100 / threshold))
    return ContextState(
        used=used,
        window=limits.window,
        limits=limits,
        level=level,
        percent_used=percent_used,
        percent_until_auto_compact=left,
        auto_compact_enabled=auto_enabled,
        compact_enabled=compact_enabled,
        circuit_open=circuit_open,
        consecutive_failures=failures,
        source=source,
    )
