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
import re
import shlex
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, ClassVar

from pydantic import Field

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
from tools.bash_process import Outcome, run_command, signal_group
from tools.process_guard import process_guard
from tools.sandbox import Launch, Sandbox, SandboxPolicy, protected_note
from tools.sandbox.protect import Snapshot

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
LABEL_CHARS = 80  # a command's first line is cut here in its label
DISPLAY_LINES = 5

_QUIET_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "CCX": "1",
}


MAX_OUTPUT_CHARS = 30_000
_HALF = MAX_OUTPUT_CHARS // 2
# A UTF-8 character is at most 4 bytes: this many bytes always decode to >= _HALF characters.
_KEEP_BYTES = 4 * _HALF
_SNAP_CHARS = 2_000  # how far a cut may move to land on a line boundary
_UTF8_CONTINUATION = bytes(range(0x80, 0xC0))
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


@dataclass
class CapturedOutput:
    head: str  # the whole output when nothing was cut
    tail: str = ""
    cut: bool = False
    chars_cut: int = 0
    lines_cut: int = 0
    total_lines: int = 0
    full_output_path: Path | None = None

    def render(self) -> str:
        if not self.cut:
            return self.head.rstrip()
        lines = f" in {self.lines_cut} lines" if self.lines_cut else ""
        note = f"... [{self.chars_cut} characters{lines} cut] ..."
        return f"{self.head.rstrip()}\n\n{note}\n\n{self.tail.rstrip()}"


class OutputCapture:
    """Streams output into a bounded head and tail; the middle is only counted.

    Once the output is too large to keep, everything is also written to
    ``spill_path`` as it arrives, so the model can read the part that was cut.
    """

    def __init__(self, spill_path: Path | None) -> None:
        self.spill_path = spill_path
        self.head = bytearray()
        self.tail = bytearray()
        self.total_chars = 0  # approximate for invalid UTF-8
        self.total_newlines = 0
        self.dropped = False  # bytes between head and tail were discarded
        self._spill: BinaryIO | None = None

    def feed(self, chunk: bytes) -> None:
        self.total_chars += len(chunk.translate(None, _UTF8_CONTINUATION))
        self.total_newlines += chunk.count(b"\n")
        if self._spill is not None:
            self._write_spill(chunk)
        room = _KEEP_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        if len(self.tail) > _KEEP_BYTES:
            if not self.dropped:
                self._open_spill()  # head + tail still hold everything so far
            del self.tail[: len(self.tail) - _KEEP_BYTES]
            self.dropped = True

    def finish(self) -> CapturedOutput:
        """Close the spill file and build what the model sees."""
        if self.dropped:
            head = _clean(_decode(self.head))[:_HALF]
            tail = _clean(_decode(self.tail))[-_HALF:]
            chars, newlines = self.total_chars, self.total_newlines
        else:
            text = _clean(_decode(self.head + self.tail))
            if len(text) <= MAX_OUTPUT_CHARS:
                self.close()
                self._discard_spill()
                return CapturedOutput(text, total_lines=text.count("\n") + 1)
            self._open_spill()
            head, tail = text[:_HALF], text[-_HALF:]
            chars, newlines = len(text), text.count("\n")
        self.close()
        head, tail = _snap(head, tail)
        return CapturedOutput(
            head,
            tail,
            cut=True,
            chars_cut=max(0, chars - len(head) - len(tail)),
            lines_cut=max(0, newlines - head.count("\n") - tail.count("\n")),
            total_lines=newlines + 1,
            full_output_path=self.spill_path,
        )

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def _open_spill(self) -> None:
        if self.spill_path is None or self._spill is not None:
            return
        try:
            self.spill_path.parent.mkdir(parents=True, exist_ok=True)
            self._spill = self.spill_path.open("wb")
        except OSError:
            self.spill_path = None
            return
        self._write_spill(self.head + self.tail)

    def _write_spill(self, data: bytes | bytearray) -> None:
        assert self._spill is not None
        try:
            self._spill.write(data)
        except OSError:  # disk full: keep going without the full copy
            self.close()
            self._discard_spill()

    def _discard_spill(self) -> None:
        if self.spill_path is not None:
            with contextlib.suppress(OSError):
                self.spill_path.unlink(missing_ok=True)
        self.spill_path = None


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def _clean(text: str) -> str:
    """Drop terminal colour codes and progress lines overwritten with carriage returns."""
    if "\x1b" in text:
        text = _ANSI_ESCAPE.sub("", text)
    if "\r" in text:
        lines = text.replace("\r\n", "\n").split("\n")
        text = "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines)
    return text


def _snap(head: str, tail: str) -> tuple[str, str]:
    """Move the cut points to line boundaries when one is near."""
    end = head.rfind("\n", max(0, len(head) - _SNAP_CHARS))
    if end > 0:
        head = head[: end + 1]
    start = tail.find("\n", 0, _SNAP_CHARS)
    if 0 <= start < len(tail) - 1:
        tail = tail[start + 1 :]
    return head, tail


class BashParams(ToolParams):
    command: str = Field(description="The shell command to run.")
    timeout: int | None = Field(
        default=None,
        ge=1,
        description=(
            f"Timeout in milliseconds (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}; "
            "larger values are lowered to the max)."
        ),
    )
    description: str | None = Field(
        default=None,
        description="A short (5-10 words) description of what the command does, shown to the user.",
    )
    dangerouslyDisableSandbox: bool | None = Field(  # Claude Code's name
        default=None,
        description=(
            "Run this command outside the OS sandbox. Set it only when the user asked for it, "
            "or when the command just failed because the sandbox refused a write or a network "
            "connection it needs; the user is asked to approve every such call."
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
    ) -> None:
        """``command_env(command, cwd)``: variables for one command on top of ``env`` (the
        session uses it to run read-only git with the repository's commands turned off)."""
        self.shell = shell or ("/bin/bash" if os.access("/bin/bash", os.X_OK) else "/bin/sh")
        self.extra_env = dict(env or {})
        self.command_env = command_env
        self.sandbox = Sandbox(sandbox) if sandbox is not None and sandbox.enabled else None
        if self.sandbox is not None:
            self.sandbox.warm_up()
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
        timeout_ms = params.timeout or DEFAULT_TIMEOUT_MS
        if timeout_ms > MAX_TIMEOUT_MS:
            notes.append(
                f"The timeout {timeout_ms} ms is above the maximum; used {MAX_TIMEOUT_MS} ms."
            )
            timeout_ms = MAX_TIMEOUT_MS
        cwd = self._start_dir(ctx, notes)
        self.background_tasks()  # forget ended groups: the guardian must not kill a reused id
        sandbox = None if params.dangerouslyDisableSandbox else self.sandbox
        try:
            launch = sandbox.launch(cwd) if sandbox is not None else Launch([], None, None)
        except OSError as exc:
            return ToolResult.error(_sandbox_failed(exc))
        spill = None
        if ctx.session_dir is not None:
            spill = Path(ctx.session_dir) / "tool-outputs" / f"{uuid.uuid4()}.txt"
        capture = OutputCapture(spill)
        fd, cwd_file = tempfile.mkstemp(prefix="ccx-cwd-", suffix=".txt")
        os.close(fd)
        snapshot = sandbox.record() if sandbox is not None and launch.backend else None
        started = time.monotonic()
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
            capture.close()
            with contextlib.suppress(OSError):
                os.unlink(cwd_file)
            if snapshot is not None and sandbox is not None:
                notes += _undo_protected_changes(sandbox, snapshot, ctx)
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
        env = {**os.environ, **_QUIET_ENV, **self.extra_env}
        if self.command_env is not None:
            env.update(await asyncio.to_thread(self.command_env, command, cwd))
        env.setdefault("TERM", "dumb")
        argv = [*launch.prefix, self.shell, "-c", script]
        return await run_command(argv, cwd, env, capture, timeout_ms, launch.preexec)

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
        display_lines = body.splitlines()[-DISPLAY_LINES:]
        if status:
            display_lines.append(status)
        display = "\n".join(display_lines)
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
            "display": display,
        }
        return ToolResult(output=output, display=display, is_error=bool(status), meta=meta)


def _sandbox_failed(exc: BaseException) -> str:
    return (
        f"ccx's sandbox could not be set up for this command ({exc}); it did not run. Retry "
        "with `dangerouslyDisableSandbox: true` to run it unsandboxed (the user is asked)."
    )


def _undo_protected_changes(sandbox: Sandbox, snapshot: Snapshot, ctx: ToolContext) -> list[str]:
    if ctx.session_dir is not None:
        save_dir = Path(ctx.session_dir) / "sandbox-reverted"
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
