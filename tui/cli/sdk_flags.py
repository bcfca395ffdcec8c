"""Claude Code's flags that the Agent SDK passes beyond ccx's own CLI, taken out before typer.

The SDK starts its CLI with whatever its options ask for (``--tools``,
``--setting-sources``, ``--json-schema``, ``--effort``, ``--betas`` ... and
``extra_args`` for flags it does not know itself). ``take`` pulls those out of
the command line, so typer sees only ccx's options; ``apply`` puts their values
on the RunOptions with Claude Code's meaning. A flag ccx cannot honour
(``--task-budget``, and in a headless run an unknown one) is
dropped with a warning on stderr, never an exit: a client's newer flag must not
stop the session. Interactively an unknown flag stays a usage error (a typo).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from agent.model.thinking import ThinkingError, check_effort, choose

VALUE_FLAGS = frozenset(
    {
        "--tools",
        "--setting-sources",
        "--max-budget-usd",
        "--json-schema",
        "--effort",
        "--betas",
        "--resume-session-at",
        "--max-thinking-tokens",
        "--thinking",
        "--thinking-display",
        "--agents",
        "--task-budget",
        "--resume-drops-turn",
    }
)
BOOL_FLAGS = frozenset(
    {"--include-hook-events", "--include-ccx-events", "--strict-mcp-config", "--session-mirror"}
)
# Taken and warned about: ccx has nothing to do them with.
NOT_HONOURED = {
    "--task-budget": "ccx has no task budgets; the limit is not enforced",
    "--resume-drops-turn": "ccx does not check this guard",
    "--session-mirror": "ccx writes its own transcripts only",
}
SETTING_SOURCES = ("user", "project", "local")
TOOL_PRESETS = ("default",)


class FlagError(ValueError):
    """A value the flag cannot take; a usage error (exit 2) with this text."""


@dataclass
class SdkFlags:
    values: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def last(self, flag: str) -> str | None:
        found = self.values.get(flag)
        return found[-1] if found else None


def take(argv: list[str], known: Collection[str]) -> tuple[list[str], SdkFlags]:
    """argv without the SDK's flags and unknown ones; what they said."""
    rest: list[str] = []
    flags = SdkFlags()
    # The SDK's way (stream-json input): no prompt argument an unknown flag could swallow.
    streaming = "--input-format=stream-json" in argv or any(
        a == "--input-format" and b == "stream-json" for a, b in pairwise(argv)
    )
    headless = streaming or "-p" in argv or "--print" in argv  # the SDK's runs, scripts
    index = 0
    while index < len(argv):
        arg = argv[index]
        index += 1
        if arg == "--":
            rest += argv[index - 1 :]
            break
        name, has_value, value = arg.partition("=")
        if not name.startswith("--") or name in known:
            rest.append(arg)
            continue
        if name in BOOL_FLAGS:
            flags.values.setdefault(name, []).append("true")
            continue
        if name in VALUE_FLAGS:
            if not has_value:
                if index >= len(argv):
                    raise FlagError(f"{name} needs a value")
                value, index = argv[index], index + 1
            flags.values.setdefault(name, []).append(value)
            continue
        if not headless:  # a typo at the keyboard: typer says it is unknown
            rest.append(arg)
            continue
        if not has_value and streaming and index < len(argv) and not argv[index].startswith("-"):
            index += 1  # `--flag value` from the SDK's extra_args
        flags.warnings.append(f"ccx: ignoring the flag {name}, which ccx does not know")
    for name, why in NOT_HONOURED.items():
        if name in flags.values:
            flags.warnings.append(f"ccx: ignoring {name}: {why}")
    return rest, flags


def apply(flags: SdkFlags, options: Any) -> None:
    """Set the flags' values on ``options`` (a RunOptions); FlagError for a bad value."""
    if (tools := flags.last("--tools")) is not None:
        names = [t.strip() for t in tools.replace(" ", ",").split(",") if t.strip()]
        options.tools = None if names == list(TOOL_PRESETS) else names
    if (sources := flags.last("--setting-sources")) is not None:
        chosen = [s.strip() for s in sources.split(",") if s.strip()]
        if bad := [s for s in chosen if s not in SETTING_SOURCES]:
            raise FlagError(f"--setting-sources: unknown source {bad[0]!r}; use user,project,local")
        options.setting_sources = chosen
    if (budget := flags.last("--max-budget-usd")) is not None:
        options.max_budget_usd = _number("--max-budget-usd", budget, positive=True)
    if (schema := flags.last("--json-schema")) is not None:
        options.json_schema = _json_object("--json-schema", schema)
    if (effort := flags.last("--effort")) is not None:
        try:
            options.effort = check_effort(effort)
        except ThinkingError as exc:
            raise FlagError(f"--effort: {exc}") from None
    for betas in flags.values.get("--betas", []):
        options.betas += [b.strip() for b in betas.split(",") if b.strip()]
    if (display := flags.last("--thinking-display")) is not None:
        if display not in ("summarized", "omitted"):
            raise FlagError("--thinking-display: use summarized or omitted")
        options.show_thinking = display == "summarized"
    options.thinking = flags.last("--thinking")
    options.max_thinking_tokens = flags.last("--max-thinking-tokens")
    try:  # checked here, so a bad value is a usage error (agent.model.thinking reads them)
        choose(env={}, flag_budget=options.max_thinking_tokens, flag_mode=options.thinking)
    except ThinkingError as exc:
        raise FlagError(str(exc)) from None
    options.include_hook_events = "--include-hook-events" in flags.values
    options.include_ccx_events = "--include-ccx-events" in flags.values
    options.strict_mcp_config = "--strict-mcp-config" in flags.values
    options.resume_session_at = flags.last("--resume-session-at")
    if (agents := flags.last("--agents")) is not None:
        options.agents = _json_object("--agents", agents)


def warn(flags: SdkFlags) -> None:
    for text in flags.warnings:
        print(text, file=sys.stderr, flush=True)


def _number(flag: str, text: str, *, positive: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        raise FlagError(f"{flag}: {text!r} is not a number") from None
    if positive and not value > 0:
        raise FlagError(f"{flag}: must be more than 0")
    return value


def _json_object(flag: str, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FlagError(f"{flag}: not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise FlagError(f"{flag}: must be a JSON object")
    return value
