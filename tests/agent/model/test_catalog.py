"""Model aliases, limits, prices and the Models API lookup."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from agent.model import catalog
from agent.model.catalog import (
    DEFAULT_MODEL,
    ModelLimits,
    cost_usd,
    fetch_limits,
    limits_for,
    resolve_model,
)


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    catalog.clear_limits_cache()


def test_aliases_resolve_and_other_names_pass_through() -> None:
    assert resolve_model("opus") == "claude-opus-5-5"
    assert resolve_model("Sonnet") == "claude-sonnet-5-5"
    assert resolve_model("haiku") == "claude-haiku-5-5"
    assert resolve_model("claude-opus-4-5") == "claude-opus-4-5"
    assert resolve_model("my-gateway-model") == "my-gateway-model"
    assert resolve_model(None) == DEFAULT_MODEL == "claude-opus-5-5"


def test_limits_table() -> None:
    assert limits_for("opus") == ModelLimits(1_000_000, 128_000)
    assert limits_for("claude-haiku-5-5") == ModelLimits(1_000_000, 128_000)
    assert limits_for("claude-sonnet-4-5") == ModelLimits(200_000, 64_000)
    assert limits_for("claude-sonnet-4-5-20250929") == ModelLimits(200_000, 64_000)
    assert limits_for("us.anthropic.claude-haiku-4-5-v1:0") == ModelLimits(200_000, 64_000)
    assert limits_for("claude-opus-4-5") == ModelLimits(200_000, 64_000)
    assert limits_for("something-else") == ModelLimits(200_000, 32_000)


def test_cost_per_million_tokens_with_cache_multipliers() -> None:
    million = {
        "input_tokens": 1_000_000,
        "output_tokens": 1_000_000,
        "cache_creation_input_tokens": 1_000_000,
        "cache_read_input_tokens": 1_000_000,
    }
    # input + output + 1.25 x input + 0.1 x input
    assert cost_usd("claude-opus-5-5", million) == pytest.approx(5 + 25 + 6.25 + 0.5)
    assert cost_usd("sonnet", million) == pytest.approx(3 + 15 + 3.75 + 0.3)
    assert cost_usd("claude-haiku-4-5", million) == pytest.approx(1 + 5 + 1.25 + 0.1)
    assert cost_usd("unknown-model", million) == cost_usd("claude-sonnet-5-5", million)
    usage = {"input_tokens": 1200, "output_tokens": 300, "cache_read_input_tokens": None}
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx((1200 * 3 + 300 * 15) / 1e6)


class FakeModels:
    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.calls: list[str] = []

    async def retrieve(self, model: str) -> object:
        self.calls.append(model)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


async def test_fetch_limits_reads_the_api_and_caches() -> None:
    fake = FakeModels(SimpleNamespace(max_input_tokens=500_000, max_tokens=100_000))
    client = SimpleNamespace(models=fake)
    assert await fetch_limits(client, "opus") == ModelLimits(500_000, 100_000)
    assert await fetch_limits(client, "claude-opus-5-5") == ModelLimits(500_000, 100_000)
    assert fake.calls == ["claude-opus-5-5"]


async def test_fetch_limits_falls_back_to_the_table_output_limit() -> None:
    client = SimpleNamespace(models=FakeModels(SimpleNamespace(max_input_tokens=300_000)))
    assert await fetch_limits(client, "claude-sonnet-4-5") == ModelLimits(300_000, 64_000)


async def test_fetch_limits_returns_none_on_errors() -> None:
    failing = SimpleNamespace(models=FakeModels(ConnectionError("down")))
    assert await fetch_limits(failing, "claude-sonnet-5-5") is None
    empty = SimpleNamespace(models=FakeModels(SimpleNamespace(max_input_tokens=None)))
    assert await fetch_limits(empty, "claude-haiku-5-5") is None
    assert await fetch_limits(object(), "claude-opus-4-5") is None


def test_anthropic_is_not_imported() -> None:
    code = "import agent.model.catalog, sys; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_model_limits_cache_round_trip_and_expiry(tmp_path, monkeypatch) -> None:
    from agent.model import limits_cache
    from agent.model.catalog import ModelLimits

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://gateway.test")
    assert limits_cache.load(tmp_path, "claude-x") is None
    limits_cache.store(tmp_path, "claude-x", ModelLimits(300_000, 50_000))
    assert limits_cache.load(tmp_path, "claude-x") == ModelLimits(300_000, 50_000)
    assert (
        limits_cache.load(tmp_path, "claude-x", now=10**12) is None
    )  # a day later it is asked again
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://other.test")
    assert limits_cache.load(tmp_path, "claude-x") is None  # per endpoint
    (tmp_path / "cache" / "model-limits.json").write_text("{torn")
    assert limits_cache.load(tmp_path, "claude-x") is None


def test_a_failed_lookup_is_kept_for_an_hour_and_never_read_as_limits(
    tmp_path, monkeypatch
) -> None:
    import time

    from agent.model import limits_cache
    from agent.model.catalog import ModelLimits

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://no-models-api.test")
    assert not limits_cache.failed_recently(tmp_path, "claude-x")
    limits_cache.store_failure(tmp_path, "claude-x")
    assert limits_cache.failed_recently(tmp_path, "claude-x")
    assert limits_cache.load(tmp_path, "claude-x") is None
    later = time.time() + limits_cache.FAILURE_TTL_S + 60
    assert not limits_cache.failed_recently(tmp_path, "claude-x", now=later)  # asked again
    limits_cache.store(tmp_path, "claude-x", ModelLimits(300_000, 50_000))  # a later success
    assert not limits_cache.failed_recently(tmp_path, "claude-x")
    assert limits_cache.load(tmp_path, "claude-x") == ModelLimits(300_000, 50_000)


def test_the_fast_model_follows_claude_codes_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in catalog.FAST_MODEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert catalog.fast_model() == "claude-haiku-5-5"
    monkeypatch.setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-4-5")
    assert catalog.fast_model() == "claude-haiku-4-5"
    monkeypatch.setenv("ANTHROPIC_SMALL_FAST_MODEL", " sonnet ")
    assert catalog.fast_model() == "claude-sonnet-5-5"  # the first set wins, aliases resolve


@pytest.mark.parametrize(
    ("typed", "model", "long_context"),
    [
        ("best", "claude-opus-5-5", False),
        ("default", "claude-opus-5-5", False),
        ("fable", "claude-fable-5-2", False),
        ("opusplan", "claude-sonnet-5-5", False),
        ("sonnet[1m]", "claude-sonnet-5-5", False),  # already 1M: no beta needed
        ("claude-sonnet-4-5[1m]", "claude-sonnet-4-5", True),
        ("claude-opus-4-5[1M]", "claude-opus-4-5", True),
        ("  haiku ", "claude-haiku-5-5", False),
        (None, "claude-opus-5-5", False),
    ],
)
def test_model_names_as_typed(typed: str | None, model: str, long_context: bool) -> None:
    name = catalog.ModelName.parse(typed)
    assert (name.id, name.long_context) == (model, long_context)
    assert resolve_model(typed) == model


def test_opusplan_plans_with_opus_and_works_with_sonnet() -> None:
    name = catalog.ModelName.parse("OpusPlan")
    assert name.opusplan and name.known
    assert (name.for_mode(True), name.for_mode(False)) == ("claude-opus-5-5", "claude-sonnet-5-5")
    assert catalog.ModelName.parse("opus").for_mode(True) == "claude-opus-5-5"


def test_fable_has_a_1m_window_and_128k_output() -> None:
    assert limits_for("fable") == limits_for("claude-fable-5-2") == ModelLimits(1_000_000, 128_000)
    assert not catalog.ModelName.parse("claude-bogus-9").known


async def test_model_exists_asks_the_models_api_for_names_the_table_lacks() -> None:
    import anthropic

    from tui.fake_api import FakeApi

    with FakeApi(models={"gateway-model-1": (300_000, 50_000)}) as api:
        client = anthropic.AsyncAnthropic(base_url=api.url, api_key="k", max_retries=0)
        assert await catalog.model_exists(client, "claude-opus-5-5") is True  # no call needed
        assert await catalog.model_exists(client, "gateway-model-1") is True
        assert await catalog.model_exists(client, "claude-bogus-9") is False
        await client.close()
    assert api.requests == [] and api.errors == ["model: claude-bogus-9"]
    # A gateway model gets the table's cautious request size, capped by its own limit.
    assert catalog.traits_for("gateway-model-1").request_output == 32_000
    dead = anthropic.AsyncAnthropic(base_url="http://127.0.0.1:9", api_key="k", max_retries=0)
    assert await catalog.model_exists(dead, "claude-other-9", timeout_s=2) is None  # cannot tell
    await dead.close()


def test_traits_from_the_models_api_capabilities() -> None:
    def support(value: bool) -> dict:
        return {"supported": value}

    capabilities = {
        "thinking": {
            "supported": True,
            "types": {
                "adaptive": support(True),
                "enabled": support(False),
                "disabled": support(False),
            },
        },
        "effort": {"supported": True, **{e: support(e != "xhigh") for e in catalog.EFFORTS}},
    }
    traits = catalog._traits_from(capabilities, 64_000)
    assert traits.adaptive and not traits.thinking_off
    assert traits.efforts == ("low", "medium", "high", "max") and traits.default_effort == "high"
    assert catalog._traits_from(None, 16_000) == catalog.ModelTraits(16_000)
