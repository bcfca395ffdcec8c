"""One hook command (or the statusLine command) as a process: what it printed, when it exits.

The command runs through ``/bin/sh -c`` in a session and process group of its own,
registered with ccx's process guard (``tools.process_guard``) from inside the child, so
nothing it starts outlives ccx, even a ccx killed with SIGKILL. The payload is its stdin
from an anonymous file, so a command that never reads it never blocks ccx. stdout and
stderr are pipes of ccx's own, read as they fill (each kept up to ``keep_bytes``).

ccx waits for the command itself, never for the children it leaves in the background:
those inherit its pipes and may hold them open for ever (``sleep 300 &``). Once the
command exits, what is already in the pipes is read for at most ``DRAIN_S`` and reading
stops; the output so far is its output. The processes it left are then either killed
at once (``keep_children=False``, the statusLine's choice) or left to run as its
``lingering`` group, which the caller kills when the session ends (hooks: a
notification sound, a server a SessionStart hook starts). A child that starts a session
of its own (``setsid``) leaves the group and escapes both, as it escapes Bash's.

With a ``sandbox`` (a project's hooks and statusLine: commands the repository
ships), the command runs as a sandboxed Bash command does: in the OS sandbox,
without the session-socket variables, its children killed when it exits (they
cannot leave), and its changes to protected paths undone once none of it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tools.bash_process import group_running, with_registration
from tools.process_guard import process_guard
from tools.sandbox import Launch, Sandbox, protected_note

# After the command exits, how long what its children still write may take to arrive.
DRAIN_S = 0.3
KILL_WAIT_S = 5.0


@dataclass
class CommandRun:
    returncode: int | None  # None: killed at its timeout
    stdout: bytes
    stderr: bytes
    stdout_total: int  # bytes written in all (more than ``stdout`` holds when it was cut)
    stderr_total: int
    lingering: int | None = None  # the process group its background children still run in
    group: int = 0  # its process group

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


async def run_shell_command(
    command: str,
    stdin: bytes,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    *,
    keep_children: bool,
    keep_bytes: int = 1 << 20,
    sandbox: Sandbox | None = None,
) -> CommandRun:
    """Run ``command`` to its exit or its ``timeout`` (then its whole group is killed).

    Raises OSError when it cannot be started (or the sandbox cannot be set up). Cancelled,
    it kills the whole group first.
    """
    launch = sandbox.launch(cwd) if sandbox is not None else None
    contained = launch is not None and launch.backend is not None
    snapshot = sandbox.record() if sandbox is not None and contained else None
    if sandbox is not None and contained:
        env = sandbox.environment(dict(env))
    try:
        run = await _run(command, stdin, cwd, env, timeout, keep_children and not contained,
                         keep_bytes, launch)  # fmt: skip
    except BaseException:
        if sandbox is not None and snapshot is not None:
            sandbox.release(snapshot)
        raise
    finally:
        if launch is not None:
            launch.close()
    if sandbox is not None and snapshot is not None:
        while group_running(run.group):  # killed above: wait until none of it can write
            await asyncio.sleep(0.005)
        repairs = sandbox.restore(snapshot, Path(tempfile.gettempdir()) / "ccx-hook-reverted")
        if repairs:
            run.stderr += ("\n" + protected_note(repairs)).encode()
    return run


async def _run(
    command: str,
    stdin: bytes,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    keep_children: bool,
    keep_bytes: int,
    launch: Launch | None,
) -> CommandRun:
    loop = asyncio.get_running_loop()
    prefix = launch.prefix if launch is not None else []
    preexec = launch.preexec if launch is not None else None
    pass_fds = launch.pass_fds if launch is not None else ()
    readers = [_Collector(keep_bytes, loop.create_future()) for _ in range(2)]
    transports: list[asyncio.ReadTransport] = []
    pipes = [os.pipe(), os.pipe()]
    try:
        for reader, (read_fd, _) in zip(readers, pipes, strict=True):
            transport, _ = await loop.connect_read_pipe(
                _factory(reader), os.fdopen(read_fd, "rb", buffering=0)
            )
            transports.append(transport)
        with tempfile.TemporaryFile() as payload:
            payload.write(stdin)
            payload.seek(0)
            process = await asyncio.create_subprocess_exec(
                *prefix, "/bin/sh", "-c", command,
                stdin=payload, stdout=pipes[0][1], stderr=pipes[1][1],
                cwd=cwd, env=dict(env), start_new_session=True,
                preexec_fn=with_registration(preexec), pass_fds=pass_fds,
            )  # fmt: skip
    except BaseException:
        for transport in transports:
            transport.close()
        for read_fd, _ in pipes[len(transports) :]:
            os.close(read_fd)
        raise
    finally:
        for _, write_fd in pipes:
            os.close(write_fd)
    group = process.pid
    try:
        returncode = await _wait(process, timeout)
        closed = [reader.closed for reader in readers]
        await asyncio.wait(closed, timeout=DRAIN_S)
    except BaseException:  # cancelled: nothing it started may outlive the caller
        await _kill(process)
        process_guard().unregister(group)
        raise
    finally:
        for transport in transports:
            transport.close()  # stop reading: what its children write later is not waited for
    lingering = group if _alive(group) else None
    if lingering is not None and not keep_children:
        _signal(group, signal.SIGKILL)
        lingering = None
    if lingering is None:
        process_guard().unregister(group)
    out, err = readers
    return CommandRun(
        returncode, out.data(), err.data(), out.total, err.total, lingering, group=group
    )


def kill_group(group: int) -> None:
    """Kill a group a command left (``CommandRun.lingering``) and forget it."""
    _signal(group, signal.SIGKILL)
    process_guard().unregister(group)


def group_alive(group: int) -> bool:
    """Whether anything still runs in the group (False: forget it, its id may be reused)."""
    if _alive(group):
        return True
    process_guard().unregister(group)
    return False


async def _wait(process: asyncio.subprocess.Process, timeout: float) -> int | None:
    """The command's exit code; None when it was killed at ``timeout``.

    The kill is a timer, not ``wait_for``: a loop that was busy when the command finished
    (a heavy import on its thread) keeps the result of a command that did not time out.
    """
    fired = False

    def kill() -> None:
        nonlocal fired
        fired = True
        _signal(process.pid, signal.SIGKILL)

    killer = asyncio.get_running_loop().call_later(timeout, kill)
    try:
        returncode = await process.wait()
    finally:
        killer.cancel()
    return None if fired and returncode == -signal.SIGKILL else returncode


async def _kill(process: asyncio.subprocess.Process) -> None:
    _signal(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(process.wait(), KILL_WAIT_S)


def _signal(group: int, sig: int) -> bool:
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _alive(group: int) -> bool:
    return _signal(group, 0)


def _factory(reader: _Collector) -> Callable[[], _Collector]:
    """``connect_read_pipe``'s protocol factory: the collector made for that pipe."""
    return lambda: reader


class _Collector(asyncio.Protocol):
    """One output pipe: the first ``keep`` bytes kept, the rest counted; ``closed`` set at
    its end (every writer gone)."""

    def __init__(self, keep: int, closed: asyncio.Future[None]) -> None:
        self.keep = keep
        self.closed = closed
        self.chunks: list[bytes] = []
        self.kept = 0
        self.total = 0

    def data_received(self, data: bytes) -> None:
        self.total += len(data)
        if self.kept < self.keep:
            piece = data[: self.keep - self.kept]
            self.chunks.append(piece)
            self.kept += len(piece)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def data(self) -> bytes:
        return b"".join(self.chunks)
