"""Bash: run a shell command in its own process group, with a working directory that persists.

The output the model sees is capped (head and tail kept, the middle counted);
the full output of a long command is streamed to a file under the session
folder so the model can Read or Grep it. Timeouts and cancellation (Esc) kill
the whole process group, so nothing the command started is left behind.
With a sandbox policy, commands run in the OS sandbox (``tools.sandbox``)
unless a call sets ``dangerouslyDisableSandbox``; starting and supervising the
process is ``tools.bash_process``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from tools.base import (
    CURRENT_TOOL_USE,
    StrPath,
    Tool,
    ToolContext,
    ToolParams,
    ToolResult,
    one_line,
)
from tools.bash_background import (
    DEFAULT_BACKGROUND_TIMEOUT_MS,
    MAX_BACKGROUND_TIMEOUT_MS,
    start_background,
)
from tools.bash_output import CapturedOutput, OutputCapture
from tools.bash_process import Outcome, run_command, signal_group
from tools.jobs import Job, JobRegistry
from tools.process_guard import process_guard
from tools.sandbox import Launch, Sandbox, SandboxPolicy, protected_note
from tools.sandbox.protect import Snapshot
from tools.sandbox.sandbox import unsandboxed

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
LABEL_CHARS = 80  # a command's first line is cut here in its label

_QUIET_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "CCX": "1",
}


class BashParams(ToolParams):
    command: str = Field(description="The shell command to run.")
    timeout: int | None = Field(
        default=None,
        ge=1,
        description=(
            f"Timeout in milliseconds (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}; "
            "larger values are lowered to the max). With run_in_background: how long the "
            f"command may run (default {DEFAULT_BACKGROUND_TIMEOUT_MS}, "
            f"max {MAX_BACKGROUND_TIMEOUT_MS})."
        ),
    )
    description: str | None = Field(
        default=None,
        description='What the command does in 5-10 words, shown to the user, e.g. "Run the tests"',
    )
    run_in_background: bool | None = Field(
        default=None,
        description=(
            "Run as a background job: returns at once with the job's id and output file; "
            "you are told when it ends."
        ),
    )
    dangerouslyDisableSandbox: bool | None = Field(  # Claude Code's name
        default=None,
        description=(
            "Run outside the OS sandbox: only when the user asked, or the sandbox just refused "
            "a write or connection the command needs. The user approves each such call."
        ),
    )


CommandEnv = Callable[[str, Path], dict[str, str]]


class BashTool(Tool[BashParams]):
    name: ClassVar[str] = "Bash"
    is_mutating: ClassVar[bool] = True

    def __init__(
        self,
        shell: str | None = None,
        env: dict[str, str] | None = None,
        sandbox: SandboxPolicy | None = None,
        command_env: CommandEnv | None = None,
        jobs: JobRegistry | None = None,
    ) -> None:
        """``command_env(command, cwd)``: variables for one command on top of ``env`` (the
        session uses it to run read-only git with the repository's commands turned off);
        ``jobs``: where background commands are registered (none: they cannot be started)."""
        self.shell = shell or ("/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh")
        self.extra_env = dict(env or {})
        self.command_env = command_env
        self.sandbox = Sandbox(sandbox) if sandbox is not None and sandbox.enabled else None
        if self.sandbox is not None:
            self.sandbox.warm_up()
        self.jobs = jobs
        self.cwd: Path | None = None  # persists between calls, like a real shell
        self._lingering_groups: dict[int, str] = {}  # process group -> the command that left it

    def label(self, params: BashParams, cwd: StrPath | None = None) -> str:
        """The command itself (its first line): what runs is what the user must see; the
        model's description is shown beside it where there is room."""
        command = params.command.strip()
        if not command and params.description and params.description.strip():
            return one_line(params.description.strip())
        return one_line(command, LABEL_CHARS)

    async def run(self, params: BashParams, ctx: ToolContext) -> ToolResult:
        notes: list[str] = []
        background = bool(params.run_in_background)
        if background and self.jobs is None:
            return ToolResult.error("Background commands are not available in this session.")
        timeout_ms = _timeout(params.timeout, background, notes)
        cwd = self._start_dir(ctx, notes)
        self.background_tasks()  # forget ended groups: the guardian must not kill a reused id
        sandbox = None if params.dangerouslyDisableSandbox else self.sandbox
        try:
            launch = sandbox.launch(cwd) if sandbox is not None else unsandboxed()
        except OSError as exc:
            return ToolResult.error(_sandbox_failed(exc))
        # Recorded before anything starts, so that nothing the command does escapes the check.
        snapshot = sandbox.record() if sandbox is not None and launch.backend else None
        if background:
            return await self._start_job(params, ctx, cwd, launch, timeout_ms, notes, snapshot)
        spill = None
        if ctx.session_dir is not None:
            spill = Path(ctx.session_dir) / "tool-outputs" / f"{uuid.uuid4()}.txt"
        capture = OutputCapture(spill)
        fd, cwd_file = tempfile.mkstemp(prefix="ccx-cwd-", suffix=".txt")
        os.close(fd)
        process_guard().remove_at_end(cwd_file)  # a ccx killed meanwhile leaves none behind
        started = time.monotonic()
        watcher = _watch_lines(ctx, capture)
        try:
            try:
                outcome = await self._execute(
                    params.command, cwd, cwd_file, capture, timeout_ms, launch
                )
            except OSError as exc:
                return ToolResult.error(f"Could not start {self.shell}: {exc}")
            except subprocess.SubprocessError as exc:  # the sandbox failed in the child
                return ToolResult.error(_sandbox_failed(exc))
            self.cwd = self._learn_cwd(cwd_file, cwd, ctx, notes)
        finally:
            if watcher is not None:
                watcher.cancel()
            launch.close()
            capture.close()
            with contextlib.suppress(OSError):
                os.unlink(cwd_file)
            process_guard().forget(cwd_file)
            if snapshot is not None and sandbox is not None:
                notes += undo_protected_changes(sandbox, snapshot, ctx.session_dir)
        if outcome.lingering:
            self._lingering_groups[outcome.pgid] = params.command
            notes.append(
                "Background processes the command started are still running and hold its output "
                "open; their later output is not captured (redirect it to a file to keep it)."
            )
        captured = capture.finish()
        failed = outcome.timed_out or outcome.returncode not in (0, None)
        if sandbox is not None and launch.backend:
            notes += filter(None, [sandbox.refusal_note(captured.head + captured.tail, failed)])
        result = self._result(
            params.command, captured, outcome, notes, timeout_ms, time.monotonic() - started
        )
        result.meta["sandbox"] = launch.backend
        return result

    async def _start_job(
        self,
        params: BashParams,
        ctx: ToolContext,
        cwd: Path,
        launch: Launch,
        timeout_ms: int,
        notes: list[str],
        snapshot: Snapshot | None,
    ) -> ToolResult:
        """Start the command as a background job; the result names its id and output file.

        A sandboxed job is contained (what it leaves running ends with it) and its
        changes to protected paths are undone when it ends, recorded before it started.
        """
        description = (params.description or "").strip() or one_line(params.command, LABEL_CHARS)
        job = await self._launch(
            params.command, description, ctx, cwd, launch, timeout_ms, snapshot
        )
        if isinstance(job, ToolResult):
            return job
        output = (
            f"Command running in the background as job {job.id}; its output is written to "
            f"{job.output_path}. You will be told when it ends. Read new output with TaskOutput "
            "(or Read the file); stop it with TaskStop."
        )
        display = f"Running in the background as {job.id}"
        meta = {"command": params.command, "job_id": job.id, "background": True,
                "output_path": str(job.output_path), "sandbox": launch.backend}  # fmt: skip
        return ToolResult("\n".join([output, *notes]), display=display, meta=meta)

    async def start_monitor(
        self,
        command: str,
        description: str,
        ctx: ToolContext,
        timeout_ms: int,
        on_stdout: Callable[[bytes], None],
    ) -> Job | ToolResult:
        """Monitor's command: a background job (kind monitor) in this shell's folder, sandbox
        and environment, its stdout also given to ``on_stdout``; an error result when it
        cannot start."""
        if self.jobs is None:
            return ToolResult.error("Background commands are not available in this session.")
        cwd = self._start_dir(ctx, [])
        sandbox = self.sandbox
        try:
            launch = sandbox.launch(cwd) if sandbox is not None else unsandboxed()
        except OSError as exc:
            return ToolResult.error(_sandbox_failed(exc))
        snapshot = sandbox.record() if sandbox is not None and launch.backend else None
        return await self._launch(
            command, description, ctx, cwd, launch, timeout_ms, snapshot, on_stdout
        )

    async def _launch(
        self,
        command: str,
        description: str,
        ctx: ToolContext,
        cwd: Path,
        launch: Launch,
        timeout_ms: int,
        snapshot: Snapshot | None,
        on_stdout: Callable[[bytes], None] | None = None,
    ) -> Job | ToolResult:
        """Start ``command`` as a background job; an error result when it cannot start."""
        assert self.jobs is not None
        env = await self._env(command, cwd, launch)
        argv = [*launch.prefix, self.shell, "-c", command]
        sandbox, session_dir = self.sandbox, ctx.session_dir

        def check_protected() -> list[str]:
            if snapshot is None or sandbox is None:
                return []
            return undo_protected_changes(sandbox, snapshot, session_dir)

        try:
            return await start_background(
                self.jobs, description, argv, cwd, env, timeout_ms,
                preexec=launch.preexec, on_end=self._job_ended, pass_fds=launch.pass_fds,
                contain=launch.backend is not None, on_exit=check_protected,
                on_stdout=on_stdout, kind="bash" if on_stdout is None else "monitor",
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            if snapshot is not None and sandbox is not None:
                sandbox.release(snapshot)  # nothing started: nothing to check
            if isinstance(exc, OSError):
                return ToolResult.error(f"Could not start {self.shell}: {exc}")
            return ToolResult.error(_sandbox_failed(exc))
        finally:
            launch.close()

    def _job_ended(self, job: Job, lingering_group: int | None) -> None:
        """Processes a job started that outlive it are killed with the session, like those a
        foreground command leaves, and are named after a compaction."""
        if lingering_group is not None:
            self._lingering_groups[lingering_group] = job.description

    def kill_background(self) -> None:
        """Kill process groups left running by earlier commands (call on shutdown)."""
        for pgid in self._lingering_groups:
            signal_group(pgid, signal.SIGKILL)
            process_guard().unregister(pgid)
        self._lingering_groups.clear()

    def background_tasks(self) -> list[str]:
        """Process groups that earlier commands left running, still alive."""
        alive = {}
        for pgid, cmd in self._lingering_groups.items():
            if signal_group(pgid, 0):
                alive[pgid] = cmd
            else:
                process_guard().unregister(pgid)
        self._lingering_groups = alive
        return [f"process group {pgid}, started by `{cmd[:200]}`" for pgid, cmd in alive.items()]

    def _start_dir(self, ctx: ToolContext, notes: list[str]) -> Path:
        if self.cwd is None:
            self.cwd = Path(ctx.cwd)
        elif not self.cwd.is_dir():
            notes.append(_cwd_gone(self.cwd, ctx.cwd))
            self.cwd = Path(ctx.cwd)
        return self.cwd

    def _learn_cwd(self, cwd_file: str, previous: Path, ctx: ToolContext, notes: list[str]) -> Path:
        try:
            reported = Path(cwd_file).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            reported = ""
        if reported and os.path.isdir(reported):
            return Path(reported)
        if not reported and previous.is_dir():
            return previous  # the EXIT trap did not run (killed, or the command replaced it)
        notes.append(_cwd_gone(reported or previous, ctx.cwd))
        return Path(ctx.cwd)

    async def _execute(
        self,
        command: str,
        cwd: Path,
        cwd_file: str,
        capture: OutputCapture,
        timeout_ms: int,
        launch: Launch,
    ) -> Outcome:
        # The trap records where the command left the shell, keeping its exit status;
        # it shares line 1 with the command so bash's error line numbers stay right.
        script = f"trap 'pwd -P >| {shlex.quote(cwd_file)} 2>/dev/null' EXIT; {command}"
        env = await self._env(command, cwd, launch)
        argv = [*launch.prefix, self.shell, "-c", script]
        return await run_command(
            argv, cwd, env, capture, timeout_ms, launch.preexec, launch.pass_fds,
            contain=launch.backend is not None,
        )  # fmt: skip

    async def _env(self, command: str, cwd: Path, launch: Launch) -> dict[str, str]:
        env = {**os.environ, **_QUIET_ENV, **self.extra_env}
        if self.command_env is not None:
            env.update(await asyncio.to_thread(self.command_env, command, cwd))
        env.setdefault("TERM", "dumb")
        if launch.backend is not None and self.sandbox is not None:
            env = self.sandbox.environment(env)
        return env

    def _result(
        self,
        command: str,
        captured: CapturedOutput,
        outcome: Outcome,
        notes: list[str],
        timeout_ms: int,
        duration: float,
    ) -> ToolResult:
        body = captured.render() or "(no output)"
        sections = [body]
        if captured.full_output_path is not None:
            sections.append(
                f"[The full output ({captured.total_lines} lines) is saved in "
                f"{captured.full_output_path}; use Read with offset/limit or Grep on it "
                "to see the part that was cut.]"
            )
        sections.extend(notes)
        status = _status_line(outcome, timeout_ms)
        if status:
            sections.append(status)
        output = "\n".join(sections)
        # The user's copy of the whole output (the front ends show its tail and expand to it).
        display = "\n".join(filter(None, [captured.render_for_display() or "(no output)", status]))
        full_path = captured.full_output_path
        meta = {
            "command": command,
            "exit_code": outcome.returncode,
            "timed_out": outcome.timed_out,
            "timeout_ms": timeout_ms,
            "duration_s": round(duration, 3),
            "cut": captured.cut,
            "full_output_path": str(full_path) if full_path else None,
            "cwd": str(self.cwd),
        }
        return ToolResult(output=output, display=display, is_error=bool(status), meta=meta)


def _timeout(asked: int | None, background: bool, notes: list[str]) -> int:
    """The timeout to use, in ms: the default when none was asked, lowered to the maximum."""
    default, most = DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS
    if background:
        default, most = DEFAULT_BACKGROUND_TIMEOUT_MS, MAX_BACKGROUND_TIMEOUT_MS
    timeout_ms = asked or default
    if timeout_ms > most:
        notes.append(f"The timeout {timeout_ms} ms is above the maximum; used {most} ms.")
        timeout_ms = most
    return timeout_ms


def _sandbox_failed(exc: BaseException) -> str:
    return (
        f"ccx's sandbox could not be set up for this command ({exc}); it did not run. Retry "
        "with `dangerouslyDisableSandbox: true` to run it unsandboxed (the user is asked)."
    )


def undo_protected_changes(
    sandbox: Sandbox, snapshot: Snapshot, session_dir: StrPath | None
) -> list[str]:
    """Put the protected paths back as ``snapshot`` found them; the note for the model."""
    if session_dir is not None:
        save_dir = Path(session_dir) / "sandbox-reverted"
    else:
        save_dir = Path(tempfile.gettempdir()) / f"ccx-sandbox-reverted-{os.getuid()}"
    repairs = sandbox.restore(snapshot, save_dir)
    return [protected_note(repairs)] if repairs else []


def _cwd_gone(gone: str | Path, back_in: Path) -> str:
    return f"The working directory {gone} no longer exists; the shell is back in {back_in}."


def _status_line(outcome: Outcome, timeout_ms: int) -> str:
    if outcome.timed_out:
        return f"Command timed out after {timeout_ms / 1000:g} s"
    code = outcome.returncode
    if code is None or code == 0:
        return ""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"Exit code {128 - code} (killed by {name})"
    return f"Exit code {code}"


LINES_REPORT_S = 0.5


def _watch_lines(ctx: ToolContext, capture: OutputCapture) -> asyncio.Task[None] | None:
    """While the command runs, tell the user how many lines it has printed (as they change)."""
    report, tool_use_id = ctx.on_output_lines, CURRENT_TOOL_USE.get()
    if report is None or tool_use_id is None:
        return None

    async def watch() -> None:
        shown = 0
        while True:
            await asyncio.sleep(LINES_REPORT_S)
            if capture.total_newlines != shown:
                shown = capture.total_newlines
                report(tool_use_id, shown)

    return asyncio.get_running_loop().create_task(watch())
