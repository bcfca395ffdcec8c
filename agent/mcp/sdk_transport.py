"""The transport to an Agent SDK's in-process MCP server: JSON-RPC riding the control protocol.

The Agent SDK's ``create_sdk_mcp_server`` servers live inside the client's
process; Claude Code reaches them by sending each JSON-RPC message as an
``mcp_message`` control request (``{"server_name", "message"}``) and reading
the answer's ``mcp_response``. This module gives the ``mcp`` package's
``ClientSession`` the read and write streams it expects, so the official
client speaks to such a server exactly as it speaks over stdio: each
message the session writes is sent with ``send(server, message)`` (its own
task, so a slow tool call never holds up the next message), and the answer
to a request comes back on the read stream. A notification's answer (an
acknowledgement) is dropped. A send that fails becomes a JSON-RPC error
for that one request, so the session fails the call rather than waiting.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

SdkSend = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""``send(server_name, message)``: the JSON-RPC answer (``mcp_response``); raises
``SdkChannelError`` when the client does not answer."""

INTERNAL_ERROR = -32603


class SdkChannelError(Exception):
    """The client refused or never answered an ``mcp_message`` request."""


@contextlib.asynccontextmanager
async def sdk_streams(server: str, send: SdkSend) -> AsyncIterator[tuple[Any, Any]]:
    """(read, write) streams of ``SessionMessage`` for ``ClientSession``."""
    import anyio
    from mcp.shared.message import SessionMessage

    to_session, read = anyio.create_memory_object_stream[Any](16)
    write, from_session = anyio.create_memory_object_stream[Any](16)

    async def deliver(message: dict[str, Any]) -> None:
        request_id = message.get("id") if "method" in message else None
        try:
            answer = await send(server, message)
        except SdkChannelError as exc:
            if request_id is None:
                return
            answer = {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": INTERNAL_ERROR, "message": str(exc)},
            }
        if request_id is None:  # a notification or a response: nothing comes back
            return
        try:
            parsed = _parse(answer)
        except ValueError as exc:
            parsed = _parse(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": INTERNAL_ERROR, "message": f"bad answer: {exc}"},
                }
            )
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await to_session.send(SessionMessage(parsed))

    async def pump(tasks: Any) -> None:
        async with from_session:
            async for item in from_session:
                raw = item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
                tasks.start_soon(deliver, raw)

    async with anyio.create_task_group() as tasks, to_session:
        tasks.start_soon(pump, tasks)
        try:
            yield read, write
        finally:
            tasks.cancel_scope.cancel()


def _parse(answer: dict[str, Any]) -> Any:
    """A JSON-RPC dict as the ``mcp`` package's message (ValueError if it is not one)."""
    import mcp.types as types
    from pydantic import ValidationError

    try:
        return types.jsonrpc_message_adapter.validate_python(answer, by_name=False)
    except ValidationError as exc:
        raise ValueError(str(exc).splitlines()[0]) from None
