"""The ``statusLine`` setting: a command whose first line of output the front ends show.

``{"statusLine": {"type": "command", "command": "~/.claude/statusline.sh", "padding": 0}}``,
Claude Code's schema. The command gets Claude Code's JSON payload on stdin
(``status_payload``: session, model, workspace, version, output style, cost,
context window) and runs through ``/bin/sh`` in the session's folder, in its
own process group, as hooks run (``agent.instructions.hooks.process``). Its
first line of stdout is the status text (ANSI colours kept for the front end
to draw); a command that fails, prints nothing or outlives ``TIMEOUT_S`` shows
nothing. It is done when it exits: anything it left in the background is
killed then, so a child holding its stdout delays nothing. Refreshes are asked for after every turn,
compaction and change of mode; they run one at a time, at most every
``MIN_INTERVAL_S``, and a request during a run is served once it ends with the
newest payload, so the UI never waits for the command.

A project's ``statusLine`` is a command the repository ships: like its hooks,
it applies only once the folder is trusted (agent.permissions.settings keeps
it out of an untrusted project's settings; agent.permissions.trust names it in
the question).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.instructions.hooks.process import run_shell_command
from agent.permissions.settings import Settings, project_root
from tools.sandbox import Sandbox
from tui.session.views import StatusSnapshot

log = logging.getLogger(__name__)

TIMEOUT_S = 5.0
MIN_INTERVAL_S = 0.3
MAX_TEXT_CHARS = 500


@dataclass(frozen=True)
class StatusLineConfig:
    command: str
    padding: int = 0


def status_line_config(value: Any) -> tuple[StatusLineConfig | None, str | None]:
    """The setting as written -> (config, None), (None, why it is ignored), or (None, None)."""
    if value is None:
        return None, None
    if not isinstance(value, dict) or value.get("type", "command") != "command":
        return None, 'statusLine must be {"type": "command", "command": "..."}; ignored'
    command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        return None, "statusLine has no command; ignored"
    padding = value.get("padding", 0)
    padding = padding if isinstance(padding, int) and 0 <= padding <= 20 else 0
    return StatusLineConfig(command.strip(), padding), None


def first_line(output: bytes) -> str:
    """The first non-empty line of what the command printed, at most ``MAX_TEXT_CHARS``."""
    text = output.decode("utf-8", errors="replace")
    line = next((part for part in text.splitlines() if part.strip()), "")
    return line.rstrip()[:MAX_TEXT_CHARS]


async def run_status_command(
    config: StatusLineConfig,
    payload: dict[str, Any],
    cwd: Path,
    timeout: float = TIMEOUT_S,
    sandbox: Sandbox | None = None,
) -> str | None:
    """The command's first line; None when it failed, printed nothing or timed out. It is
    done when it exits: what it left in the background is killed then, never waited for."""
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project_root(cwd))}
    try:
        run = await run_shell_command(
            config.command,
            json.dumps(payload).encode(),
            cwd,
            env,
            timeout,
            keep_children=False,
            keep_bytes=MAX_TEXT_CHARS * 64,
            sandbox=sandbox,
        )
    except OSError:
        return None
    if run.returncode != 0:  # failed, or killed at the timeout
        return None
    return first_line(run.stdout) or None


@dataclass(frozen=True)
class StatusLineFacts:
    """What the payload tells the command about the session, as of one moment."""

    status: StatusSnapshot
    session_id: str
    transcript_path: Path
    cwd: Path
    current_dir: Path  # where the shell is now
    output_style: str
    api_seconds: float


def status_payload(facts: StatusLineFacts, started: float) -> dict[str, Any]:
    """Claude Code's status line payload, with what ccx knows of the session."""
    from agent import __version__

    status = facts.status
    payload: dict[str, Any] = {
        "hook_event_name": "Status",
        "session_id": facts.session_id,
        "transcript_path": str(facts.transcript_path),
        "cwd": str(facts.cwd),
        "model": {"id": status.model, "display_name": display_name(status.model)},
        "workspace": {
            "current_dir": str(facts.current_dir),
            "project_dir": str(project_root(facts.cwd)),
        },
        "version": __version__,
        "output_style": {"name": facts.output_style},
        "permission_mode": status.mode,
        "cost": {
            "total_cost_usd": round(status.cost_usd, 6),
            "total_duration_ms": round((time.monotonic() - started) * 1000),
            "total_api_duration_ms": round(facts.api_seconds * 1000),
        },
    }
    context = status.context
    if context is not None:
        payload["exceeds_200k_tokens"] = context.used > 200_000
        payload["context_window"] = {
            "context_window_size": context.window,
            "used_tokens": context.used,
            "used_percentage": round(context.percent_used, 1),
            "remaining_percentage": round(max(0.0, 100 - context.percent_used), 1),
        }
    return payload


def display_name(model: str) -> str:
    """``claude-sonnet-4-5`` -> ``Sonnet 4.5``; an unknown name as it is."""
    words = model.removeprefix("claude-").split("-")
    if not words or not words[0].isalpha():
        return model
    numbers = [w for w in words[1:] if w.isdigit() and len(w) < 3]
    return " ".join([words[0].capitalize(), ".".join(numbers)]).strip()


class StatusLineRunner:
    """Refreshes the status text in the background: one run at a time, throttled."""

    def __init__(
        self,
        config: StatusLineConfig,
        payload: Callable[[], dict[str, Any]],
        cwd: Path,
        sandbox: Sandbox | None = None,
    ) -> None:
        """``sandbox``: where a project's command runs (the user's own runs as written)."""
        self.config = config
        self.payload = payload
        self.cwd = cwd
        self.sandbox = sandbox
        self.text: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._last_start = 0.0

    def refresh(self, on_text: Callable[[str | None], None]) -> None:
        """Ask for a fresh text (call on the session's loop); ``on_text`` gets it when it
        changes. Never waits for the command."""
        if self._task is not None and not self._task.done():
            self._again = True
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the session's loop: skip this refresh, never fail
            log.warning("a statusLine refresh was asked for outside the session's loop")
            return
        self._task = loop.create_task(self._run(on_text))

    async def _run(self, on_text: Callable[[str | None], None]) -> None:
        while True:
            self._again = False
            wait = self._last_start + MIN_INTERVAL_S - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._last_start = time.monotonic()
            try:
                text = await run_status_command(
                    self.config, self.payload(), self.cwd, sandbox=self.sandbox
                )
            except Exception:  # a status line must never take the session down
                log.exception("the statusLine command failed")
                text = None
            if text != self.text:
                self.text = text
                on_text(text)
            if not self._again:
                return

    async def aclose(self) -> None:
        """Stop a run in flight (its command killed) and wait for it to end."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def build_status_line(
    settings: Settings,
    cwd: Path,
    facts: Callable[[], StatusLineFacts],
    notice: Callable[[str], None],
    project_sandbox: Sandbox | None = None,
) -> StatusLineRunner | None:
    """The session's runner, or None without a (valid) ``statusLine`` setting; ``notice``
    says why a setting is ignored. A project's command runs in ``project_sandbox``;
    ``disableAllHooks`` turns the status line off too (its command is a hook's kin)."""
    if settings.hooks_disabled_by is not None:
        return None
    config, problem = status_line_config(settings.get("statusLine"))
    if problem is not None:
        notice(problem)
    if config is None:
        return None
    started = time.monotonic()
    sandbox = project_sandbox if settings.from_project("statusLine") else None
    return StatusLineRunner(config, lambda: status_payload(facts(), started), cwd, sandbox)
