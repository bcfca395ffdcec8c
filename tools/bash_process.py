"""Starting and supervising one Bash command: its own process group, one merged output
pipe, a timeout, and a clean kill of the whole group on timeout or cancellation.

The command's group is registered with the process guard for as long as it may
have members, so a ccx that dies (even by SIGKILL) takes the command with it.
A sandbox launch adds an argv prefix (bubblewrap) or a pre-exec function
(Landlock) to the same start-up, and asks for the command to be contained:
when its shell exits, whatever it left running is killed and waited for, so
that nothing of it can act after ccx has checked what it did.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tools.process_guard import process_guard

KILL_GRACE_S = 1.0
# After the shell exits, how long to wait for the pipe to close: background
# children that inherited it may hold it open for ever.
DRAIN_S = 0.3
GONE_S = 5.0  # how long a contained command's killed processes may take to be gone
_PIPE_SIZE = 1 << 20


class OutputSink(Protocol):
    def feed(self, chunk: bytes) -> None: ...


@dataclass
class Outcome:
    returncode: int | None
    timed_out: bool
    lingering: bool  # background processes still hold the output pipe
    pgid: int


async def run_command(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    sink: OutputSink,
    timeout_ms: int,
    preexec: Callable[[], None] | None = None,
    pass_fds: Sequence[int] = (),
    contain: bool = False,
) -> Outcome:
    """Run ``argv`` in a new session; stdout and stderr go to ``sink`` as they arrive.

    ``contain``: when the shell exits, end the processes it left in its group.
    Raises OSError when the program cannot be started, and SubprocessError when
    ``preexec`` failed in the child (nothing ran then).
    """
    proc, closed, transport = await run_process(argv, cwd, env, sink, preexec, pass_fds)
    try:
        outcome = await _supervise(proc, closed, timeout_ms, contain)
        if not outcome.lingering:
            process_guard().unregister(proc.pid)
        return outcome
    finally:
        transport.close()


async def run_process(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    sink: OutputSink,
    preexec: Callable[[], None] | None = None,
    pass_fds: Sequence[int] = (),
    stderr: int | None = None,
) -> tuple[asyncio.subprocess.Process, asyncio.Future[None], asyncio.BaseTransport]:
    """Start ``argv`` in a new session and process group, registered with the process guard,
    its merged output fed to ``sink`` (only stdout when ``stderr``, a descriptor, is given):
    the process, a future set when the output pipe closes, and the pipe's transport (the
    caller closes it). Raises as ``run_command`` does."""
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    _grow_pipe(write_fd)
    reader = _PipeReader(sink, loop.create_future())
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: reader, os.fdopen(read_fd, "rb", buffering=0)
        )
    except BaseException:
        os.close(write_fd)
        raise
    try:
        try:
            # Our own pipe rather than PIPE: asyncio's wait() would also wait for
            # background children that inherited the pipe to close it.
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL, stdout=write_fd,
                stderr=write_fd if stderr is None else stderr,
                cwd=cwd, env=dict(env), start_new_session=True, pass_fds=tuple(pass_fds),
                preexec_fn=with_registration(preexec),
            )  # fmt: skip
        finally:
            os.close(write_fd)
    except BaseException:
        transport.close()
        raise
    process_guard().register(proc.pid)
    return proc, reader.closed, transport


def with_registration(preexec: Callable[[], None] | None) -> Callable[[], None] | None:
    """``preexec``, then the child registers its own group with the guardian, just before exec.

    Registering last means a preexec that fails (nothing runs) leaves nothing registered.
    """
    register = process_guard().child_registration()
    if register is None:
        return preexec

    def both() -> None:
        if preexec is not None:
            preexec()
        register()

    return both


async def _supervise(
    proc: asyncio.subprocess.Process,
    closed: asyncio.Future[None],
    timeout_ms: int,
    contain: bool = False,
) -> Outcome:
    """Wait for the command within its timeout; kill its group on timeout or cancellation
    (and, when contained, once the shell has exited)."""
    waiter = asyncio.ensure_future(proc.wait())
    try:
        done, _ = await asyncio.wait({waiter}, timeout=timeout_ms / 1000)
        timed_out = not done
        if timed_out:
            await kill_group(proc.pid, waiter, closed)
        if contain:
            await end_group(proc.pid, waiter, closed)
        await asyncio.wait({closed}, timeout=DRAIN_S)
        lingering = not closed.done()
        await asyncio.wait({waiter}, timeout=KILL_GRACE_S)
        return Outcome(proc.returncode, timed_out, lingering, proc.pid)
    except asyncio.CancelledError:
        await kill_group(proc.pid, waiter, closed)
        process_guard().unregister(proc.pid)
        raise
    finally:
        if not waiter.done():
            waiter.cancel()


class _PipeReader(asyncio.Protocol):
    """Feeds the merged stdout/stderr pipe into a sink as data arrives."""

    def __init__(self, sink: OutputSink, closed: asyncio.Future[None]) -> None:
        self.sink = sink
        self.closed = closed

    def data_received(self, data: bytes) -> None:
        self.sink.feed(data)

    def eof_received(self) -> bool | None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def _grow_pipe(fd: int) -> None:
    """Fewer, larger reads for chatty commands (Linux only; harmless elsewhere)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, set_size, _PIPE_SIZE)


def signal_group(pgid: int, sig: signal.Signals | int) -> bool:
    """Signal a process group; False once the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    return True


async def end_group(pgid: int, *exited: asyncio.Future[Any]) -> None:
    """Kill what is left of a group and wait until none of it runs (at most GONE_S)."""
    await kill_group(pgid, *exited)
    deadline = asyncio.get_running_loop().time() + GONE_S
    while group_running(pgid) and asyncio.get_running_loop().time() < deadline:
        signal_group(pgid, signal.SIGKILL)
        await asyncio.sleep(0.005)


def wait_gone(pgid: int) -> None:
    """``end_group`` for a loop that is going away: block until none of the group runs
    (at most GONE_S), killing what is left."""
    deadline = time.monotonic() + GONE_S
    while group_running(pgid) and time.monotonic() < deadline:
        signal_group(pgid, signal.SIGKILL)
        time.sleep(0.005)


def group_running(pgid: int) -> bool:
    """Whether any process of the group is still alive (zombies are not)."""
    if not signal_group(pgid, 0):
        return False
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


async def kill_group(pgid: int, *exited: asyncio.Future[Any]) -> None:
    """SIGTERM the whole group, give it a moment to exit, then SIGKILL whatever is left.

    ``exited`` (the shell's exit, the output pipe's close) end the grace early:
    orphaned zombies still count as group members until something reaps them.
    """
    try:
        if not signal_group(pgid, signal.SIGTERM):
            return
        await asyncio.wait(exited, timeout=KILL_GRACE_S, return_when=asyncio.ALL_COMPLETED)
    finally:
        signal_group(pgid, signal.SIGKILL)
