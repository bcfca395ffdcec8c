"""Hooks configuration: settings' ``hooks`` value parsed into groups per event, with warnings.

``settings.hooks`` maps an event name to groups ``{"matcher": ..., "hooks":
[{"type": "command", "command": ..., "timeout": seconds}]}``, Claude Code's schema. A
matcher is empty or ``*`` (everything), a name, ``a|b`` alternatives, or a regular
expression. Whatever is malformed, and every event ccx does not run, becomes a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

DEFAULT_TIMEOUT_S = 60.0
# The events ccx fires, in a session's order; SubagentStop once subagents exist (issue 13).
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
_SIMPLE_MATCHER = re.compile(r"[\w|\-]+")


@dataclass(frozen=True)
class HookCommand:
    command: str
    timeout: float
    callback: str | None = None  # an Agent SDK hook: its callback id, answered by the client
    block_on_failure: bool = False  # an SDK hook's onFailure "block": no answer blocks
    plugin_root: str | None = None  # a plugin's hook: CLAUDE_PLUGIN_ROOT in its environment


def callback_groups(hooks: Any, warnings: list[str]) -> dict[str, list[HookGroup]]:
    """The Agent SDK's ``initialize`` hooks (``{event: [{matcher, hookCallbackIds, timeout}]}``)
    as groups whose commands are callbacks."""
    parsed: dict[str, list[HookGroup]] = {}
    for event, matchers in (hooks or {}).items() if isinstance(hooks, dict) else ():
        if event not in EVENTS:
            warnings.append(f"SDK hooks for {event!r}: ccx does not fire that event")
            continue
        for index, entry in enumerate(matchers if isinstance(matchers, list) else ()):
            if not isinstance(entry, dict):
                continue
            timeout = entry.get("timeout")
            if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
                timeout = DEFAULT_TIMEOUT_S
            # An unknown value reads as "block"; Stop and SubagentStop ignore it (the SDK's rule).
            blocks = entry.get("onFailure") not in (None, "continue")
            blocks = blocks and event not in ("Stop", "SubagentStop")
            commands = tuple(
                HookCommand(f"SDK callback {cid}", float(timeout), str(cid), blocks)
                for cid in entry.get("hookCallbackIds") or ()
            )
            matcher = entry.get("matcher") or ""
            if commands and isinstance(matcher, str):
                where = f"SDK hooks {event}[{index}]"
                pattern = _matcher_pattern(where, matcher, warnings)
                parsed.setdefault(event, []).append(HookGroup(matcher.strip(), commands, pattern))
    return parsed


@dataclass(frozen=True)
class HookGroup:
    matcher: str
    commands: tuple[HookCommand, ...]
    pattern: re.Pattern[str] | None = None  # None: exact names, "a|b" alternatives

    def matches(self, value: str | None) -> bool:
        if value is None or self.matcher in ("", "*"):
            return True
        if self.pattern is not None:
            return self.pattern.search(value) is not None
        return value in self.matcher.split("|")


def parse_hooks(hooks: Any, warnings: list[str]) -> dict[str, list[HookGroup]]:
    """Settings' ``hooks`` value as groups per event; whatever is malformed goes to warnings."""
    if not isinstance(hooks, dict):
        if hooks:
            warnings.append(
                f'"hooks" in settings should be an object, not {_kind(hooks)}; ignored.'
            )
        return {}
    parsed: dict[str, list[HookGroup]] = {}
    for event, groups in hooks.items():
        if event not in EVENTS:
            warnings.append(
                f'"hooks.{event}": ccx does not know the hook event {event!r}, so these hooks '
                f"never run (events: {', '.join(EVENTS)})."
            )
            continue
        if not isinstance(groups, list):
            warnings.append(f'"hooks.{event}" should be a list, not {_kind(groups)}; ignored.')
            continue
        for index, group in enumerate(groups):
            parsed_group = _parse_group(f"hooks.{event}[{index}]", group, warnings)
            if parsed_group is not None:
                parsed.setdefault(str(event), []).append(parsed_group)
    return parsed


def _parse_group(where: str, group: Any, warnings: list[str]) -> HookGroup | None:
    if not isinstance(group, dict):
        warnings.append(f'{where} should be an object with a "hooks" list; ignored.')
        return None
    matcher = group.get("matcher", "")
    if matcher is None:
        matcher = ""
    if not isinstance(matcher, str):
        warnings.append(f"{where}.matcher should be a string, not {_kind(matcher)}; ignored.")
        return None
    entries = group.get("hooks")
    if not isinstance(entries, list):
        warnings.append(f"{where}.hooks should be a list, not {_kind(entries)}; ignored.")
        return None
    commands = []
    for index, entry in enumerate(entries):
        command = _parse_command(f"{where}.hooks[{index}]", entry, warnings)
        if command is not None:
            commands.append(command)
    if not commands:
        return None
    return HookGroup(matcher.strip(), tuple(commands), _matcher_pattern(where, matcher, warnings))


def _parse_command(where: str, entry: Any, warnings: list[str]) -> HookCommand | None:
    if not isinstance(entry, dict):
        warnings.append(f"{where} should be an object; ignored.")
        return None
    kind = entry.get("type", "command")
    if kind != "command":
        warnings.append(f'{where} has type {kind!r}; only "command" hooks are supported.')
        return None
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        warnings.append(f'{where} has no "command" to run; ignored.')
        return None
    timeout = entry.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        warnings.append(f"{where}.timeout should be a positive number of seconds; using 60.")
        timeout = DEFAULT_TIMEOUT_S
    return HookCommand(command, float(timeout))


def _matcher_pattern(where: str, matcher: str, warnings: list[str]) -> re.Pattern[str] | None:
    matcher = matcher.strip()
    if matcher in ("", "*") or _SIMPLE_MATCHER.fullmatch(matcher):
        return None
    try:
        return re.compile(matcher)
    except re.error as exc:
        warnings.append(
            f"{where}.matcher {matcher!r} is not a valid regular expression ({exc}); "
            "matching it as plain names."
        )
        return None


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
