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
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import IO, Any

INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")  # stdio_client's on POSIX
FLUSH_S = 0.5  # for messages the session already wrote, before stdin closes
EXIT_GRACE_S = 2.0  # for the server to exit once its stdin is closed
TERM_GRACE_S = 2.0  # after SIGTERM, before SIGKILL
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


async def spawn_server(
    command: str, args: list[str], env: Mapping[str, str], cwd: Path, errlog: IO[str]
) -> asyncio.subprocess.Process:
    """Start the server (OSError when it cannot be: not found, not executable...)."""
    return await asyncio.create_subprocess_exec(
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=errlog,
        env=server_environment(env),
        cwd=cwd,
        start_new_session=True,  # its own process group: ending it ends what it started
    )


@contextlib.asynccontextmanager
async def message_streams(process: asyncio.subprocess.Process) -> AsyncIterator[tuple[Any, Any]]:
    """(read, write) streams of ``SessionMessage`` for ``ClientSession`` over the server's
    stdout and stdin; leaving ends the server (``end_server``)."""
    import anyio  # the package's streams, which ClientSession takes
    import mcp_types
    from mcp.shared.message import SessionMessage

    stdin, stdout = process.stdin, process.stdout
    assert stdin is not None and stdout is not None  # spawned with pipes
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
                    stdin.write(text.encode() + b"\n")
                    await stdin.drain()
        except (*gone, OSError):  # the server closed its stdin: the session sees the end
            await to_session.aclose()

    reader = asyncio.ensure_future(read_lines())
    writer = asyncio.ensure_future(write_lines())
    try:
        yield read, write
    finally:
        # Ended in a task of its own: a cancellation of this one cannot cut it short.
        await asyncio.shield(_close(process, read, write, reader, writer))


async def _close(
    process: asyncio.subprocess.Process,
    read: Any,
    write: Any,
    reader: asyncio.Future[None],
    writer: asyncio.Future[None],
) -> None:
    read.close()  # the session's ends: nothing more is delivered or taken
    write.close()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(writer), FLUSH_S)
    await end_server(process)
    with contextlib.suppress(TimeoutError):  # the server's last output, read and dropped
        await asyncio.wait_for(asyncio.shield(reader), FLUSH_S)
    for task in (reader, writer):
        task.cancel()
        with contextlib.suppress(BaseException):
            await task


async def end_server(process: asyncio.subprocess.Process) -> None:
    """Close its stdin and give it ``EXIT_GRACE_S`` to exit; then SIGTERM to its process group,
    ``TERM_GRACE_S``, SIGKILL. Cancelled meanwhile: SIGKILL at once."""
    try:
        if process.stdin is not None:
            process.stdin.close()
        if await _until(lambda: process.returncode is not None, EXIT_GRACE_S):
            return
        signal_group(process, signal.SIGTERM)
        if await _until(lambda: not _group_alive(process.pid), TERM_GRACE_S):
            return
        signal_group(process, signal.SIGKILL)
    except asyncio.CancelledError:
        signal_group(process, signal.SIGKILL)
        raise


def signal_group(process: asyncio.subprocess.Process, signum: int) -> None:
    """Signal the server and everything it started (its session's process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)  # the leader's pid is the group's id (a new session)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # members it may not signal, or zombies not yet reaped
    return True


async def _until(done: Any, timeout: float) -> bool:
    """Poll ``done()`` until it is true (True) or ``timeout`` has passed (False). Not
    ``process.wait()``: it also waits for the pipes' end, which a grandchild may hold open."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not done():
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(POLL_S)
    return True
