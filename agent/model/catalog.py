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

DEFAULT_MODEL = "claude-opus-5-5"

ALIASES: dict[str, str] = {
    "opus": "claude-opus-5-5",
    "best": "claude-opus-5-5",
    "default": DEFAULT_MODEL,
    "sonnet": "claude-sonnet-5-5",
    "haiku": "claude-haiku-5-5",
    "fable": "claude-fable-5-2",
}
# Not a model: sonnet for the work, opus while planning (plan mode).
OPUSPLAN = "opusplan"
OPUSPLAN_MODELS = {"plan": ALIASES["opus"], "work": ALIASES["sonnet"]}
# A 200K model named with this suffix runs with the 1M-context beta.
LONG_CONTEXT_SUFFIX = "[1m]"
LONG_CONTEXT_BETA = "context-1m-2025-08-07"
LONG_CONTEXT_WINDOW = 1_000_000


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
    "claude-fable-5-2": ModelLimits(1_000_000, 128_000),
    "claude-opus-4-5": ModelLimits(200_000, 64_000),
    "claude-sonnet-4-5": ModelLimits(200_000, 64_000),
    "claude-haiku-4-5": ModelLimits(200_000, 64_000),
}
UNKNOWN_LIMITS = ModelLimits(200_000, 32_000)

EFFORTS = ("low", "medium", "high", "xhigh", "max")


@dataclass(frozen=True)
class ModelTraits:
    """How a model takes thinking and effort, and the output limit a request asks for.

    ``request_output`` is the ``max_tokens`` sent by default (Claude Code's: the
    whole output limit on the 5.x models, 32,000 on the 4.5 ones, whose limit
    of 64,000 is reached only after a response is cut off). ``adaptive``: the
    model decides how much to think; ``thinking_off``: ``thinking: disabled``
    is accepted (the 5.x models refuse it).
    """

    request_output: int
    adaptive: bool = False
    thinking_off: bool = True
    efforts: tuple[str, ...] = ()
    default_effort: str | None = None


_FIVE = ModelTraits(
    128_000, adaptive=True, thinking_off=False, efforts=EFFORTS, default_effort="medium"
)
TRAITS: dict[str, ModelTraits] = {
    "claude-opus-5-5": _FIVE,
    "claude-sonnet-5-5": _FIVE,
    "claude-haiku-5-5": _FIVE,
    "claude-fable-5-2": _FIVE,
    "claude-opus-4-5": ModelTraits(
        32_000, efforts=("low", "medium", "high"), default_effort="high"
    ),
    "claude-sonnet-4-5": ModelTraits(32_000),
    "claude-haiku-4-5": ModelTraits(32_000),
}
UNKNOWN_TRAITS = ModelTraits(32_000)

PRICES: dict[str, Pricing] = {
    "claude-opus-5-5": Pricing(5.0, 25.0),
    "claude-sonnet-5-5": Pricing(3.0, 15.0),
    "claude-haiku-5-5": Pricing(1.0, 5.0),
    "claude-fable-5-2": Pricing(8.0, 40.0),
    "claude-opus-4-5": Pricing(5.0, 25.0),
    "claude-sonnet-4-5": Pricing(3.0, 15.0),
    "claude-haiku-4-5": Pricing(1.0, 5.0),
}
UNKNOWN_PRICING = PRICES["claude-sonnet-5-5"]

# How long a failed lookup is remembered, so a dead endpoint does not cost
# timeout_s on every call while a transient failure is retried later.
_FAILURE_TTL_S = 300.0
_fetched: dict[str, tuple[ModelLimits | None, float]] = {}
_fetched_traits: dict[str, ModelTraits] = {}
_not_found: set[str] = set()  # ids the Models API answered 404 for


def resolve_model(name: str | None) -> str:
    """An alias ("opus", "best", "fable", ...) to its model id; anything else unchanged.

    "opusplan" gives its working model (sonnet); ``[1m]`` is dropped (see ``ModelName``).
    """
    return ModelName.parse(name).id


@dataclass(frozen=True)
class ModelName:
    """What a model name as typed asks for: the id to send, and the 1M-context beta.

    ``opusplan`` is kept as the name (its model depends on plan mode); ``id`` is
    its working model.
    """

    typed: str
    id: str
    long_context: bool = False

    @classmethod
    def parse(cls, name: str | None) -> ModelName:
        typed = (name or "").strip() or DEFAULT_MODEL
        base, long_context = typed, False
        if base.lower().endswith(LONG_CONTEXT_SUFFIX):
            base, long_context = base[: -len(LONG_CONTEXT_SUFFIX)].strip(), True
        if base.lower() == OPUSPLAN:
            return cls(typed, OPUSPLAN_MODELS["work"], False)
        model = ALIASES.get(base.lower(), base)
        # A model whose own window is 1M needs no beta for it.
        return cls(typed, model, long_context and _native_window(model) < LONG_CONTEXT_WINDOW)

    @property
    def opusplan(self) -> bool:
        return self.typed.lower() == OPUSPLAN

    def for_mode(self, plan_mode: bool) -> str:
        """The id to send: opusplan's plan model while planning, else ``id``."""
        return OPUSPLAN_MODELS["plan"] if self.opusplan and plan_mode else self.id

    @property
    def known(self) -> bool:
        """Whether the table knows the model (else only the Models API can say)."""
        return _table_key(self.id) is not None


def _native_window(model: str) -> int:
    key = _table_key(model)
    return LIMITS[key].context_window if key else UNKNOWN_LIMITS.context_window


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
    model = model.strip().lower()
    if model in ALIASES:
        model = ALIASES[model]
    if model in LIMITS:
        return model
    matches = [key for key in LIMITS if key in model]
    return max(matches, key=len) if matches else None


def in_table(model: str) -> bool:
    """Whether the static table knows the model (else its figures are a guess)."""
    return _table_key(model) is not None


def limits_for(model: str) -> ModelLimits:
    key = _table_key(model)
    return LIMITS[key] if key else UNKNOWN_LIMITS


def traits_for(model: str) -> ModelTraits:
    """The table's traits, else what the Models API reported, else thinking with a budget."""
    key = _table_key(model)
    if key:
        return TRAITS[key]
    return _fetched_traits.get(model.strip(), UNKNOWN_TRAITS)


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


async def model_exists(client: Any, model: str, timeout_s: float = 3.0) -> bool | None:
    """Whether the Models API serves ``model``: True, False (it answered 404), or None (it
    could not be asked: no such endpoint, a network failure, a provider without it)."""
    if _table_key(model) is not None:
        return True
    if await fetch_limits(client, model, timeout_s) is not None:
        return True
    return False if model in _not_found else None


async def _retrieve(client: Any, model: str, timeout_s: float) -> ModelLimits | None:
    try:
        result = client.models.retrieve(model)
        if inspect.isawaitable(result):
            result = await asyncio.wait_for(result, timeout_s)
    except Exception as exc:  # includes TimeoutError; cancellation (BaseException) propagates
        if getattr(exc, "status_code", None) == 404:
            _not_found.add(model)
        return None
    window = _positive_int(_field(result, "max_input_tokens"))
    if window is None:
        return None
    max_output = _positive_int(_field(result, "max_tokens")) or limits_for(model).max_output
    if _table_key(model) is None:
        _fetched_traits[model] = _traits_from(_field(result, "capabilities"), max_output)
    return ModelLimits(context_window=window, max_output=max_output)


def _supported(info: Any, *path: str) -> bool:
    for name in path:
        info = _field(info, name)
    return _field(info, "supported") is True


def _traits_from(capabilities: Any, max_output: int) -> ModelTraits:
    """A model the table does not know, as the Models API describes it (nothing: no thinking
    controls beyond a budget)."""
    request_output = min(max_output, UNKNOWN_TRAITS.request_output)
    if capabilities is None:
        return ModelTraits(request_output)
    adaptive = _supported(capabilities, "thinking", "types", "adaptive")
    disabled = _field(_field(_field(capabilities, "thinking"), "types"), "disabled")
    efforts = tuple(e for e in EFFORTS if _supported(capabilities, "effort", e))
    return ModelTraits(
        request_output,
        adaptive=adaptive,
        thinking_off=disabled is None or _field(disabled, "supported") is not False,
        efforts=efforts if _supported(capabilities, "effort") else (),
        default_effort="high" if "high" in efforts else None,
    )


def clear_limits_cache() -> None:
    _fetched.clear()
    _fetched_traits.clear()
    _not_found.clear()
