"""One MCP server's client connection, held open by a background task.

The task opens the transport (stdio: ``agent.mcp.stdio_transport``, which
spawns the server before the ``mcp`` package is imported; streamable HTTP or
SSE from the package), initializes the package's ``ClientSession``, lists the
tools, then waits until it
is told to stop. Its state (connecting, connected, failed with the error) is
what ``/mcp`` shows. A call has a deadline (``MCP_TOOL_TIMEOUT`` in ms, as in
Claude Code) and a closed connection fails the call at once, so a dying or
hanging server ends in a tool error, never a stuck turn. A server that had
connected and then died is started again by the next call to one of its tools
(``revive``), as Claude Code reconnects; one stopped on purpose stays stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from agent.mcp.client_import import import_client
from agent.mcp.config import ServerConfig
from agent.mcp.early_start import claim_early
from agent.mcp.sdk_transport import SdkSend, sdk_streams
from agent.mcp.stdio_transport import (
    SpawnedServer,
    SpawnSpec,
    message_streams,
    signal_group,
    spawn_server,
)

CONNECT_TIMEOUT_S = 30.0  # MCP_TIMEOUT (ms) overrides: Claude Code's default, 30 s
TOOL_TIMEOUT_S = 100_000.0  # MCP_TOOL_TIMEOUT (ms) overrides: Claude Code's default, 1e8 ms
STDERR_TAIL = 400


class McpCallError(Exception):
    """A call that got no answer: timeout, closed connection, protocol error (words for the model)."""


class ServerConnection:
    def __init__(
        self,
        config: ServerConfig,
        cwd: Path,
        on_change: Callable[[], None],
        sdk_send: SdkSend | None = None,
    ) -> None:
        """``sdk_send``: the control protocol's ``mcp_message``, for an SDK server."""
        self.config = config
        self.sdk_send = sdk_send
        self.cwd = cwd
        self.on_change = on_change
        self.state = "pending"  # pending, connecting, connected, failed, closed
        self.error: str | None = None
        self.tools: list[Any] = []  # mcp_types.Tool
        self.prompts: list[Any] = []  # mcp_types.Prompt: slash commands /mcp__<server>__<prompt>
        self.instructions: str | None = None
        self.server_version = ""
        self.server_name = ""
        self.capabilities: Any = None  # mcp_types.ServerCapabilities once connected
        self._session: Any = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stderr: Any = None
        self._stderr_text = ""
        self._process: subprocess.Popen[bytes] | None = None  # a stdio server's
        self._spawned: SpawnedServer | OSError | None = None  # started, not yet the task's
        self.ever_connected = False  # its tools are known: a call may start it again
        self.stopped = False  # stopped on purpose (/mcp, the session's end): never revived
        self.restarts = 0

    def start(self) -> asyncio.Task[None]:
        self.state, self.error = "connecting", None
        self._stop = asyncio.Event()
        self._spawned = self._spawn()  # before the task's first step, which imports the package
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp {self.name}")
        return self._task

    @property
    def name(self) -> str:
        return self.config.name

    async def wait_connected(self, timeout: float) -> None:
        """Until the server is connected or failed, at most ``timeout`` seconds."""
        await self.wait_until(asyncio.get_running_loop().time() + timeout)

    async def wait_until(self, deadline: float) -> None:
        """Until the server is connected or failed, at most until ``deadline`` (the loop's
        clock)."""
        while self.state == "connecting" and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)

    async def revive(self) -> bool:
        """Before a call: start the server again if it had connected and then died (True
        when it was restarted); McpCallError if it cannot be."""
        if self.state == "connecting":
            await self.wait_connected(timeout_setting("MCP_TIMEOUT", CONNECT_TIMEOUT_S))
        if self.state == "connected" or not self.ever_connected or self.stopped:
            return False
        why = self.error or "its connection closed"
        old = self._task
        if old is not None and not old.done():  # its end must not overwrite the new state
            self._stop.set()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(old), 5)
        self.restarts += 1
        self.start()
        await self.wait_connected(timeout_setting("MCP_TIMEOUT", CONNECT_TIMEOUT_S))
        if self.state != "connected":
            raise McpCallError(
                f"MCP server {self.name!r} had stopped ({why}) and could not be restarted: "
                f"{self.describe()}"
            )
        return True

    async def stop(self) -> None:
        self.stopped = True
        self._stop.set()
        # A server that never answered has nothing to shut down gracefully: its task is
        # cancelled at once, its process killed (the transport would give it seconds to exit).
        starting = self.state == "connecting"
        if starting and self._process is not None:
            signal_group(self._process, signal.SIGKILL)
        if isinstance(self._spawned, SpawnedServer):  # its task never ran
            self._spawned.errlog.close()
            self._spawned = None
        if self._task is not None and not self._task.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 0 if starting else 5)
            except (TimeoutError, asyncio.CancelledError, Exception):
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await self._task

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The CallToolResult, or McpCallError with words for the model."""
        return await self.request(tool, lambda session: session.call_tool(tool, arguments))

    async def request(self, what: str, call: Callable[[Any], Any]) -> Any:
        """``call(session)``'s answer within MCP_TOOL_TIMEOUT, or McpCallError with words for
        the model (``what``: the tool, or the request, it is about)."""
        session = self._session
        if session is None or self.state != "connected":
            raise McpCallError(f"MCP server {self.name!r} is not connected ({self.describe()})")
        timeout = timeout_setting("MCP_TOOL_TIMEOUT", TOOL_TIMEOUT_S)
        tool = what
        try:
            return await asyncio.wait_for(call(session), timeout)
        except TimeoutError:
            raise McpCallError(
                f"MCP server {self.name!r} did not answer {tool} within {timeout:g} s "
                "(MCP_TOOL_TIMEOUT sets the limit in ms)"
            ) from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            message = _describe(exc)
            if "closed" in message.lower():
                self._fail(f"the server closed the connection{self._stderr_tail()}")
            raise McpCallError(f"MCP server {self.name!r} failed on {tool}: {message}") from None

    def describe(self) -> str:
        if self.state == "failed":
            return f"failed: {self.error}"
        return self.state

    # -- the task -------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            # A stdio server was spawned by start(): it comes up while the package is imported.
            import_client()
            from mcp.client.session import ClientSession

            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                closed = asyncio.Event()
                read = await stack.enter_async_context(_watched(read, closed))
                session = await stack.enter_async_context(ClientSession(read, write))
                timeout = timeout_setting("MCP_TIMEOUT", CONNECT_TIMEOUT_S)
                try:
                    init = await asyncio.wait_for(session.initialize(), timeout)
                    listed = await asyncio.wait_for(session.list_tools(), timeout)
                except TimeoutError:
                    raise McpCallError(
                        f"no answer to initialize within {timeout:g} s (MCP_TIMEOUT sets it in ms)"
                    ) from None
                self.instructions = (init.instructions or "").strip() or None
                self.server_version = getattr(init.server_info, "version", "") or ""
                self.server_name = getattr(init.server_info, "name", "") or ""
                self.capabilities = init.capabilities
                self.tools = list(listed.tools)
                self.prompts = await _prompts(session, init.capabilities, timeout)
                self._session = session
                self.state, self.ever_connected = "connected", True
                self.on_change()
                await _first(self._stop.wait(), closed.wait())
                if not self._stop.is_set():  # the server went away while idle
                    self._fail(f"the server closed the connection{self._stderr_tail()}")
        except asyncio.CancelledError:
            if self.state == "connecting":  # stopped before it answered: not a live server
                self.state, self.error = "failed", "stopped while starting"
            raise
        except BaseException as exc:  # ExceptionGroups from the transport's task groups too
            if not self._stop.is_set() and self.state != "failed":
                self._fail(_describe(exc) + self._stderr_tail())
        finally:
            self._session = None
            if self.state in ("connected", "connecting"):
                self.state = "closed"

    def _fail(self, error: str) -> None:
        self._session = None
        self.state, self.error = "failed", error
        self._stop.set()
        self.on_change()

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        config = self.config
        if config.transport == "stdio":
            spawned, self._spawned = self._spawned or self._spawn(), None
            if isinstance(spawned, OSError):
                raise spawned
            assert spawned is not None  # a stdio server's
            self._stderr, self._process = spawned.errlog, spawned.process
            try:
                async with message_streams(spawned.process) as streams:
                    yield streams
            finally:
                if self._process is spawned.process:  # not a restart's, started meanwhile
                    self._process = None
                    self._stderr_text = self._read_stderr()
                    self._stderr = None
                spawned.errlog.close()
        elif config.transport == "sdk":
            if self.sdk_send is None:
                raise McpCallError(
                    "an SDK server (type sdk) lives in the Agent SDK's process: it is reached "
                    "only through the control protocol (--input-format stream-json)"
                )
            async with sdk_streams(config.name, self.sdk_send) as streams:
                yield streams
        elif config.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            async with (
                create_mcp_http_client(headers=config.headers or None) as client,
                streamable_http_client(config.url, http_client=client) as streams,
            ):
                yield streams[0], streams[1]
        else:
            from mcp.client.sse import sse_client

            async with sse_client(config.url, headers=config.headers or None) as streams:
                yield streams[0], streams[1]

    def _spawn(self) -> SpawnedServer | OSError | None:
        """A stdio server's process, started now (or the one the command line started early,
        ``agent.mcp.early_start``); the error if it cannot be started."""
        config = self.config
        if config.transport != "stdio":
            return None
        spec = SpawnSpec.of(config.command, config.args, config.env, self.cwd)
        try:
            spawned = claim_early(spec) or spawn_server(spec)
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the command line
            return exc if isinstance(exc, OSError) else OSError(str(exc))
        self._process = spawned.process
        return spawned

    def _stderr_tail(self) -> str:
        """The end of a stdio server's stderr: usually why it died."""
        text = self._read_stderr() if self._stderr is not None else self._stderr_text
        return f"; its stderr ends: {text[-STDERR_TAIL:]}" if text else ""

    def _read_stderr(self) -> str:
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            return self._stderr.read().strip()
        except (OSError, ValueError, AttributeError):
            return ""


@contextlib.asynccontextmanager
async def _watched(read: Any, closed: asyncio.Event) -> AsyncIterator[Any]:
    """The transport's read stream passed through, setting ``closed`` when it ends."""
    import anyio

    send, receive = anyio.create_memory_object_stream[Any](0)

    async def pump() -> None:
        try:
            async with send:
                async for item in read:
                    await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            closed.set()

    task = asyncio.get_running_loop().create_task(pump())
    try:
        yield receive
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task


async def _prompts(session: Any, capabilities: Any, timeout: float) -> list[Any]:
    """The server's prompts; none when it has none or cannot list them (its tools still work)."""
    if getattr(capabilities, "prompts", None) is None:
        return []
    try:
        return list((await asyncio.wait_for(session.list_prompts(), timeout)).prompts)
    except asyncio.CancelledError:
        raise
    except Exception:
        return []


async def _first(*waits: Any) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _describe(exc: BaseException) -> str:
    """The innermost useful message of an exception (task groups wrap them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, McpCallError):  # ccx's own words already
        return str(exc)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def timeout_setting(variable: str, default: float) -> float:
    try:
        value = float(os.environ[variable]) / 1000
    except (KeyError, ValueError):
        return default
    return value if value > 0 else default
