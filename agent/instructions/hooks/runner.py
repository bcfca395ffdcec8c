"""Running one event's hooks: the payload on stdin, each command in its own process group.

Every command of every group whose matcher fits runs at once through ``/bin/sh -c``,
with the event as JSON on stdin (Claude Code's fields: session_id, transcript_path, cwd,
hook_event_name, permission_mode, prompt_id, and the event's own) and
``CLAUDE_PROJECT_DIR`` in its environment, killed with its children at its timeout. A
broken hook is reported in the outcome's messages, never raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.instructions.hooks.config import HookCommand, HookGroup, parse_hooks
from agent.instructions.hooks.outcome import (
    MAX_OUTPUT_CHARS,
    HookOutcome,
    HookResult,
    interpret,
    shown_output,
)
from agent.permissions.settings import project_root

# Claude Code sends no permission mode before the session has one, nor at its end.
_NO_MODE_EVENTS = frozenset({"SessionStart", "SessionEnd"})


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
        stdin = json.dumps(self.payload(event, payload), ensure_ascii=False, default=str)
        env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project_root(self.cwd))}
        results = await asyncio.gather(
            *(_run_command(h, stdin.encode("utf-8"), self.cwd, env, timeout_cap) for h in hooks)
        )
        for result in results:
            interpret(event, result, outcome)
            if self.on_output is not None and (shown := shown_output(event, result)):
                self.on_output(shown)
        return outcome

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


async def _run_command(
    hook: HookCommand, stdin: bytes, cwd: Path, env: dict[str, str], cap: float | None
) -> HookResult:
    timeout = hook.timeout if cap is None else min(hook.timeout, cap)
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
        return HookResult(hook, None, problem=f"could not be started: {exc}")
    try:
        out, err = await asyncio.wait_for(process.communicate(stdin), timeout)
    except TimeoutError:
        await _kill(process)
        return HookResult(hook, None, problem=f"timed out after {timeout:g} s and was stopped")
    finally:
        if process.returncode is None:  # cancelled: nothing may outlive the caller
            await _kill(process)
    return HookResult(hook, process.returncode, _decode(out), _decode(err))


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
