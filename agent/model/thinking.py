"""What a request asks of the model by default: thinking, effort, output limit and their betas.

Per model (``agent.model.catalog.traits_for``), as Claude Code sends it:

- thinking ``adaptive`` where the model has it, else ``enabled`` with a budget
  one token under ``max_tokens``;
- ``output_config.effort`` on models that take it: the user's level, else the model's;
- ``max_tokens``: the output limit requests ask for (``CLAUDE_CODE_MAX_OUTPUT_TOKENS``
  lowers it);
- while thinking is on, ``context_management`` asks the API to keep every
  thinking block (``clear_thinking_20251015``, keep all);
- the betas these need: interleaved thinking, context management, effort, and
  the 1M context for a 200K model named with ``[1m]``.

The user's switches (``ThinkingChoice``): ``--max-thinking-tokens 0``,
``MAX_THINKING_TOKENS=0``, ``CLAUDE_CODE_DISABLE_THINKING=1`` and the setting
``alwaysThinkingEnabled: false`` turn thinking off, on the models that accept
that (the 5.x models refuse it: they keep adaptive thinking, and ``effort low``
is the way to ask for less); ``--max-thinking-tokens N`` / ``MAX_THINKING_TOKENS=N``
set the budget of models that think with one (adaptive models decide for
themselves). Flags win over the environment, the environment over settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from agent.core.request import CLEAR_THINKING, MIN_THINKING_BUDGET, with_beta
from agent.model.catalog import EFFORTS, LONG_CONTEXT_BETA, limits_for, traits_for

INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
EFFORT_BETA = "effort-2025-11-24"

Display = Literal["summarized", "omitted"]
OFF_WORDS = ("0", "false", "no", "off")


class ThinkingError(ValueError):
    """A thinking or effort value that cannot be used; the text says which and why."""


@dataclass(frozen=True)
class ThinkingChoice:
    """What the user asked for; None everywhere is the model's default."""

    off: bool = False  # thinking turned off (where the model allows it)
    budget: int | None = None  # thinking tokens, for models that think with a budget
    adaptive: bool | None = None  # --thinking adaptive (True) / enabled (False)
    effort: str | None = None
    display: Display = "omitted"  # "summarized" where a front end shows the thinking
    max_output: int | None = None  # CLAUDE_CODE_MAX_OUTPUT_TOKENS

    def with_effort(self, effort: str | None) -> ThinkingChoice:
        return replace(self, effort=check_effort(effort) if effort is not None else None)


@dataclass(frozen=True)
class RequestSettings:
    """The fields one request to one model gets."""

    max_tokens: int
    thinking: dict[str, Any]
    effort: str | None = None
    betas: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=(), compare=False)  # a switch the model ignores

    @property
    def thinking_on(self) -> bool:
        return self.thinking.get("type") in ("enabled", "adaptive")

    @property
    def budget(self) -> int | None:
        return self.thinking.get("budget_tokens")

    def extra(self, base: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``base`` (a request extra: headers, body fields) with these settings in it."""
        merged: dict[str, Any] = dict(base or {})
        merged["thinking"] = dict(self.thinking)
        if self.effort is not None:
            merged["output_config"] = {**(merged.get("output_config") or {}), "effort": self.effort}
        if self.thinking_on:
            body = dict(merged.get("extra_body") or {})
            management = dict(body.get("context_management") or {})
            edits = [
                e for e in management.get("edits") or [] if e.get("type") != CLEAR_THINKING["type"]
            ]
            management["edits"] = [dict(CLEAR_THINKING), *edits]  # the API wants it first
            body["context_management"] = management
            merged["extra_body"] = body
        for beta in self.betas:
            merged = with_beta(merged, beta)
        return merged


def request_settings(
    model: str,
    choice: ThinkingChoice,
    *,
    output_limit: int | None = None,
    long_context: bool = False,
) -> RequestSettings:
    """The settings for ``model`` (``output_limit``: its real output limit when known)."""
    traits = traits_for(model)
    limit = output_limit or limits_for(model).max_output
    max_tokens = min(choice.max_output or traits.request_output, limit)
    notes: list[str] = []
    thinking = _thinking(model, choice, traits.adaptive, traits.thinking_off, max_tokens, notes)
    effort = _effort(model, choice.effort, traits.efforts, traits.default_effort, notes)
    betas: list[str] = []
    if long_context:
        betas.append(LONG_CONTEXT_BETA)
    if thinking["type"] in ("enabled", "adaptive"):
        betas += [INTERLEAVED_THINKING_BETA, CONTEXT_MANAGEMENT_BETA]
    if effort is not None:
        betas.append(EFFORT_BETA)
    return RequestSettings(max_tokens, thinking, effort, tuple(betas), tuple(notes))


def _thinking(
    model: str,
    choice: ThinkingChoice,
    adaptive: bool,
    can_turn_off: bool,
    max_tokens: int,
    notes: list[str],
) -> dict[str, Any]:
    if choice.off and can_turn_off:
        return {"type": "disabled"}
    if choice.off:
        notes.append(f"Thinking cannot be turned off for {model}; use a lower effort instead")
    if adaptive and choice.adaptive is not False:
        if choice.budget is not None and not choice.off:
            notes.append(f"{model} decides how long to think; the thinking budget is not used")
        return {"type": "adaptive", "display": choice.display}
    budget = min(choice.budget or max_tokens - 1, max_tokens - 1)
    if budget < MIN_THINKING_BUDGET:  # an output limit too small to think in
        return {"type": "disabled"} if can_turn_off else {"type": "adaptive"}
    return {"type": "enabled", "budget_tokens": budget, "display": choice.display}


def _effort(
    model: str,
    asked: str | None,
    levels: tuple[str, ...],
    default: str | None,
    notes: list[str],
) -> str | None:
    if not levels:
        if asked is not None:
            notes.append(f"{model} takes no effort level; {asked} is not sent")
        return None
    if asked is None or asked in levels:
        return asked or default
    # The nearest level the model has, below the one asked for when there is one.
    below = [level for level in levels if EFFORTS.index(level) < EFFORTS.index(asked)]
    chosen = below[-1] if below else levels[0]
    notes.append(f"{model} has no effort level {asked}; using {chosen}")
    return chosen


def check_effort(value: str) -> str:
    effort = value.strip().lower()
    if effort not in EFFORTS:
        raise ThinkingError(f"Unknown effort level {value!r}: use one of {', '.join(EFFORTS)}")
    return effort


def parse_budget(value: str, source: str) -> int:
    """A thinking budget as typed: 0 is off (returned as 0), else at least 1,024."""
    try:
        budget = int(value.strip())
    except ValueError:
        raise ThinkingError(f"{source}: {value!r} is not a whole number of tokens") from None
    if budget < 0 or 0 < budget < MIN_THINKING_BUDGET:
        raise ThinkingError(
            f"{source}: {budget} is too small; the API needs at least {MIN_THINKING_BUDGET} "
            "thinking tokens (0 turns thinking off)"
        )
    return budget


def choose(
    *,
    env: Mapping[str, str],
    always_thinking: Any = None,
    effort_setting: Any = None,
    flag_budget: str | None = None,
    flag_mode: str | None = None,
    flag_effort: str | None = None,
    display: Display = "omitted",
) -> ThinkingChoice:
    """The user's choice from flags, then the environment, then settings.

    ThinkingError for a value that cannot be used (a budget under 1,024, an
    unknown effort level, a mode that is not adaptive / enabled / disabled).
    """
    choice = ThinkingChoice(display=display)
    if always_thinking is False:
        choice = replace(choice, off=True)
    if env.get("CLAUDE_CODE_DISABLE_THINKING", "").strip().lower() in ("1", "true", "yes"):
        choice = replace(choice, off=True)
    choice = _budget(choice, env.get("MAX_THINKING_TOKENS", "").strip(), "MAX_THINKING_TOKENS")
    choice = _budget(choice, (flag_budget or "").strip(), "--max-thinking-tokens")
    if flag_mode is not None:
        mode = flag_mode.strip().lower()
        if mode not in ("adaptive", "enabled", "disabled"):
            raise ThinkingError("--thinking: use adaptive, enabled or disabled")
        choice = replace(
            choice,
            off=mode == "disabled",
            adaptive=None if mode == "disabled" else mode == "adaptive",
        )
    if (output := env.get("CLAUDE_CODE_MAX_OUTPUT_TOKENS", "").strip()) and output.isdigit():
        choice = replace(choice, max_output=int(output) or None)
    for source, value in (
        ("effortLevel", effort_setting),
        ("CLAUDE_CODE_EFFORT_LEVEL", env.get("CLAUDE_CODE_EFFORT_LEVEL")),
        ("--effort", flag_effort),
    ):
        if isinstance(value, str) and value.strip():
            try:
                choice = replace(choice, effort=check_effort(value))
            except ThinkingError as exc:
                raise ThinkingError(f"{source}: {exc}") from None
    return choice


def _budget(choice: ThinkingChoice, value: str, source: str) -> ThinkingChoice:
    if not value:
        return choice
    budget = parse_budget(value, source)
    if budget == 0:
        return replace(choice, off=True, budget=None)
    return replace(choice, off=False, budget=budget)
