"""A real MCP server (the mcp package's MCPServer) over stdio, streamable HTTP and SSE."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent.mcp.config import McpConfig, parse_server
from agent.mcp.servers import McpServers
from agent.mcp.tools import McpTool
from tests.mcp.servers import http_server, stdio_entry
from tools.base import ToolContext
from tools.file_state import FileStateCache


def servers_for(tmp_path: Path, **entries: dict) -> McpServers:
    config = McpConfig(
        {name: parse_server(name, raw, "dynamic", "test", {}) for name, raw in entries.items()}
    )
    return McpServers(config, {}, True, tmp_path, tmp_path / "settings.local.json")


async def call(tool: McpTool, tmp_path: Path, **arguments: object):
    params = tool.parse(arguments)
    assert not hasattr(params, "is_error"), params
    return await tool.run(params, ToolContext(cwd=tmp_path, file_state=FileStateCache()))


def by_name(servers: McpServers) -> dict[str, McpTool]:
    """The tools after a turn boundary (``publish``): what requests carry."""
    servers.publish()
    return {tool.name: tool for tool in servers.tools()}


async def test_a_stdio_server_lists_its_tools_and_answers(tmp_path: Path) -> None:
    servers = servers_for(tmp_path, calc=stdio_entry())
    servers.start()
    await servers.wait(30)
    try:
        tools = by_name(servers)
        assert set(tools) >= {"mcp__calc__add", "mcp__calc__echo", "mcp__calc__pixel"}
        api = tools["mcp__calc__add"].to_api()
        assert api["description"] == "Add two integers."
        assert api["input_schema"]["properties"].keys() == {"a", "b"}
        result = await call(tools["mcp__calc__add"], tmp_path, a=2, b=40)
        assert (result.output, result.is_error) == ('{"result":42}', False)
        image = await call(tools["mcp__calc__pixel"], tmp_path)
        assert isinstance(image.output, list) and image.output[0]["type"] == "image"
        assert image.output[0]["source"]["media_type"] == "image/png"
        failed = await call(tools["mcp__calc__fail"], tmp_path, reason="no such thing")
        assert failed.is_error and "no such thing" in failed.output_text()
        (status,) = servers.status()
        assert (status.state, status.transport) == ("connected", "stdio")
        assert servers.instruction_reminders() == [
            "MCP servers gave these instructions for their tools (mcp__<server>__<tool>):\n\n"
            "## calc\nUse the add tool for arithmetic; it is exact."
        ]
        assert servers.instruction_reminders() == []
    finally:
        await servers.aclose()


@pytest.mark.parametrize("mode", ["http", "sse"])
async def test_an_http_server_answers(tmp_path: Path, mode: str) -> None:
    with http_server(mode) as url:
        servers = servers_for(tmp_path, web={"type": mode, "url": url})
        servers.start()
        await servers.wait(30)
        try:
            (status,) = servers.status()
            assert status.state == "connected", status.error
            result = await call(by_name(servers)["mcp__web__add"], tmp_path, a=1, b=2)
            assert result.output == '{"result":3}'
        finally:
            await servers.aclose()


async def test_a_server_that_dies_mid_call_is_restarted_by_the_next_call(
    tmp_path: Path,
) -> None:
    servers = servers_for(tmp_path, calc=stdio_entry())
    servers.start()
    await servers.wait(30)
    try:
        tools = by_name(servers)
        result = await call(tools["mcp__calc__crash"], tmp_path)
        assert result.is_error and "calc" in result.output_text()
        (status,) = servers.status()
        assert status.state == "failed" and "closed" in (status.error or "")
        assert "mcp__calc__add" in status.tools  # kept: a call starts it again
        assert not servers.publish() and "mcp__calc__add" in by_name(servers)
        again = await call(tools["mcp__calc__add"], tmp_path, a=1, b=1)
        assert not again.is_error, again.output
        assert again.output == (
            '(The MCP server calc had stopped; ccx started it again for this call.)\n{"result":2}'
        )
        assert servers.status()[0].state == "connected"
        assert servers.connections["calc"].restarts == 1
        plain = await call(tools["mcp__calc__add"], tmp_path, a=2, b=2)
        assert plain.output == '{"result":4}'  # no note once it runs
    finally:
        await servers.aclose()


async def test_a_server_that_cannot_come_back_says_why(tmp_path: Path) -> None:
    marker = tmp_path / "ran-once"
    server = stdio_entry()
    command = " ".join([server["command"], *server["args"]])
    # Starts once; every later start exits at once (the marker exists by then).
    script = f"test -e {marker} && exit 3; touch {marker}; exec {command}"
    servers = servers_for(tmp_path, calc={"command": "sh", "args": ["-c", script]})
    servers.start()
    await servers.wait(30)
    try:
        tools = by_name(servers)
        assert (await call(tools["mcp__calc__crash"], tmp_path)).is_error
        again = await call(tools["mcp__calc__add"], tmp_path, a=1, b=1)
        assert again.is_error
        assert "calc" in again.output_text() and "could not be restarted" in again.output_text()
    finally:
        await servers.aclose()


async def test_a_server_that_dies_while_idle_is_shown_failed(tmp_path: Path) -> None:
    changes: list[str] = []
    servers = servers_for(tmp_path, calc=stdio_entry())
    servers.on_change = lambda: changes.append(servers.status()[0].state)
    servers.start()
    await servers.wait(30)
    try:
        result = await call(by_name(servers)["mcp__calc__exit_soon"], tmp_path)
        assert result.output == '{"result":"bye"}'
        for _ in range(500):
            if servers.status()[0].state != "connected":
                break
            await asyncio.sleep(0.02)
        (status,) = servers.status()
        assert status.state == "failed" and "closed the connection" in (status.error or "")
        assert changes == ["connected", "failed"]
        again = await call(by_name(servers)["mcp__calc__add"], tmp_path, a=3, b=4)
        assert again.output_text().endswith('{"result":7}') and "started it again" in again.output
    finally:
        await servers.aclose()


async def test_a_hanging_call_ends_at_the_tool_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TOOL_TIMEOUT", "1500")
    servers = servers_for(tmp_path, calc=stdio_entry())
    servers.start()
    await servers.wait(30)
    try:
        result = await call(by_name(servers)["mcp__calc__hang"], tmp_path)
        assert result.is_error
        assert "did not answer hang within 1.5 s" in result.output_text()
    finally:
        await servers.aclose()


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (stdio_entry("exit"), "boom: cannot start"),
        ({"command": "/nonexistent/mcp-server"}, "/nonexistent/mcp-server"),
    ],
)
async def test_a_server_that_cannot_start_is_failed_with_why(
    tmp_path: Path, entry: dict, expected: str
) -> None:
    servers = servers_for(tmp_path, broken=entry)
    servers.start()
    await servers.wait(30)
    (status,) = servers.status()
    assert status.state == "failed" and expected in (status.error or ""), status.error
    assert servers.tools() == []
    await servers.aclose()


async def test_a_server_that_speaks_garbage_fails_at_the_connect_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TIMEOUT", "2000")
    servers = servers_for(tmp_path, junk=stdio_entry("garbage"))
    servers.start()
    await servers.wait(30)
    (status,) = servers.status()
    assert status.state == "failed" and "initialize" in (status.error or ""), status.error
    await servers.aclose()
