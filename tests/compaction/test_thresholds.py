"""Context levels, the window's precedence, the meter's percentages and the warning bar's words."""

from __future__ import annotations

import pytest

from agent.model.catalog import ModelLimits
from agent.permissions.settings import Settings
from compaction.thresholds import (
    ContextLimits,
    context_state,
    format_tokens,
    resolve_window,
    warning_text,
)

LIMITS = ContextLimits(window=200_000, max_output=64_000)


def test_reference_numbers_for_a_200k_window() -> None:
    assert LIMITS.reserved == 20_000
    assert LIMITS.effective == 180_000
    assert LIMITS.auto_compact == 167_000
    assert LIMITS.warning == 147_000
    assert LIMITS.error == 157_000
    assert LIMITS.blocking == 177_000


def test_reference_numbers_for_a_120k_window() -> None:
    limits = ContextLimits(window=120_000, max_output=64_000)
    assert limits.effective == 100_000
    assert limits.auto_compact == 87_000
    assert limits.warning == 67_000
    assert limits.blocking == 97_000
    assert limits.error == 77_000


def test_small_output_limit_reserves_less() -> None:
    limits = ContextLimits(window=200_000, max_output=8_192)
    assert limits.effective == 200_000 - 8_192


@pytest.mark.parametrize("window", [10_000, 20_000, 50_000, 80_000])
def test_small_windows_keep_levels_positive_and_ordered(window: int) -> None:
    limits = ContextLimits(window=window, max_output=64_000)
    for auto in (True, False):
        levels = [limits.warning_at(auto), limits.error_at(auto), limits.blocking]
        assert 0 < levels[0] <= levels[1] <= levels[2] <= limits.effective < window
    assert 0 < limits.auto_compact < limits.blocking


def test_for_model_never_exceeds_the_model_window() -> None:
    model = ModelLimits(context_window=200_000, max_output=64_000)
    assert ContextLimits.for_model(model).window == 200_000
    assert ContextLimits.for_model(model, 120_000).window == 120_000
    assert ContextLimits.for_model(model, 500_000).window == 200_000


# -- resolve_window ----------------------------------------------------------------------


def test_nothing_set_means_the_model_window() -> None:
    config = resolve_window(200_000, None, None, {})
    assert (config.window, config.source, config.warnings) == (200_000, "model", [])
    assert config.auto_enabled and config.compact_enabled


def test_precedence_cli_then_env_then_settings() -> None:
    env = {"CCX_AUTO_COMPACT_WINDOW": "150000"}
    assert resolve_window(200_000, "120000", 100_000, env).source == "cli"
    assert resolve_window(200_000, "120000", 100_000, env).window == 120_000
    assert resolve_window(200_000, None, 100_000, env).window == 150_000
    assert resolve_window(200_000, None, 100_000, env).source == "env"
    assert resolve_window(200_000, None, 100_000, {}).window == 100_000
    assert resolve_window(200_000, None, 100_000, {}).source == "settings"


def test_cli_auto_means_the_model_window_over_env_and_settings() -> None:
    config = resolve_window(200_000, "auto", 100_000, {"CCX_AUTO_COMPACT_WINDOW": "150000"})
    assert (config.window, config.source) == (200_000, "cli")


def test_never_above_the_model_window() -> None:
    config = resolve_window(200_000, "1000000", None, {})
    assert (config.window, config.source) == (200_000, "model")
    assert "above the model's window" in config.warnings[0]


def test_suffixes_are_understood() -> None:
    assert resolve_window(200_000, "120k", None, {}).window == 120_000
    assert resolve_window(1_000_000, "0.5m", None, {}).window == 500_000
    assert resolve_window(200_000, "120_000", None, {}).window == 120_000


@pytest.mark.parametrize("bad", ["lots", "-5", "9999", "", "12.x"])
def test_invalid_values_are_skipped_with_a_warning(bad: str) -> None:
    config = resolve_window(200_000, bad, None, {"CCX_AUTO_COMPACT_WINDOW": "150000"})
    assert config.window == 150_000
    assert config.source == "env"
    if bad:
        assert len(config.warnings) == 1 and repr(bad) in config.warnings[0]


def test_the_settings_value_reaches_the_parser_as_written() -> None:
    """ "120k" and 150000.0 in settings.json are windows, not values to drop silently."""
    for raw, window in (("120k", 120_000), (150_000.0, 150_000), ("50000", 50_000)):
        value = Settings(raw={"autoCompactWindow": raw}).auto_compact_window
        config = resolve_window(200_000, None, value, {})
        assert (config.window, config.source, config.warnings) == (window, "settings", [])
    junk = Settings(raw={"autoCompactWindow": [1]}).auto_compact_window
    assert "autoCompactWindow" in resolve_window(200_000, None, junk, {}).warnings[0]
    assert resolve_window(200_000, None, float("inf"), {}).warnings


def test_invalid_settings_value_falls_back_to_the_model() -> None:
    config = resolve_window(200_000, None, "huge", {})
    assert (config.window, config.source) == (200_000, "model")
    assert "autoCompactWindow" in config.warnings[0]
    assert resolve_window(200_000, None, True, {}).warnings


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", " Yes "])
def test_disable_flags(value: str) -> None:
    auto_off = resolve_window(200_000, None, None, {"DISABLE_AUTO_COMPACT": value})
    assert not auto_off.auto_enabled and auto_off.compact_enabled
    all_off = resolve_window(200_000, None, None, {"DISABLE_COMPACT": value})
    assert not all_off.auto_enabled and not all_off.compact_enabled


@pytest.mark.parametrize("value", ["0", "false", "", "no"])
def test_falsy_disable_flags_change_nothing(value: str) -> None:
    config = resolve_window(200_000, None, None, {"DISABLE_COMPACT": value})
    assert config.auto_enabled and config.compact_enabled


# -- levels and percentages --------------------------------------------------------------


def state(used: int, **kw):
    options = {"auto_enabled": True, "compact_enabled": True, "failures": 0, "circuit_open": False}
    options.update(kw)
    return context_state(used, LIMITS, source="api", **options)


@pytest.mark.parametrize(
    ("used", "level"),
    [
        (0, "ok"),
        (146_999, "ok"),
        (147_000, "warning"),
        (156_999, "warning"),
        (157_000, "error"),
        (176_999, "error"),
        (177_000, "blocking"),
        (250_000, "blocking"),
    ],
)
def test_levels(used: int, level: str) -> None:
    assert state(used).level == level


def test_levels_without_auto_compaction_measure_against_the_effective_window() -> None:
    # threshold 180K: warning 160K; error = max(160K, 157K) = 160K; blocking 177K
    assert state(150_000, auto_enabled=False).level == "ok"
    assert state(159_999, auto_enabled=False).level == "ok"
    assert state(160_000, auto_enabled=False).level == "error"
    assert state(177_000, auto_enabled=False).level == "blocking"
    assert state(90_000, auto_enabled=False).percent_until_auto_compact == 50


def test_compact_disabled_implies_auto_disabled() -> None:
    assert not state(1_000, compact_enabled=False).auto_compact_enabled


def test_percentages() -> None:
    s = state(50_123)
    assert s.percent_used == 25.1
    assert s.percent_until_auto_compact == 69  # (167000 - 50123) / 167000 = 69.98 -> 69
    assert state(0).percent_until_auto_compact == 100
    assert state(167_000).percent_until_auto_compact == 0
    assert state(400_000).percent_used == 100.0
    assert state(400_000).percent_until_auto_compact == 0


def test_to_json() -> None:
    data = state(100_000, failures=2).to_json()
    assert data["used"] == 100_000
    assert data["window"] == 200_000
    assert data["level"] == "ok"
    assert data["auto_compact_at"] == 167_000
    assert data["blocking_at"] == 177_000
    assert data["consecutive_failures"] == 2
    assert data["source"] == "api"
    assert "limits" not in data


# -- the warning bar ---------------------------------------------------------------------


def test_no_warning_when_ok() -> None:
    assert warning_text(state(10_000)) is None


def test_warning_text_names_the_auto_compact_point_and_offers_compact() -> None:
    text = warning_text(state(150_000))
    assert text == (
        "Context 75% full: ccx compacts at 167K; 17K to go. "
        "Run /compact [instructions] to choose what is kept."
    )


def test_warning_figures_are_tokens_of_this_window() -> None:
    """The issue's case: a 20K window compacts at 11.2K; at 8.55K that is 2.7K away (13.5% of
    the window, which the old words called "24% of the window away": a share of 11.2K)."""
    limits = ContextLimits(window=20_000, max_output=64_000)
    now = context_state(8_550, limits, auto_enabled=True, compact_enabled=True)
    assert format_tokens(limits.auto_compact) == "11.2K" and now.level == "warning"
    text = warning_text(now)
    assert text is not None and "compacts at 11.2K; 2.7K to go" in text
    assert "window away" not in text


def test_error_text_is_stronger() -> None:
    text = warning_text(state(160_000))
    assert text is not None and "now" in text and "/compact" in text
    assert text != warning_text(state(150_000))


def test_blocking_text() -> None:
    text = warning_text(state(178_000))
    assert text is not None and "refused" in text
    assert "/compact" in text and "/clear" in text  # every way out that works
    off = warning_text(state(178_000, compact_enabled=False))
    assert off is not None and "/clear" in off and "/compact" not in off


def test_circuit_open_text() -> None:
    text = warning_text(state(170_000, circuit_open=True, failures=3))
    assert text == (
        "Auto-compact stopped after 3 failures in a row. /compact [instructions] tries again; "
        "/clear starts over (the transcript stays on disk)."
    )


def test_auto_disabled_text() -> None:
    text = warning_text(state(165_000, auto_enabled=False))
    assert text is not None and "auto-compact is off" in text
    assert "refused at 177K; 12K to go" in text


def test_format_tokens() -> None:
    assert [format_tokens(n) for n in (950, 1_500, 167_000, 1_200_000, 1_000_000)] == [
        "950",
        "1.5K",
        "167K",
        "1.2M",
        "1M",
    ]
