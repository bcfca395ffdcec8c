"""agent.model.thinking: the request fields each model gets, and the user's switches on them."""

from __future__ import annotations

import pytest

from agent.core.messages import user_text
from agent.core.request import CLEAR_THINKING, build_request, fit_thinking
from agent.model.thinking import (
    CONTEXT_MANAGEMENT_BETA,
    EFFORT_BETA,
    INTERLEAVED_THINKING_BETA,
    ThinkingChoice,
    ThinkingError,
    choose,
    request_settings,
)

FIVE = ("claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-2")
FOUR = ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5")


@pytest.mark.parametrize("model", FIVE)
def test_the_5x_models_think_adaptively_at_medium_effort_with_their_whole_output(
    model: str,
) -> None:
    settings = request_settings(model, ThinkingChoice())
    assert settings.max_tokens == 128_000
    assert settings.thinking == {"type": "adaptive", "display": "omitted"}
    assert settings.effort == "medium"
    assert settings.betas == (INTERLEAVED_THINKING_BETA, CONTEXT_MANAGEMENT_BETA, EFFORT_BETA)


@pytest.mark.parametrize("model", FOUR)
def test_the_45_models_think_with_a_budget_one_under_32000(model: str) -> None:
    settings = request_settings(model, ThinkingChoice())
    assert settings.max_tokens == 32_000
    assert settings.thinking == {"type": "enabled", "budget_tokens": 31_999, "display": "omitted"}
    # Only Opus 4.5 takes an effort level (high, as Claude Code sends it).
    assert settings.effort == ("high" if model == "claude-opus-4-5" else None)
    assert (EFFORT_BETA in settings.betas) == (model == "claude-opus-4-5")


def test_the_request_extra_carries_thinking_effort_clearing_and_betas() -> None:
    extra = request_settings("claude-opus-5-5", ThinkingChoice()).extra()
    assert extra["thinking"] == {"type": "adaptive", "display": "omitted"}
    assert extra["output_config"] == {"effort": "medium"}
    assert extra["extra_body"]["context_management"] == {"edits": [CLEAR_THINKING]}
    assert extra["extra_headers"]["anthropic-beta"] == (
        "interleaved-thinking-2025-05-14,context-management-2025-06-27,effort-2025-11-24"
    )


def test_clear_thinking_goes_first_among_other_edits_and_betas_are_merged() -> None:
    other = {"type": "clear_tool_uses_20250919", "keep": {"type": "tool_uses", "value": 3}}
    base = {
        "extra_body": {"context_management": {"edits": [other]}},
        "extra_headers": {"anthropic-beta": "context-management-2025-06-27,mine-2026-01-01"},
    }
    extra = request_settings("claude-sonnet-4-5", ThinkingChoice()).extra(base)
    assert extra["extra_body"]["context_management"]["edits"] == [CLEAR_THINKING, other]
    betas = extra["extra_headers"]["anthropic-beta"].split(",")
    assert betas.count(CONTEXT_MANAGEMENT_BETA) == 1 and "mine-2026-01-01" in betas
    assert base["extra_body"]["context_management"]["edits"] == [other]  # not changed


def test_thinking_off_where_the_model_allows_it_and_no_clearing_then() -> None:
    settings = request_settings("claude-sonnet-4-5", ThinkingChoice(off=True))
    assert settings.thinking == {"type": "disabled"} and settings.max_tokens == 32_000
    assert settings.betas == ()
    assert "extra_body" not in settings.extra()


def test_the_5x_models_refuse_thinking_off_so_it_stays_adaptive_with_a_note() -> None:
    settings = request_settings("claude-opus-5-5", ThinkingChoice(off=True))
    assert settings.thinking["type"] == "adaptive"
    assert any("cannot be turned off" in note for note in settings.notes)


def test_a_budget_applies_to_budget_models_and_stays_under_max_tokens() -> None:
    assert request_settings("claude-sonnet-4-5", ThinkingChoice(budget=8_000)).budget == 8_000
    # Above the output limit: one token under it, as Claude Code does.
    assert request_settings("claude-sonnet-4-5", ThinkingChoice(budget=50_000)).budget == 31_999
    adaptive = request_settings("claude-opus-5-5", ThinkingChoice(budget=8_000))
    assert adaptive.thinking["type"] == "adaptive" and adaptive.notes


def test_a_lower_output_limit_takes_the_budget_down_with_it() -> None:
    settings = request_settings("claude-sonnet-4-5", ThinkingChoice(max_output=20_000))
    assert (settings.max_tokens, settings.budget) == (20_000, 19_999)
    tiny = request_settings("claude-sonnet-4-5", ThinkingChoice(max_output=1_000))
    assert tiny.thinking == {"type": "disabled"}  # no room for the smallest budget
    # Never above the model's real limit.
    assert request_settings("claude-opus-5-5", ThinkingChoice(max_output=500_000)).max_tokens == (
        128_000
    )
    assert request_settings("claude-opus-5-5", ThinkingChoice(), output_limit=4_096).max_tokens == (
        4_096
    )


def test_effort_levels_the_model_lacks_fall_to_the_nearest_below() -> None:
    assert request_settings("claude-opus-5-5", ThinkingChoice(effort="xhigh")).effort == "xhigh"
    opus45 = request_settings("claude-opus-4-5", ThinkingChoice(effort="max"))
    assert opus45.effort == "high" and opus45.notes
    sonnet45 = request_settings("claude-sonnet-4-5", ThinkingChoice(effort="low"))
    assert sonnet45.effort is None and "takes no effort level" in sonnet45.notes[0]


def test_display_is_what_the_front_end_asked_for() -> None:
    choice = ThinkingChoice(display="summarized")
    assert request_settings("claude-opus-5-5", choice).thinking["display"] == "summarized"
    assert request_settings("claude-haiku-4-5", choice).thinking["display"] == "summarized"


def test_the_long_context_beta_for_a_200k_model_named_with_1m() -> None:
    settings = request_settings("claude-sonnet-4-5", ThinkingChoice(), long_context=True)
    assert settings.betas[0] == "context-1m-2025-08-07"


def test_choose_reads_flags_over_env_over_settings() -> None:
    assert choose(env={}) == ThinkingChoice()
    assert choose(env={}, always_thinking=False).off
    assert not choose(env={"MAX_THINKING_TOKENS": "4096"}, always_thinking=False).off
    assert choose(env={"MAX_THINKING_TOKENS": "0"}).off
    assert choose(env={"CLAUDE_CODE_DISABLE_THINKING": "1"}).off
    flag = choose(env={"MAX_THINKING_TOKENS": "0"}, flag_budget="2048")
    assert (flag.off, flag.budget) == (False, 2048)
    assert choose(env={"MAX_THINKING_TOKENS": "9000"}, flag_budget="0").off
    assert choose(env={}, flag_mode="disabled").off
    assert choose(env={}, flag_mode="enabled").adaptive is False
    assert choose(env={"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "20000"}).max_output == 20_000
    efforts = {"effort_setting": "low", "env": {"CLAUDE_CODE_EFFORT_LEVEL": "high"}}
    assert choose(**efforts).effort == "high"
    assert choose(**efforts, flag_effort="MAX").effort == "max"
    assert choose(env={}, effort_setting="low").effort == "low"


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"flag_budget": "500"}, "at least 1024"),
        ({"env": {"MAX_THINKING_TOKENS": "lots"}}, "MAX_THINKING_TOKENS"),
        ({"flag_budget": "-1"}, "too small"),
        ({"flag_mode": "sometimes"}, "adaptive, enabled or disabled"),
        ({"flag_effort": "extreme"}, "--effort"),
        ({"effort_setting": "huge"}, "effortLevel"),
    ],
)
def test_choose_refuses_values_the_api_cannot_take(kwargs: dict, words: str) -> None:
    kwargs = {"env": {}, **kwargs}
    with pytest.raises(ThinkingError, match=words):
        choose(**kwargs)


def test_a_side_call_with_a_smaller_limit_shares_it_between_thinking_and_answer() -> None:
    extra = request_settings("claude-sonnet-4-5", ThinkingChoice()).extra()
    request = build_request(
        model="claude-sonnet-4-5",
        system=[{"type": "text", "text": "s"}],
        tools=[],
        messages=[user_text("summarize")],
        max_tokens=8_000,
        extra=extra,
    )
    assert request["thinking"]["budget_tokens"] == 4_000 < request["max_tokens"]
    assert request["extra_body"]["context_management"]["edits"] == [CLEAR_THINKING]


def test_too_small_a_limit_turns_thinking_off_and_drops_its_edit() -> None:
    other = {"type": "clear_tool_uses_20250919"}
    request = {
        "max_tokens": 1_500,
        "thinking": {"type": "enabled", "budget_tokens": 31_999},
        "extra_body": {"context_management": {"edits": [CLEAR_THINKING, other]}},
    }
    fitted = fit_thinking(dict(request))
    assert fitted["thinking"] == {"type": "disabled"}
    assert fitted["extra_body"]["context_management"]["edits"] == [other]
    alone = fit_thinking(
        {**request, "extra_body": {"context_management": {"edits": [CLEAR_THINKING]}}}
    )
    assert "context_management" not in alone["extra_body"]


def test_budgets_under_max_tokens_and_adaptive_thinking_are_left_alone() -> None:
    fine = {"max_tokens": 32_000, "thinking": {"type": "enabled", "budget_tokens": 31_999}}
    assert fit_thinking(dict(fine)) == fine
    adaptive = {"max_tokens": 100, "thinking": {"type": "adaptive"}}
    assert fit_thinking(dict(adaptive)) == adaptive
