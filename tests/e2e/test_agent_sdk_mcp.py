"""MCP through the real Agent SDK: in-process SDK servers, ``mcp_status``, reconnect and toggle.

The SDK's ``create_sdk_mcp_server`` tools run inside the test's process;
ccx reaches them only through ``mcp_message`` control requests, speaking MCP
with the official client. The model (the fake API) calls the tool and must
see what the Python function returned.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from claude_agent_sdk import (
    ClaudeSDKClient,
    ResultMessage,
    SystemMessage,
    ToolResultBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from tests.e2e.conftest import Ccx
from tests.e2e.test_agent_sdk import sdk_options
from tests.e2e.test_mcp import send_whole
from tests.mcp.servers import stdio_entry
from tui.fake_api import text_reply, tool_reply

calls: list[dict[str, Any]] = []


@tool("multiply", "Multiply two integers", {"a": int, "b": int})
async def multiply(args: dict[str, Any]) -> dict[str, Any]:
    calls.append(args)
    return {"content": [{"type": "text", "text": f"product={args['a'] * args['b']}"}]}


@tool("boom", "Always fails", {})
async def boom(_args: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("the in-process tool blew up")


def tool_results(request: Any) -> list[dict[str, Any]]:
    return [
        block
        for message in request.messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def test_the_model_calls_an_in_process_sdk_tool(ccx: Ccx) -> None:
    calls.clear()
    send_whole(ccx)  # the test reads the definitions from the first request
    server = create_sdk_mcp_server("inproc", "1.0.0", tools=[multiply, boom])
    ccx.api.add(
        tool_reply(("mcp__inproc__multiply", {"a": 6, "b": 7}), ("mcp__inproc__boom", {})),
        text_reply("It is 42."),
    )
    options = sdk_options(ccx, mcp_servers={"inproc": server}, allowed_tools=["mcp__inproc"])

    async def collect() -> list[Any]:
        return [m async for m in query(prompt="six times seven?", options=options)]

    messages = asyncio.run(asyncio.wait_for(collect(), 60))
    init = messages[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert "mcp__inproc__multiply" in init.data["tools"]
    assert {"name": "inproc", "status": "connected", "source": "dynamic"} in init.data[
        "mcp_servers"
    ]
    assert calls == [{"a": 6, "b": 7}]
    first, second = ccx.api.requests
    described = {t["name"]: t for t in first.body["tools"]}
    assert described["mcp__inproc__multiply"]["description"] == "Multiply two integers"
    assert described["mcp__inproc__multiply"]["input_schema"]["required"] == ["a", "b"]
    product, failure = tool_results(second)
    # As Claude Code: the tool's blocks, to the model and to the SDK; an error as its text.
    assert product["content"] == [{"type": "text", "text": "product=42"}]
    assert not product.get("is_error")
    assert failure.get("is_error") and isinstance(failure["content"], str)
    assert "blew up" in failure["content"]
    seen = [b for m in messages if isinstance(m, UserMessage) for b in m.content]
    shown, error = [b for b in seen if isinstance(b, ToolResultBlock)]
    assert shown.content == [{"type": "text", "text": "product=42"}] and not shown.is_error
    assert error.is_error and isinstance(error.content, str) and "blew up" in error.content
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "It is 42."


def test_mcp_status_toggle_and_reconnect_from_the_client(ccx: Ccx) -> None:
    servers = {"calc": stdio_entry(), "gone": {"command": "/no/such/server"}}
    send_whole(ccx)  # the test reads which definitions each request carries
    ccx.api.add(text_reply("On."), text_reply("Off."), text_reply("On again."))

    async def turn(client: ClaudeSDKClient, prompt: str) -> None:
        await client.query(prompt)
        async for _message in client.receive_response():
            pass

    async def drive() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with ClaudeSDKClient(options=sdk_options(ccx, mcp_servers=servers)) as client:
            await turn(client, "hello")  # the first turn waits for the servers
            seen["status"] = await client.get_mcp_status()
            await client.toggle_mcp_server("calc", False)
            seen["off"] = await client.get_mcp_status()
            await turn(client, "anything?")
            await client.toggle_mcp_server("calc", True)
            await client.reconnect_mcp_server("calc")
            try:
                await client.reconnect_mcp_server("nope")
            except Exception as exc:  # the CLI's error answer, raised by the SDK
                seen["unknown"] = str(exc)
            await turn(client, "and now?")
            seen["on"] = await client.get_mcp_status()
        return seen

    seen = asyncio.run(asyncio.wait_for(drive(), 90))
    calc, gone = seen["status"]["mcpServers"]
    assert calc["name"] == "calc" and calc["status"] == "connected"
    assert calc["config"]["type"] == "stdio" and calc["scope"] == "dynamic"
    assert calc["serverInfo"]["name"] == "calc"
    by_name = {t["name"]: t for t in calc["tools"]}
    assert by_name["peek"]["annotations"] == {"readOnly": True}
    assert by_name["add"]["description"] == "Add two integers."
    assert gone["status"] == "failed" and "command not found" in gone["error"]
    assert [s["status"] for s in seen["off"]["mcpServers"]] == ["disabled", "failed"]
    assert "Server not found: nope" in seen["unknown"]
    before, off, on = ccx.api.requests
    assert any(t["name"] == "mcp__calc__add" for t in before.body["tools"])
    assert not any(t["name"].startswith("mcp__calc") for t in off.body["tools"])
    assert any(t["name"] == "mcp__calc__add" for t in on.body["tools"])
    assert seen["on"]["mcpServers"][0]["status"] == "connected"


def test_an_sdk_server_without_the_sdk_fails_clearly(ccx: Ccx) -> None:
    config = json.dumps({"mcpServers": {"inproc": {"type": "sdk", "name": "inproc"}}})
    run = ccx.run("-p", "/mcp", "--mcp-config", config)
    assert run.returncode == 0, run.stderr
    assert "inproc  (sdk, dynamic)  failed: " in run.stdout
    assert "only through the control protocol (--input-format stream-json)" in run.stdout
