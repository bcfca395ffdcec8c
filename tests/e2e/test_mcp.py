"""`ccx -p` with a real MCP server from .mcp.json: the model calls its tool, the result comes back."""

from __future__ import annotations

import json

from tests.e2e.conftest import Ccx
from tests.mcp.servers import stdio_entry
from tui.fake_api import text_reply, tool_reply


def write_mcp_json(ccx: Ccx, **servers: dict) -> None:
    (ccx.repo / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def approve_all(ccx: Ccx) -> None:
    """Approve the project's servers, and let -p wait for them (0.8 s by default: a loaded
    machine may start the test server slower, and these tests need its tools at once)."""
    settings = ccx.repo / ".claude" / "settings.local.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"enableAllProjectMcpServers": True}))
    ccx.env["CCX_MCP_PRINT_WAIT_MS"] = "60000"


def send_whole(ccx: Ccx) -> None:
    """Tool search off: every MCP tool definition in every request (ENABLE_TOOL_SEARCH)."""
    ccx.env["ENABLE_TOOL_SEARCH"] = "false"


def test_the_model_calls_an_mcp_tool_and_sees_its_result(ccx: Ccx) -> None:
    write_mcp_json(ccx, calc=stdio_entry(env={"TEST_MCP_SECRET": "${SECRET_FOR_TEST}"}))
    approve_all(ccx)
    send_whole(ccx)
    ccx.env["SECRET_FOR_TEST"] = "-expanded"
    ccx.api.add(
        tool_reply(("mcp__calc__add", {"a": 20, "b": 22}), ("mcp__calc__echo", {"text": "hi"})),
        text_reply("The sum is 42."),
    )
    run = ccx.run("-p", "add 20 and 22", "--allowedTools", "mcp__calc", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "The sum is 42."
    first, second = ccx.api.requests
    names = [tool["name"] for tool in first.body["tools"]]
    assert "mcp__calc__add" in names and "mcp__calc__hang" in names
    assert "Use the add tool for arithmetic; it is exact." in first.all_text()
    results = [
        block
        for message in second.messages
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "tool_result"
    ]
    assert [r["content"] for r in results] == ['{"result":42}', '{"result":"hi-expanded"}']
    assert "Use the add tool" not in json.dumps(second.messages[-1])  # announced once


def test_an_unapproved_project_server_never_starts_in_print_mode(ccx: Ccx) -> None:
    marker = ccx.repo / "started"
    write_mcp_json(
        ccx,
        calc={"command": "sh", "args": ["-c", f"touch {marker}; sleep 5"]},
    )
    ccx.api.add(text_reply("ok"))
    run = ccx.run("-p", "hi", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert not marker.exists()
    assert not any(t["name"].startswith("mcp__") for t in ccx.api.requests[0].body["tools"])


def test_mcp_config_json_and_the_mcp_command(ccx: Ccx) -> None:
    config = json.dumps({"mcpServers": {"calc": stdio_entry(), "gone": {"command": "/no/such"}}})
    run = ccx.run("-p", "/mcp", "--mcp-config", config)
    assert run.returncode == 0, run.stderr
    assert "calc  (stdio, dynamic)  connected" in run.stdout
    assert "  mcp__calc__add" in run.stdout
    assert "  /mcp__calc__review  (prompt)" in run.stdout
    assert "gone  (stdio, dynamic)  failed: command not found" in run.stdout
    again = ccx.run("-p", "/mcp reconnect calc", "--mcp-config", config)
    assert again.returncode == 0 and "MCP server calc reconnected" in again.stdout
    gone = ccx.run("-p", "/mcp reconnect gone", "--mcp-config", config)
    assert gone.returncode == 1 and "gone did not reconnect: command not found" in gone.stderr


INSTRUCTIONS = "Use the add tool for arithmetic; it is exact."


def test_server_instructions_come_back_once_after_every_compaction(ccx: Ccx) -> None:
    write_mcp_json(ccx, calc=stdio_entry())
    approve_all(ccx)
    ccx.api.add(text_reply("Hello."))
    assert ccx.run("-p", "hi").returncode == 0
    assert ccx.api.requests[-1].all_text().count(INSTRUCTIONS) == 1
    for turn in ("next", "and again"):
        ccx.api.add(text_reply("<summary>We said hello.</summary>"))
        compact = ccx.run("-c", "-p", "/compact")
        assert compact.returncode == 0, compact.stderr
        ccx.api.add(text_reply("Still here."))
        assert ccx.run("-c", "-p", turn).returncode == 0
        text = ccx.api.requests[-1].all_text()
        assert "We said hello." in text and text.count(INSTRUCTIONS) == 1, text
