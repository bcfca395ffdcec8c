"""A Bash command run in the background: started at once, supervised by a task, ended as a job.

The command gets its own process group, registered with the process guard
(from inside the child, before exec) so it dies with ccx however ccx ends.
Its merged stdout/stderr are written to the job's output file as they arrive,
up to a size cap (the rest is counted and dropped; the pipe keeps draining so
the command never blocks). When the shell exits, the job is finished in the
registry with its exit code; a timeout or ``TaskStop`` kills the whole group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from tools.bash_process import (
    DRAIN_S,
    KILL_GRACE_S,
    end_group,
    kill_group,
    run_process,
    signal_group,
    wait_gone,
)
from tools.jobs import Job, JobKind, JobRegistry, JobStatus
from tools.process_guard import process_guard

DEFAULT_BACKGROUND_TIMEOUT_MS = 600_000
MAX_BACKGROUND_TIMEOUT_MS = 7_200_000
MAX_OUTPUT_BYTES = 32 * 1024 * 1024
TIMED_OUT = "timed out"  # how a job's error begins when its time ran out


class CappedFile:
    """The job's output file, written as output arrives, up to ``limit`` bytes."""

    def __init__(self, path: Path, limit: int, on_line: Callable[[str], None]) -> None:
        self.path = path
        self.limit = limit
        self.written = 0
        self.dropped = 0
        self.on_line = on_line
        self.on_chunk: Callable[[bytes], None] | None = None  # sees every chunk (a monitor)
        self.last_line = ""
        # Appending: a monitor's stderr is written to the same file by the command itself.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o666)
        self._file: BinaryIO | None = os.fdopen(fd, "wb")

    def feed(self, chunk: bytes) -> None:
        if self.on_chunk is not None:
            self.on_chunk(chunk)
        if self._file is not None:
            room = self.limit - self.written
            part = chunk[: max(0, room)]
            self.dropped += len(chunk) - len(part)
            try:
                self._file.write(part)
                self._file.flush()
            except OSError:  # disk full: keep draining, stop writing
                self.close()
            self.written += len(part)
        line = _last_line(chunk)
        if line:
            self.last_line = line
            self.on_line(line)

    def close(self) -> None:
        if self._file is None:
            return
        with contextlib.suppress(OSError):
            if self.dropped:
                note = (
                    f"\n[ccx: output capped at {self.limit} bytes; {self.dropped} more dropped]\n"
                )
                self._file.write(note.encode())
            self._file.close()
        self._file = None


async def start_background(
    registry: JobRegistry,
    description: str,
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    timeout_ms: int,
    *,
    preexec: Callable[[], None] | None = None,
    tool_use_id: str | None = None,
    on_end: Callable[[Job, int | None], None] | None = None,
    pass_fds: Sequence[int] = (),
    contain: bool = False,
    on_exit: Callable[[], list[str]] | None = None,
    on_stdout: Callable[[bytes], None] | None = None,
    kind: JobKind = "bash",
) -> Job:
    """Start ``argv`` as a background job and return it, running.

    ``on_end(job, group)`` runs when it has ended; ``group`` is the process group when
    processes the command started still hold its output open (else None). ``contain``:
    when the shell exits, what it left running is killed. ``on_exit()`` runs once none of
    the command runs any more, before the job is finished; the lines it returns are
    appended to the job's output. ``on_stdout(chunk)``: the command's stdout as it comes
    (its stderr then goes to the output file alone, as a monitor wants). Raises OSError when
    the program cannot be started, SubprocessError when ``preexec`` failed in the child.
    """
    job_id = registry.new_id(kind)
    path = registry.output_path(job_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    limit = int(os.environ.get("CCX_JOB_OUTPUT_MAX_BYTES", "") or MAX_OUTPUT_BYTES)
    sink = CappedFile(path, limit, lambda line: registry.report_progress(job_id, line))
    sink.on_chunk = on_stdout
    stderr = os.open(path, os.O_WRONLY | os.O_APPEND) if on_stdout is not None else None
    try:
        proc, closed, transport = await run_process(argv, cwd, env, sink, preexec, pass_fds, stderr)
    except BaseException:
        sink.close()
        raise
    finally:
        if stderr is not None:
            os.close(stderr)
    command = _BackgroundCommand(registry, job_id, proc, closed, transport, sink, on_end)
    command.contain, command.on_exit = contain, on_exit
    job = registry.start(
        kind, description, job_id=job_id, output_path=path, stop=command.stop,
        kill=command.kill, tool_use_id=tool_use_id, cwd=cwd,
    )  # fmt: skip
    command.job = job
    if sink.last_line:  # output that arrived before the job was registered
        registry.report_progress(job_id, sink.last_line)
    command.task = asyncio.create_task(command.supervise(timeout_ms), name=f"ccx-job-{job_id}")
    return job


class _BackgroundCommand:
    """One running background command: its process group, output pipe and supervising task."""

    def __init__(
        self,
        registry: JobRegistry,
        job_id: str,
        proc: asyncio.subprocess.Process,
        closed: asyncio.Future[None],
        transport: asyncio.BaseTransport,
        sink: CappedFile,
        on_end: Callable[[Job, int | None], None] | None,
    ) -> None:
        self.registry, self.job_id, self.proc = registry, job_id, proc
        self.closed, self.transport, self.sink, self.on_end = closed, transport, sink, on_end
        self.pgid = proc.pid
        self.job: Job | None = None
        self.task: asyncio.Task[None] | None = None
        self.stopping = False  # set by stop(): the end is "killed", whatever the exit status
        self.contain = False
        self.on_exit: Callable[[], list[str]] | None = None

    async def stop(self) -> None:
        self.stopping = True
        await kill_group(self.pgid, self.closed)
        if self.task is not None:
            await asyncio.wait({self.task}, timeout=KILL_GRACE_S + DRAIN_S + 1)

    def kill(self) -> None:
        signal_group(self.pgid, signal.SIGKILL)

    async def supervise(self, timeout_ms: int) -> None:
        """Wait for the shell (killing the group at the timeout), then end the job."""
        proc, registry = self.proc, self.registry
        lingering = False
        try:
            waiter = asyncio.ensure_future(proc.wait())
            done, _ = await asyncio.wait({waiter}, timeout=timeout_ms / 1000)
            error = None
            if not done:
                await kill_group(self.pgid, waiter, self.closed)
                await asyncio.wait({waiter}, timeout=KILL_GRACE_S)
                error = f"{TIMED_OUT} after {timeout_ms / 1000:g} s and was stopped"
            if self.contain:
                await end_group(self.pgid, waiter, self.closed)
            await asyncio.wait({self.closed}, timeout=DRAIN_S)
            lingering = not self.closed.done()
            self._exited()
            ok = proc.returncode == 0
            status: JobStatus = "killed" if self.stopping else "completed" if ok else "failed"
            if error is not None:
                status = "failed"
            registry.finish(self.job_id, status, exit_code=proc.returncode, error=error)
        except asyncio.CancelledError:  # the loop is going away: so does the command
            self.kill()
            if self.contain:
                # The check must not run before the last write of a killed process has landed.
                wait_gone(self.pgid)
            self._exited()
            raise
        finally:
            self.transport.close()
            self.sink.close()
            if not lingering:
                process_guard().unregister(self.pgid)
            registry.finish(self.job_id, "killed")  # cancelled: the group was killed above
            if self.on_end is not None and self.job is not None:
                self.on_end(self.job, self.pgid if lingering else None)

    def _exited(self) -> None:
        """Once: what must happen when none of the command runs (the sandbox's check)."""
        on_exit, self.on_exit = self.on_exit, None
        if on_exit is None:
            return
        try:
            lines = on_exit()
        except OSError as exc:
            lines = [f"[ccx could not check what the job changed: {exc}]"]
        for line in lines:
            self.sink.feed(f"\n{line}\n".encode())


def _last_line(chunk: bytes) -> str:
    """The last complete, non-blank line of a chunk of output (a job's progress line)."""
    end = chunk.rfind(b"\n")
    while end > 0:
        start = chunk.rfind(b"\n", 0, end) + 1
        line = chunk[start:end].decode("utf-8", errors="replace").rsplit("\r", 1)[-1].strip()
        if line:
            return line
        end = start - 1
    return ""
