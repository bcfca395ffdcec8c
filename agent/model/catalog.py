"""Model names, context limits and prices.

The table answers instantly and offline; ``fetch_limits`` asks the Models API
for the real figures when a client is at hand (a gateway may serve a model the
table does not know). ``anthropic`` is never imported here: this module is on
the fast path of ``ccx --version``.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from dataclasses import dataclass
from typing import Any

DEFAULT_MODEL = "claude-sonnet-5-5"

ALIASES: dict[str, str] = {
    "opus": "claude-opus-5-5",
    "sonnet": "claude-sonnet-5-5",
    "haiku": "claude-haiku-5-5",
}


@dataclass(frozen=True)
class ModelLimits:
    context_window: int
    max_output: int


@dataclass(frozen=True)
class Pricing:
    """US dollars per million tokens."""

    input: float
    output: float

    @property
    def cache_write(self) -> float:
        return self.input * 1.25

    @property
    def cache_read(self) -> float:
        return self.input * 0.1


LIMITS: dict[str, ModelLimits] = {
    "claude-opus-5-5": ModelLimits(1_000_000, 128_000),
    "claude-sonnet-5-5": ModelLimits(1_000_000, 128_000),
    "claude-haiku-5-5": ModelLimits(1_000_000, 128_000),
    "claude-opus-4-5": ModelLimits(200_000, 64_000),
    "claude-sonnet-4-5": ModelLimits(200_000, 64_000),
    "claude-haiku-4-5": ModelLimits(200_000, 64_000),
}
UNKNOWN_LIMITS = ModelLimits(200_000, 32_000)

PRICES: dict[str, Pricing] = {
    "claude-opus-5-5": Pricing(5.0, 25.0),
    "claude-sonnet-5-5": Pricing(3.0, 15.0),
    "claude-haiku-5-5": Pricing(1.0, 5.0),
    "claude-opus-4-5": Pricing(5.0, 25.0),
    "claude-sonnet-4-5": Pricing(3.0, 15.0),
    "claude-haiku-4-5": Pricing(1.0, 5.0),
}
UNKNOWN_PRICING = PRICES["claude-sonnet-5-5"]

# How long a failed lookup is remembered, so a dead endpoint does not cost
# timeout_s on every call while a transient failure is retried later.
_FAILURE_TTL_S = 300.0
_fetched: dict[str, tuple[ModelLimits | None, float]] = {}


def resolve_model(name: str | None) -> str:
    """An alias ("opus", "sonnet", "haiku") to its model id; anything else unchanged."""
    if not name:
        return DEFAULT_MODEL
    stripped = name.strip()
    return ALIASES.get(stripped.lower(), stripped)


# Claude Code's variables for the model of small side calls (WebFetch's page reading).
FAST_MODEL_VARIABLES = ("ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL")


def fast_model() -> str:
    """The small, fast model side calls use: the first of FAST_MODEL_VARIABLES set, else haiku."""
    for name in FAST_MODEL_VARIABLES:
        if value := os.environ.get(name, "").strip():
            return resolve_model(value)
    return ALIASES["haiku"]


def _table_key(model: str) -> str | None:
    """The table entry a model id belongs to.

    Dated ids (claude-sonnet-4-5-20250929) and provider ids
    (us.anthropic.claude-sonnet-4-5-v1:0) match the entry they contain.
    """
    model = resolve_model(model).lower()
    if model in LIMITS:
        return model
    matches = [key for key in LIMITS if key in model]
    return max(matches, key=len) if matches else None


def limits_for(model: str) -> ModelLimits:
    key = _table_key(model)
    return LIMITS[key] if key else UNKNOWN_LIMITS


def pricing_for(model: str) -> Pricing:
    key = _table_key(model)
    return PRICES[key] if key else UNKNOWN_PRICING


def cost_usd(model: str, usage: dict[str, Any]) -> float:
    """The price of one response's usage (missing or None counts as zero)."""
    price = pricing_for(model)

    def tokens(key: str) -> int:
        return int(usage.get(key) or 0)

    total = (
        tokens("input_tokens") * price.input
        + tokens("output_tokens") * price.output
        + tokens("cache_creation_input_tokens") * price.cache_write
        + tokens("cache_read_input_tokens") * price.cache_read
    )
    return total / 1_000_000


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _field(info: Any, name: str) -> Any:
    if isinstance(info, dict):
        return info.get(name)
    return getattr(info, name, None)


async def fetch_limits(client: Any, model: str, timeout_s: float = 3.0) -> ModelLimits | None:
    """Ask the Models API for a model's limits; None on any failure, never raises.

    Results are cached in-process (failures for a few minutes only). When the
    API reports the window but not the output limit, the table's output limit
    is used.
    """
    model = resolve_model(model)
    cached = _fetched.get(model)
    if cached is not None:
        limits, at = cached
        if limits is not None or time.monotonic() - at < _FAILURE_TTL_S:
            return limits
    limits = await _retrieve(client, model, timeout_s)
    _fetched[model] = (limits, time.monotonic())
    return limits


async def _retrieve(client: Any, model: str, timeout_s: float) -> ModelLimits | None:
    try:
        result = client.models.retrieve(model)
        if inspect.isawaitable(result):
            result = await asyncio.wait_for(result, timeout_s)
    except Exception:  # includes TimeoutError; cancellation (BaseException) propagates
        return None
    window = _positive_int(_field(result, "max_input_tokens"))
    if window is None:
        return None
    max_output = _positive_int(_field(result, "max_tokens")) or limits_for(model).max_output
    return ModelLimits(context_window=window, max_output=max_output)


def clear_limits_cache() -> None:
    _fetched.clear()
