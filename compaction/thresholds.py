"""Context levels: where auto-compaction, the warnings and the hard limit sit for a model.

The numbers are the reference's: of the window, min(max_output, 20,000) is
reserved for the reply; auto-compaction fires 13,000 below that effective
window, the warning shows 20,000 below auto-compaction, the error 20,000 below
the blocking limit, and the blocking limit (manual /compact still allowed,
requests refused locally) sits 3,000 below the effective window.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from agent.model.catalog import ModelLimits

MAX_RESERVED_OUTPUT = 20_000
AUTO_COMPACT_BUFFER = 13_000
WARNING_BUFFER = 20_000
ERROR_BUFFER = 20_000
BLOCKING_BUFFER = 3_000
MIN_WINDOW = 10_000
TRUTHY = {"1", "true", "yes"}
ENV_WINDOW = "CCX_AUTO_COMPACT_WINDOW"

Level = Literal["ok", "warning", "error", "blocking"]


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
    def for_model(cls, limits: ModelLimits, window: int | None = None) -> ContextLimits:
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


# -- which window ------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowConfig:
    window: int
    auto_enabled: bool
    compact_enabled: bool
    source: Literal["model", "cli", "env", "settings"]
    warnings: list[str] = field(default_factory=list)


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in TRUTHY


def _parse_tokens(value: Any) -> int | None:
    """An int, a float, or a string like "150000", "150_000", "150k", "1m"; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", value.replace("_", ""))
    if match is None:
        return None
    scale = {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)


def resolve_window(
    model_window: int,
    cli_value: str | None,
    settings_value: Any,
    env: Mapping[str, str],
) -> WindowConfig:
    """The window compaction works against.

    ``--autocompact TOKENS`` beats CCX_AUTO_COMPACT_WINDOW beats the settings
    key ``autoCompactWindow``; ``--autocompact auto`` explicitly asks for the
    model's window. Never above the model's window. Invalid values (not a
    number, or below 10,000) are skipped with a warning. DISABLE_COMPACT turns
    off all compaction, DISABLE_AUTO_COMPACT only the automatic one.
    """
    warnings: list[str] = []
    compact_enabled = not _truthy(env.get("DISABLE_COMPACT"))
    auto_enabled = compact_enabled and not _truthy(env.get("DISABLE_AUTO_COMPACT"))
    candidates: list[tuple[Literal["cli", "env", "settings"], str, Any]] = [
        ("cli", "--autocompact", cli_value),
        ("env", ENV_WINDOW, env.get(ENV_WINDOW)),
        ("settings", "autoCompactWindow", settings_value),
    ]
    for source, label, raw in candidates:
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        if source == "cli" and isinstance(raw, str) and raw.strip().lower() == "auto":
            return WindowConfig(model_window, auto_enabled, compact_enabled, "cli", warnings)
        tokens = _parse_tokens(raw)
        if tokens is None or tokens < MIN_WINDOW:
            warnings.append(
                f"ignoring {label}={raw!r}: expected a token count of at least {MIN_WINDOW:,}"
            )
            continue
        if tokens >= model_window:
            if tokens > model_window:
                warnings.append(
                    f"{label}={tokens:,} is above the model's window; using {model_window:,}"
                )
            return WindowConfig(model_window, auto_enabled, compact_enabled, "model", warnings)
        return WindowConfig(tokens, auto_enabled, compact_enabled, source, warnings)
    return WindowConfig(model_window, auto_enabled, compact_enabled, "model", warnings)


# -- the state the meter shows -----------------------------------------------------------


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


def format_tokens(tokens: int) -> str:
    """167000 -> "167K", 1500 -> "1.5K", 1200000 -> "1.2M"."""
    if abs(tokens) >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}".removesuffix(".0") + "M"
    if abs(tokens) >= 1_000:
        return f"{tokens / 1_000:.1f}".removesuffix(".0") + "K"
    return str(tokens)


def warning_text(state: ContextState) -> str | None:
    """What the warning bar says, or None when there is nothing to say."""
    percent = f"{state.percent_used:.0f}%"
    if state.level == "blocking":
        if state.compact_enabled:
            return "Context full: the next request would be refused. Run /compact [instructions]."
        return "Context full: the next request would be refused. Run /clear to start over."
    if state.circuit_open:
        return (
            f"Auto-compact stopped after {state.consecutive_failures} failures; "
            "run /compact manually."
        )
    if state.level == "ok":
        return None
    left = state.percent_until_auto_compact
    if not state.compact_enabled:
        return f"Context {percent} full and compaction is off (DISABLE_COMPACT); /clear frees it."
    if not state.auto_compact_enabled:
        return (
            f"Context {percent} full, auto-compact is off ({left}% left). "
            "Run /compact [instructions] before it fills."
        )
    at = format_tokens(state.limits.auto_compact)
    if state.level == "error":
        return (
            f"Context {percent} full — auto-compact imminent at {at} tokens ({left}% left). "
            "Run /compact [instructions] now to choose what is kept."
        )
    return (
        f"Context {percent} full — auto-compact at {at} tokens ({left}% left). "
        "Run /compact [instructions] to choose what is kept."
    )
