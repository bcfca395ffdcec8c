"""Hooks: user shell commands run at points of a session, with Claude Code's settings schema.

``settings.hooks`` maps an event name to groups ``{"matcher": ..., "hooks":
[{"type": "command", "command": ..., "timeout": seconds}]}``. Every command of
every group whose matcher fits runs at once through ``/bin/sh -c`` in its own
process group, with the event as JSON on stdin. Exit 0 is success (stdout may
be JSON with Claude Code's fields); exit 2 blocks the events that can be
blocked (PreCompact); anything else is reported and ignored. A broken hook or
a malformed configuration is reported, never raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.permissions.settings import project_root

DEFAULT_TIMEOUT_S = 60.0
BLOCKING_EVENTS = frozenset({"PreCompact"})
CONTEXT_EVENTS = frozenset({"SessionStart"})  # whose stdout becomes context for the model
MAX_OUTPUT_CHARS = 10_000
_SIMPLE_MATCHER = re.compile(r"[\w|\-]+")


@dataclass
class HookOutcome:
    blocked: bool = False
    block_reason: str = ""
    additional_context: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # for the user, not the model
    ran: int = 0


@dataclass(frozen=True)
class HookCommand:
    command: str
    timeout: float


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


@dataclass
class _Result:
    hook: HookCommand
    exit_code: int | None  # None: it did not run or timed out
    stdout: str = ""
    stderr: str = ""
    problem: str = ""


class HookRunner:
    """The hooks of one session; ``warnings`` lists configuration that was ignored."""

    def __init__(self, hooks: dict[str, Any], cwd: Path, session_id: str, transcript_path: Path):
        self.cwd = Path(cwd)
        self.session_id = session_id
        self.transcript_path = Path(transcript_path)
        self.warnings: list[str] = []
        self.groups: dict[str, list[HookGroup]] = parse_hooks(hooks, self.warnings)

    def has(self, event: str, matcher_value: str | None = None) -> bool:
        return bool(self._matching(event, matcher_value))

    async def run(
        self, event: str, matcher_value: str | None, payload: dict[str, Any]
    ) -> HookOutcome:
        hooks = self._matching(event, matcher_value)
        outcome = HookOutcome()
        if not hooks:
            return outcome
        data: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript_path),
            "cwd": str(self.cwd),
            "hook_event_name": event,
        }
        for key, value in payload.items():
            data.setdefault(key, value)
        stdin = json.dumps(data, ensure_ascii=False, default=str).encode("utf-8")
        env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project_root(self.cwd))}
        results = await asyncio.gather(*(_run_command(h, stdin, self.cwd, env) for h in hooks))
        for result in results:
            _interpret(event, result, outcome)
        return outcome

    def _matching(self, event: str, matcher_value: str | None) -> list[HookCommand]:
        commands: dict[str, HookCommand] = {}
        for group in self.groups.get(event, []):
            if group.matches(matcher_value):
                for hook in group.commands:
                    commands.setdefault(hook.command, hook)  # the same command runs once
        return list(commands.values())


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
        if not isinstance(groups, list):
            warnings.append(f'"hooks.{event}" should be a list, not {_kind(groups)}; ignored.')
            continue
        for index, group in enumerate(groups):
            parsed_group = _parse_group(f"hooks.{event}[{index}]", group, warnings)
            if parsed_group is not None:
                parsed.setdefault(str(event), []).append(parsed_group)
    return parsed


def additional_context_text(event: str, outcome: HookOutcome) -> str:
    """The hooks' context as one block for a system reminder; "" when there is none."""
    if not outcome.additional_context:
        return ""
    return f"{event} hook output:\n" + "\n\n".join(outcome.additional_context)


# -- configuration -------------------------------------------------------------------------


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


# -- running -------------------------------------------------------------------------------


async def _run_command(hook: HookCommand, stdin: bytes, cwd: Path, env: dict[str, str]) -> _Result:
    try:
        process = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return _Result(hook, None, problem=f"could not be started: {exc}")
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin), hook.timeout)
    except TimeoutError:
        await _kill(process)
        return _Result(hook, None, problem=f"timed out after {hook.timeout:g} s and was stopped")
    finally:
        if process.returncode is None:  # cancelled: nothing may outlive the caller
            await _kill(process)
    return _Result(hook, process.returncode, _decode(out), _decode(err))


async def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(process.wait(), 5)


def _decode(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    if len(text) > MAX_OUTPUT_CHARS:
        cut = len(text) - MAX_OUTPUT_CHARS
        text = text[:MAX_OUTPUT_CHARS] + f"\n... ({cut} more characters cut)"
    return text


def _interpret(event: str, result: _Result, outcome: HookOutcome) -> None:
    label = f"{event} hook `{_short(result.hook.command)}`"
    if result.exit_code is None:
        outcome.messages.append(f"{label} {result.problem}")
        return
    outcome.ran += 1
    if result.exit_code == 2:
        reason = result.stderr or "(no reason given)"
        if event in BLOCKING_EVENTS:
            _block(outcome, reason)
        else:
            outcome.messages.append(f"{label} exited with 2: {reason}")
        return
    if result.exit_code != 0:
        detail = f": {result.stderr}" if result.stderr else ""
        outcome.messages.append(f"{label} failed with exit code {result.exit_code}{detail}")
        return
    output = _json_output(result.stdout)
    if output is None:
        if event in CONTEXT_EVENTS and result.stdout:
            outcome.additional_context.append(result.stdout)
        return
    _apply_json(event, label, output, outcome)


def _apply_json(event: str, label: str, output: dict[str, Any], outcome: HookOutcome) -> None:
    if isinstance(output.get("systemMessage"), str) and output["systemMessage"].strip():
        outcome.messages.append(output["systemMessage"].strip())
    stop = output.get("continue") is False
    decision_block = output.get("decision") == "block"
    if stop or decision_block:
        key = "stopReason" if stop else "reason"
        reason = output.get(key) if isinstance(output.get(key), str) else ""
        if event in BLOCKING_EVENTS:
            _block(outcome, reason or "(no reason given)")
        else:
            outcome.messages.append(f"{label} asked to stop: {reason or '(no reason given)'}")
    specific = output.get("hookSpecificOutput")
    if event in CONTEXT_EVENTS and isinstance(specific, dict):
        context = specific.get("additionalContext")
        if isinstance(context, str) and context.strip():
            outcome.additional_context.append(context.strip()[:MAX_OUTPUT_CHARS])


def _block(outcome: HookOutcome, reason: str) -> None:
    outcome.blocked = True
    outcome.block_reason = (
        reason if not outcome.block_reason else f"{outcome.block_reason}\n{reason}"
    )


def _json_output(stdout: str) -> dict[str, Any] | None:
    """Stdout as Claude Code's JSON hook output, or None when it is plain text."""
    if not stdout.startswith("{"):
        return None
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _short(command: str, limit: int = 60) -> str:
    command = " ".join(command.split())
    return command if len(command) <= limit else command[: limit - 1] + "…"
