"""The MCP part of the control protocol: ``mcp_status``, ``mcp_reconnect``, ``mcp_toggle``, and
``mcp_message``, the channel to the Agent SDK's in-process (``type: "sdk"``) servers.

The client asks about and switches ccx's servers with the first three; ccx
asks the client with the fourth, one request per JSON-RPC message to an SDK
server, and reads the JSON-RPC answer from ``mcp_response``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agent.mcp.sdk_transport import SdkChannelError, SdkSend

if TYPE_CHECKING:
    from tui.session.driver import SessionDriver

SendControl = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
SUBTYPES = ("mcp_status", "mcp_reconnect", "mcp_toggle")


async def answer(driver: SessionDriver, request: dict[str, Any]) -> dict[str, Any]:
    """The response to one of ``SUBTYPES`` (ValueError with the reason it failed)."""
    subtype = request.get("subtype")
    if subtype == "mcp_status":
        return driver.mcp_status()
    name = request.get("serverName")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{subtype} needs a serverName")
    if subtype == "mcp_reconnect":
        await driver.reconnect_mcp_server(name)
    else:
        await driver.toggle_mcp_server(name, request.get("enabled") is not False)
    return {}


def sdk_sender(send_control: SendControl) -> SdkSend:
    """``send(server, message)`` for ``agent.mcp.sdk_transport``: one ``mcp_message`` request."""

    async def send(server: str, message: dict[str, Any]) -> dict[str, Any]:
        body = {"subtype": "mcp_message", "server_name": server, "message": message}
        response = await send_control(body)
        answer = response.get("mcp_response")
        if not isinstance(answer, dict):
            reason = response.get("message") or "no mcp_response in the client's answer"
            raise SdkChannelError(f"the Agent SDK did not answer for {server}: {reason}")
        return answer

    return send
