"""A stdio MCP server: its process, spawned before the ``mcp`` package is imported, and the
message streams ``ClientSession`` reads and writes.

Why not the package's ``stdio_client``: it can spawn the server only once the package is
imported, and that import costs 0.3-1 s of CPU (its ``__init__`` loads the client, the
server side and every protocol type). Spawned here first, the servers (node, npx, uvx: as
slow to start) come up on another core while the package is imported on this one; a ``-p``
run with servers waits for the slower of the two, not for both in a row.

The wire is the same: one JSON-RPC message a line each way, the server's stderr to a file,
the server in a session (process group) of its own. The environment is the one
``stdio_client`` gives: a few variables of ccx's (``INHERITED_ENV``) and the server's own.
Ending follows the MCP specification's shutdown as ``stdio_client`` does: stdin closed, a
grace period, SIGTERM to the server's process group, another, then SIGKILL; a cancelled
ending kills the group at once, so no server outlives its session.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")  # stdio_client's on POSIX
FLUSH_S = 0.5  # for messages the session already wrote, before stdin closes
EXIT_GRACE_S = 2.0  # for the server to exit once its stdin is closed
TERM_GRACE_S = 2.0  # after SIGTERM, before SIGKILL
KILL_REAP_S = 2.0  # for a SIGKILL to take effect
READ_CHUNK = 1 << 16
POLL_S = 0.01


def server_environment(own: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: ``INHERITED_ENV`` from ccx's (never a shell function's
    definition), then the server's configured variables."""
    inherited = {
        name: value
        for name in INHERITED_ENV
        if (value := os.environ.get(name)) is not None and not value.startswith("()")
    }
    return inherited | dict(own)


@dataclass(frozen=True)
class SpawnSpec:
    """What a stdio server is started with; two equal specs start the same server."""

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]  # the whole environment it gets, sorted
    cwd: str

    @classmethod
    def of(cls, command: str, args: list[str], env: Mapping[str, str], cwd: Path) -> SpawnSpec:
        return cls(command, tuple(args), tuple(sorted(server_environment(env).items())), str(cwd))


@dataclass
class SpawnedServer:
    process: subprocess.Popen[bytes]
    errlog: IO[str]  # its stderr, a temporary file (closed with the server)


def spawn_server(spec: SpawnSpec) -> SpawnedServer:
    """Start the server now, synchronously (OSError when it cannot be: not found, not
    executable...); no event loop needed."""
    errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115  (lives as long as the server)
    try:
        process = subprocess.Popen(
            [spec.command, *spec.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=dict(spec.env),
            cwd=spec.cwd,
            start_new_session=True,  # its own process group: ending it ends what it started
        )
    except BaseException:
        errlog.close()
        raise
    return SpawnedServer(process, errlog)


@contextlib.asynccontextmanager
async def message_streams(process: subprocess.Popen[bytes]) -> AsyncIterator[tuple[Any, Any]]:
    """(read, write) streams of ``SessionMessage`` for ``ClientSession`` over the server's
    stdout and stdin; leaving ends the server (``end_server``)."""
    import anyio  # the package's streams, which ClientSession takes
    import mcp_types
    from mcp.shared.message import SessionMessage

    assert process.stdin is not None and process.stdout is not None  # spawned with pipes
    loop = asyncio.get_running_loop()
    try:
        stdout = asyncio.StreamReader(limit=READ_CHUNK)
        stdout_pipe, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stdout), process.stdout
        )
        stdin_pipe, stdin = await loop.connect_write_pipe(_Writable, process.stdin)
    except BaseException:
        signal_group(process, signal.SIGKILL)
        raise
    to_session, read = anyio.create_memory_object_stream[Any](0)
    write, from_session = anyio.create_memory_object_stream[Any](0)
    gone = (anyio.ClosedResourceError, anyio.BrokenResourceError)

    def parsed(line: bytes) -> Any:
        try:
            return SessionMessage(
                mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            )
        except ValueError as exc:  # not JSON-RPC: the session reports it, the line is skipped
            return exc

    async def read_lines() -> None:
        listening = True  # once the session is gone, the rest is read and dropped
        partial: list[bytes] = []  # a line longer than one chunk, so far
        async with to_session:
            while chunk := await stdout.read(READ_CHUNK):
                *lines, rest = chunk.split(b"\n")
                if lines and partial:
                    lines[0] = b"".join([*partial, lines[0]])
                    partial = []
                for line in lines:
                    if listening and line.strip():
                        try:
                            await to_session.send(parsed(line))
                        except gone:
                            listening = False
                if rest:
                    partial.append(rest)

    async def write_lines() -> None:
        try:
            async with from_session:
                async for message in from_session:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.write(stdin_pipe, text.encode() + b"\n")
        except (*gone, OSError):  # the server closed its stdin: the session sees the end
            await to_session.aclose()

    reader = asyncio.ensure_future(read_lines())
    writer = asyncio.ensure_future(write_lines())
    try:
        yield read, write
    finally:
        # Ended in a task of its own: a cancellation of this one cannot cut it short.
        ending = _close(process, (stdin_pipe, stdout_pipe), (read, write), reader, writer)
        await asyncio.shield(ending)


class _Writable(asyncio.Protocol):
    """The server's stdin: writes wait while the pipe is full; one after it closed fails."""

    def __init__(self) -> None:
        self._room = asyncio.Event()
        self._room.set()
        self.closed = False

    def pause_writing(self) -> None:
        self._room.clear()

    def resume_writing(self) -> None:
        self._room.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._room.set()

    async def write(self, pipe: asyncio.WriteTransport, data: bytes) -> None:
        if self.closed or pipe.is_closing():
            raise BrokenPipeError("the MCP server closed its stdin")
        pipe.write(data)
        await self._room.wait()


async def _close(
    process: subprocess.Popen[bytes],
    pipes: tuple[asyncio.WriteTransport, asyncio.ReadTransport],
    session_ends: tuple[Any, Any],
    reader: asyncio.Future[None],
    writer: asyncio.Future[None],
) -> None:
    for end in session_ends:  # nothing more is delivered or taken
        end.close()
    with contextlib.suppress(TimeoutError):  # what the session wrote already goes out
        await asyncio.wait_for(asyncio.shield(writer), FLUSH_S)
    stdin, stdout = pipes
    stdin.close()
    await end_server(process)
    with contextlib.suppress(TimeoutError):  # the server's last output, read and dropped
        await asyncio.wait_for(asyncio.shield(reader), FLUSH_S)
    for task in (reader, writer):
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
    stdout.close()  # at its end already, unless something the server started holds it open


async def end_server(process: subprocess.Popen[bytes]) -> None:
    """With its stdin closed: ``EXIT_GRACE_S`` to exit, then SIGTERM to its process group,
    ``TERM_GRACE_S``, SIGKILL. Cancelled meanwhile: SIGKILL at once."""
    try:
        if await _until(lambda: process.poll() is not None, EXIT_GRACE_S):
            return
        signal_group(process, signal.SIGTERM)
        if await _until(lambda: not _group_alive(process), TERM_GRACE_S):
            return
        signal_group(process, signal.SIGKILL)
        await _until(lambda: process.poll() is not None, KILL_REAP_S)
    except asyncio.CancelledError:
        signal_group(process, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(KILL_REAP_S)  # reaped: a kill takes effect in milliseconds
        raise


def signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    """Signal the server and everything it started (its session's process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)  # the leader's pid is the group's id (a new session)


def _group_alive(process: subprocess.Popen[bytes]) -> bool:
    process.poll()  # a zombie leader keeps the group alive: reaped here
    try:
        os.killpg(process.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # members it may not signal, or zombies not yet reaped
    return True


async def _until(done: Any, timeout: float) -> bool:
    """Poll ``done()`` until it is true (True) or ``timeout`` has passed (False)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not done():
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(POLL_S)
    return True
