"""Running one event's hooks: the payload on stdin, each command in its own process group.

Every command of every group whose matcher fits runs at once through ``/bin/sh -c``,
with the event as JSON on stdin (Claude Code's fields: session_id, transcript_path, cwd,
hook_event_name, permission_mode, prompt_id, effort, and the event's own) and
``CLAUDE_PROJECT_DIR`` in its environment (a plugin's hook: ``CLAUDE_PLUGIN_ROOT`` too), killed with its children at its timeout.
ccx waits for the command, not for children it leaves in the background
(``agent.instructions.hooks.process``): its output up to its exit counts, and what it
left running is killed when the session ends (``kill_lingering``) or ccx does. An
Agent SDK hook (registered in ``initialize``) is a callback instead: the payload goes to
the client, whose answer is read as a command hook's JSON output. A broken hook is
reported in the outcome's messages, never raised; with ``on_event`` set, each hook's
start and end are events too (stream-json's hook_started / hook_response).
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent.core.events import EventSink, HookEnding, HookResponse, HookStarted
from agent.instructions.hooks.config import HookCommand, HookGroup, callback_groups, parse_hooks
from agent.instructions.hooks.outcome import (
    MAX_OUTPUT_CHARS,
    HookOutcome,
    HookResult,
    interpret,
    shown_output,
)
from agent.instructions.hooks.process import group_alive, kill_group, run_shell_command
from agent.permissions.settings import project_root
from tools.sandbox import Sandbox

# Claude Code sends no permission mode before the session has one, nor at its end.
_NO_MODE_EVENTS = frozenset({"SessionStart", "SessionEnd"})
_NO_EFFORT_EVENTS = _NO_MODE_EVENTS | {"UserPromptSubmit"}
# A hook's output kept, per stream: enough for MAX_OUTPUT_CHARS of up to 4 bytes each.
KEEP_BYTES = MAX_OUTPUT_CHARS * 4 + 4
PLUGIN_ROOT = "CLAUDE_PLUGIN_ROOT"
# An SDK hook's callback: (callback id, payload, tool_use_id) -> the client's JSON answer.
HookCallback = Callable[[str, dict[str, Any], str | None], Awaitable[dict[str, Any]]]


class HookRunner:
    """The hooks of one session; ``warnings`` lists configuration that was ignored."""

    def __init__(
        self,
        hooks: dict[str, Any],
        cwd: Path,
        session_id: str,
        transcript_path: Path,
        mode: Callable[[], str] | None = None,
        on_output: Callable[[str], None] | None = None,
    ):
        """``on_output(text)``: a hook printed something the user may see (``shown_output``)."""
        self.cwd = Path(cwd)
        self.on_output = on_output
        self.session_id = session_id
        self.transcript_path = Path(transcript_path)
        self.mode = mode
        self.prompt_id: str | None = None  # set per prompt, sent with later events
        self.warnings: list[str] = []
        self.groups: dict[str, list[HookGroup]] = parse_hooks(hooks, self.warnings)
        self.effort: str | None = None  # --effort, sent as {"level": ...}
        self.callback: HookCallback | None = None
        self.on_event: EventSink | None = None
        self._lingering: set[int] = set()  # process groups hooks left running
        # The commands a project configures run in this sandbox (set once the session has one).
        self.sandbox: Sandbox | None = None
        self.sandboxed_commands: set[str] = set()

    def add_callbacks(self, hooks: Any, callback: HookCallback) -> list[str]:
        """The Agent SDK's hooks from ``initialize``, run after the settings' ones; warnings."""
        warnings: list[str] = []
        for event, groups in callback_groups(hooks, warnings).items():
            self.groups.setdefault(event, []).extend(groups)
        self.callback = callback
        return warnings

    def add_plugin_hooks(self, hooks: dict[str, Any], root: Path, plugin: str) -> None:
        """A plugin's hooks (its ``hooks.json`` events), run with the settings' ones and
        ``CLAUDE_PLUGIN_ROOT`` set; what is malformed is warned of, naming the plugin."""
        warnings: list[str] = []
        for event, groups in parse_hooks(hooks, warnings).items():
            for group in groups:
                commands = tuple(replace(c, plugin_root=str(root)) for c in group.commands)
                self.groups.setdefault(event, []).append(replace(group, commands=commands))
        self.warnings += [f"Plugin {plugin}: {warning}" for warning in warnings]

    def has(self, event: str, matcher_value: str | None = None) -> bool:
        return bool(self._matching(event, matcher_value))

    async def run(
        self,
        event: str,
        matcher_value: str | None,
        payload: dict[str, Any],
        timeout_cap: float | None = None,
    ) -> HookOutcome:
        """Run the event's matching hooks; ``timeout_cap`` bounds each one further."""
        hooks = self._matching(event, matcher_value)
        outcome = HookOutcome()
        if not hooks:
            return outcome
        self._lingering = {group for group in self._lingering if group_alive(group)}
        data = self.payload(event, payload)
        stdin = json.dumps(data, ensure_ascii=False, default=str).encode("utf-8")
        env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project_root(self.cwd))}
        name = f"{event}:{matcher_value}" if matcher_value else event

        async def one(hook: HookCommand) -> HookResult:
            hook_id = str(uuid.uuid4())
            self._event(HookStarted(hook_id, name, event))
            if hook.callback is not None:
                result = await self._run_callback(hook, data, timeout_cap)
            else:
                sandbox = self.sandbox if hook.command in self.sandboxed_commands else None
                own_env = (
                    env if hook.plugin_root is None else {**env, PLUGIN_ROOT: hook.plugin_root}
                )
                result, lingering = await _run_command(
                    hook, stdin, self.cwd, own_env, timeout_cap, sandbox
                )
                if lingering is not None:
                    self._lingering.add(lingering)
            self._event(_response(hook_id, name, event, result))
            return result

        for result in await asyncio.gather(*(one(h) for h in hooks)):
            interpret(event, result, outcome)
            if self.on_output is not None and (shown := shown_output(event, result)):
                self.on_output(shown)
        return outcome

    @property
    def lingering(self) -> frozenset[int]:
        """The process groups hooks left running (pruned of ended ones at each run)."""
        return frozenset(self._lingering)

    def kill_lingering(self) -> None:
        """Kill what hooks left running in the background (call when the session ends)."""
        for group in self._lingering:
            kill_group(group)
        self._lingering.clear()

    def _event(self, event: HookStarted | HookResponse) -> None:
        if self.on_event is not None:
            self.on_event(event)

    async def _run_callback(
        self, hook: HookCommand, data: dict[str, Any], cap: float | None
    ) -> HookResult:
        assert hook.callback is not None
        if self.callback is None:
            return HookResult(hook, None, problem="has no client to call back")
        timeout = hook.timeout if cap is None else min(hook.timeout, cap)
        call = self.callback(hook.callback, data, data.get("tool_use_id"))
        try:
            answer = await asyncio.wait_for(call, timeout)
        except Exception as exc:  # no answer in time, or the client answered with an error
            problem = (
                f"got no answer within {timeout:g} s"
                if isinstance(exc, TimeoutError)
                else f"failed in the client: {exc}"
            )
            if hook.block_on_failure:  # onFailure "block": as exit 2, the problem the reason
                return HookResult(hook, 2, stderr=f"The SDK hook {problem}")
            return HookResult(hook, None, problem=problem)
        return HookResult(hook, 0, json.dumps(answer if isinstance(answer, dict) else {}))

    def payload(self, event: str, fields: dict[str, Any]) -> dict[str, Any]:
        """The JSON a hook of ``event`` reads on stdin."""
        data: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript_path),
            "cwd": str(self.cwd),
        }
        if self.prompt_id is not None:
            data["prompt_id"] = self.prompt_id
        if self.mode is not None and event not in _NO_MODE_EVENTS:
            data["permission_mode"] = self.mode()
        if self.effort is not None and event not in _NO_EFFORT_EVENTS:
            data["effort"] = {"level": self.effort}
        data["hook_event_name"] = event
        for key, value in fields.items():
            data.setdefault(key, value)
        return data

    def _matching(self, event: str, matcher_value: str | None) -> list[HookCommand]:
        commands: dict[str, HookCommand] = {}
        for group in self.groups.get(event, []):
            if group.matches(matcher_value):
                for hook in group.commands:
                    commands.setdefault(hook.command, hook)  # the same command runs once
        return list(commands.values())


def _response(hook_id: str, name: str, event: str, result: HookResult) -> HookResponse:
    code = result.exit_code
    outcome: HookEnding = "success" if code == 0 else "cancelled" if code is None else "error"
    output = result.stdout + (f"\n{result.stderr}" if result.stderr else "") or result.problem
    return HookResponse(hook_id, name, event, output, result.stdout, result.stderr, code, outcome)


async def _run_command(
    hook: HookCommand,
    stdin: bytes,
    cwd: Path,
    env: dict[str, str],
    cap: float | None,
    sandbox: Sandbox | None = None,
) -> tuple[HookResult, int | None]:
    """The hook's result, and the process group its background children still run in."""
    timeout = hook.timeout if cap is None else min(hook.timeout, cap)
    try:
        run = await run_shell_command(
            hook.command, stdin, cwd, env, timeout, keep_children=True, keep_bytes=KEEP_BYTES,
            sandbox=sandbox,
        )  # fmt: skip
    except OSError as exc:
        return HookResult(hook, None, problem=f"could not be started: {exc}"), None
    if run.timed_out:
        problem = f"timed out after {timeout:g} s and was stopped"
        return HookResult(hook, None, problem=problem), run.lingering
    out, err = _decode(run.stdout, run.stdout_total), _decode(run.stderr, run.stderr_total)
    return HookResult(hook, run.returncode, out, err), run.lingering


def _decode(data: bytes, total: int) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    if len(text) > MAX_OUTPUT_CHARS or total > len(data):
        text = text[:MAX_OUTPUT_CHARS]
        cut = total - len(text.encode("utf-8", errors="replace"))
        text += f"\n... ({cut:,} more bytes cut)"
    return text
