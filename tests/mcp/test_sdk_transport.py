"""The SDK transport with the Agent SDK's own bridge on the far side (no subprocess, no CLI).

``ServerConnection`` speaks MCP through ``sdk_streams`` to an in-process server
built with ``create_sdk_mcp_server``, exactly as the SDK routes ``mcp_message``
control requests; a channel that stops answering fails the call, never hangs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_agent_sdk import create_sdk_mcp_server, tool
from claude_agent_sdk._internal.sdk_mcp_bridge import SdkMcpBridge

from agent.mcp.config import parse_server
from agent.mcp.connection import McpCallError, ServerConnection
from agent.mcp.sdk_transport import SdkChannelError


@tool("shout", "Upper-case the text", {"text": str})
async def shout(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": args["text"].upper()}]}


async def test_tools_are_called_through_the_bridge_and_a_dead_channel_fails_the_call(
    tmp_path: Path,
) -> None:
    server = create_sdk_mcp_server("inproc", "2.0.0", tools=[shout])
    bridge = SdkMcpBridge("inproc", server["instance"])
    channel_open = True

    async def send(name: str, message: dict[str, Any]) -> dict[str, Any]:
        assert name == "inproc"
        if not channel_open:
            raise SdkChannelError("stdin closed")
        return await bridge.handle(message) or {"jsonrpc": "2.0", "result": {}}

    config = parse_server("inproc", {"type": "sdk", "name": "inproc"}, "dynamic", "test", {})
    connection = ServerConnection(config, tmp_path, lambda: None, send)
    connection.start()
    try:
        await connection.wait_connected(20)
        assert connection.state == "connected", connection.error
        assert [t.name for t in connection.tools] == ["shout"]
        assert (connection.server_name, connection.server_version) == ("inproc", "2.0.0")
        result = await connection.call_tool("shout", {"text": "hi"})
        assert [c.text for c in result.content] == ["HI"]
        channel_open = False
        try:
            await connection.call_tool("shout", {"text": "again"})
        except McpCallError as exc:
            assert "stdin closed" in str(exc)
        else:
            raise AssertionError("the call should have failed")
    finally:
        await connection.stop()
        await bridge.aclose()
