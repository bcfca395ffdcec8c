"""Which window compaction works against, and the words for the levels the meter shows.

The levels themselves (``ContextLimits``: where auto-compaction, the warnings
and the hard limit sit; ``ContextState``: how full the context is) are plain
values in ``agent.core.context_state``, so events carry them typed; they are
importable from here too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agent.core.context_state import AUTO_COMPACT_BUFFER as AUTO_COMPACT_BUFFER
from agent.core.context_state import BLOCKING_BUFFER as BLOCKING_BUFFER
from agent.core.context_state import ERROR_BUFFER as ERROR_BUFFER
from agent.core.context_state import MAX_RESERVED_OUTPUT as MAX_RESERVED_OUTPUT
from agent.core.context_state import WARNING_BUFFER as WARNING_BUFFER
from agent.core.context_state import ContextLimits as ContextLimits
from agent.core.context_state import ContextState as ContextState
from agent.core.context_state import Level as Level
from agent.core.context_state import context_state as context_state

MIN_WINDOW = 10_000
TRUTHY = {"1", "true", "yes"}
ENV_WINDOW = "CCX_AUTO_COMPACT_WINDOW"


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


def format_tokens(tokens: int) -> str:
    """167000 -> "167K", 1500 -> "1.5K", 1200000 -> "1.2M"."""
    if abs(tokens) >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}".removesuffix(".0") + "M"
    if abs(tokens) >= 1_000:
        return f"{tokens / 1_000:.1f}".removesuffix(".0") + "K"
    return str(tokens)


FULL_ADVICE = (
    "/compact [instructions] summarizes it; /clear starts over (the transcript stays on disk)"
)


def warning_text(state: ContextState) -> str | None:
    """What the warning bar says, or None when there is nothing to say.

    Figures in tokens a user can check against the meter: where ccx compacts
    (or where requests would be refused) and how far away that is; and when the
    context is full, every way out that works.
    """
    percent = f"{state.percent_used:.0f}%"
    limits = state.limits
    if state.level == "blocking":
        if state.compact_enabled:
            return f"Context full: the next request would be refused. {FULL_ADVICE}."
        return (
            "Context full: the next request would be refused, and compaction is off "
            "(DISABLE_COMPACT). /clear starts over (the transcript stays on disk)."
        )
    if state.circuit_open:
        return (
            f"Auto-compact stopped after {state.consecutive_failures} failures in a row. "
            "/compact [instructions] tries again; /clear starts over (the transcript stays on disk)."
        )
    if state.level == "ok":
        return None
    refused = format_tokens(limits.blocking)
    refused_in = format_tokens(max(0, limits.blocking - state.used))
    if not state.compact_enabled:
        return (
            f"Context {percent} full and compaction is off (DISABLE_COMPACT): requests are "
            f"refused at {refused}; {refused_in} to go. /clear starts over."
        )
    if not state.auto_compact_enabled:
        return (
            f"Context {percent} full and auto-compact is off: requests are refused at "
            f"{refused}; {refused_in} to go. Run /compact [instructions] before then."
        )
    at = format_tokens(limits.auto_compact)
    to_go = format_tokens(max(0, limits.auto_compact - state.used))
    if state.level == "error":
        return (
            f"Context {percent} full: ccx compacts at {at}; {to_go} to go. "
            "Run /compact [instructions] now to choose what is kept."
        )
    return (
        f"Context {percent} full: ccx compacts at {at}; {to_go} to go. "
        "Run /compact [instructions] to choose what is kept."
    )
