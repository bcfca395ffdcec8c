"""tui.cli.sdk_flags: the Agent SDK's flags taken out before typer, with their meanings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.cli.sdk_flags import FlagError, apply, take
from tui.session.options import RunOptions

KNOWN = {"--model", "-p", "--output-format", "--input-format", "--resume"}


def test_take_keeps_ccx_options_and_pulls_out_the_sdks() -> None:
    argv = ["-p", "hi", "--tools", "", "--model", "x", "--include-hook-events",
            "--setting-sources=user", "--resume=abc"]  # fmt: skip
    rest, flags = take(argv, KNOWN)
    assert rest == ["-p", "hi", "--model", "x", "--resume=abc"]
    assert flags.values == {"--tools": [""], "--include-hook-events": ["true"],
                            "--setting-sources": ["user"]}  # fmt: skip
    assert not flags.warnings


def test_unknown_flags_warn_and_keep_a_prompt_unless_streaming() -> None:
    rest, flags = take(["-p", "--future", "the prompt"], KNOWN)
    assert rest == ["-p", "the prompt"] and "--future" in flags.warnings[0]
    rest, _ = take(["--input-format", "stream-json", "--future", "value"], KNOWN)
    assert rest == ["--input-format", "stream-json"]  # the SDK's `--flag value` extra_args


def test_apply_gives_claude_codes_meanings() -> None:
    options = RunOptions(cwd=Path("."))
    _rest, flags = take(
        ["--tools", "default", "--betas", "a,b", "--betas", "c", "--thinking", "adaptive",
         "--max-budget-usd", "0.25", "--effort", "low"],
        KNOWN,
    )  # fmt: skip
    apply(flags, options)
    assert options.tools is None and options.betas == ["a", "b", "c"]
    assert options.thinking == "adaptive" and options.max_budget_usd == 0.25
    assert options.effort == "low"


def test_thinking_display_and_budget_are_kept_for_the_model_setup() -> None:
    _rest, flags = take(
        ["-p", "x", "--thinking-display", "summarized", "--max-thinking-tokens", "4096"], KNOWN
    )
    options = RunOptions(cwd=Path("."))
    apply(flags, options)
    assert options.show_thinking and options.max_thinking_tokens == "4096"
    assert not flags.warnings


@pytest.mark.parametrize(
    "argv",
    [["--effort", "extreme"], ["--max-budget-usd", "-1"], ["--max-thinking-tokens", "10"],
     ["--thinking", "sometimes"], ["--thinking-display", "full"],
     ["--json-schema", "[]"], ["--agents", "{bad"], ["--tools"]],
)  # fmt: skip
def test_bad_values_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises(FlagError):
        _rest, flags = take(argv, KNOWN)
        apply(flags, RunOptions(cwd=Path(".")))


def test_interactively_an_unknown_flag_is_left_for_typer_to_refuse() -> None:
    rest, flags = take(["--no-such-flag", "--help"], KNOWN | {"--help"})
    assert rest == ["--no-such-flag", "--help"] and not flags.warnings
