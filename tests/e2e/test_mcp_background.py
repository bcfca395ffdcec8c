"""MCP that never stalls, with real servers (the mcp package's MCPServer, and one that never
answers): start-up in the background, tools joining at a turn boundary, a crashed server
started again by the next call, Claude Code's timeouts, several ``--mcp-config`` values."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.e2e.conftest import CCX, Ccx
from tests.e2e.test_claude_code_headless import user_line
from tests.e2e.test_mcp import approve_all, send_whole, write_mcp_json
from tests.mcp.servers import stdio_entry
from tui.fake_api import text_reply, tool_reply
from tui.fake_api.recording import RecordedRequest

MUTE = {"command": "sleep", "args": ["3600"]}  # starts, never answers initialize


def mcp_names(request: RecordedRequest, server: str) -> list[str]:
    return [t["name"] for t in request.body["tools"] if t["name"].startswith(f"mcp__{server}__")]


def tool_results(request: RecordedRequest) -> list[Any]:
    return [
        block["content"]
        for message in request.messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def test_an_unresponsive_server_does_not_hold_up_a_print_run(ccx: Ccx) -> None:
    write_mcp_json(ccx, mute=MUTE, calc=stdio_entry())
    settings = ccx.repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"enableAllProjectMcpServers": True}))
    ccx.env["MCP_TIMEOUT"] = "120000"  # were it waited for, the run would take two minutes
    ccx.api.add(text_reply("Hello."))
    started = time.monotonic()
    run = ccx.run("-p", "hi", timeout=100)
    took = time.monotonic() - started
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Hello."
    assert took < 60, took  # not the 120 s MCP_TIMEOUT (a loaded machine is slow anyway)


def test_a_slow_server_joins_at_the_next_turn_and_mcp_shows_it_pending(ccx: Ccx) -> None:
    write_mcp_json(ccx, mute=MUTE, late=stdio_entry(env={"TEST_MCP_START_DELAY": "4"}))
    approve_all(ccx)
    ccx.env["CCX_MCP_PRINT_WAIT_MS"] = "200"  # the late one answers after 4 s
    send_whole(ccx)
    ccx.api.add(text_reply("First."), text_reply("Second."))
    proc = subprocess.Popen(
        [CCX, "-p", "--input-format", "stream-json", "--output-format", "stream-json",
         "--verbose"],
        cwd=ccx.repo, env=ccx.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None

    def turn(text: str) -> str:
        proc.stdin.write(user_line(text))
        proc.stdin.flush()
        for line in proc.stdout:
            event = json.loads(line)
            if event["type"] == "result":
                return str(event["result"])
        raise AssertionError(f"ccx ended: {proc.stderr.read() if proc.stderr else ''}")

    try:
        assert turn("one") == "First."
        shown = turn("/mcp")
        assert "mute  (stdio, project)  pending" in shown
        deadline = time.monotonic() + 60
        while "late  (stdio, project)  connected" not in shown:
            assert time.monotonic() < deadline, shown
            time.sleep(0.5)
            shown = turn("/mcp")
        assert turn("two") == "Second."
    finally:
        proc.stdin.close()
        proc.wait(30)
    first, second = ccx.api.requests
    assert mcp_names(first, "late") == [] and mcp_names(first, "mute") == []
    assert "mcp__late__add" in mcp_names(second, "late") and mcp_names(second, "mute") == []


def test_a_crashed_server_is_started_again_by_the_next_call(ccx: Ccx) -> None:
    config = json.dumps({"mcpServers": {"calc": stdio_entry()}})
    ccx.api.add(
        tool_reply(("mcp__calc__crash", {})),
        tool_reply(("mcp__calc__add", {"a": 1, "b": 2})),
        text_reply("Three."),
    )
    run = ccx.run("-p", "add", "--mcp-config", config, "--allowedTools", "mcp__calc")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Three."
    crashed, restarted = tool_results(ccx.api.requests[2])
    assert "calc" in json.dumps(crashed)
    assert restarted == (
        '(The MCP server calc had stopped; ccx started it again for this call.)\n{"result":3}'
    )


def test_timeouts_come_from_the_environment(ccx: Ccx) -> None:
    config = json.dumps({"mcpServers": {"calc": stdio_entry(), "mute": MUTE}})
    # --mcp-config's servers are waited for up to MCP_TIMEOUT (calc must connect in it).
    ccx.env |= {"MCP_TOOL_TIMEOUT": "1500", "MCP_TIMEOUT": "15000"}
    ccx.api.add(tool_reply(("mcp__calc__hang", {})), text_reply("Gave up."))
    started = time.monotonic()
    run = ccx.run("-p", "hang", "--mcp-config", config, "--allowedTools", "mcp__calc")
    assert run.returncode == 0, run.stderr
    assert time.monotonic() - started < 60
    (hung,) = tool_results(ccx.api.requests[1])
    assert "did not answer hang within 1.5 s (MCP_TOOL_TIMEOUT" in json.dumps(hung)
    shown = ccx.run("-p", "/mcp", "--mcp-config", config)
    assert "mute  (stdio, dynamic)  failed: no answer to initialize within 15 s" in shown.stdout


def test_a_file_and_inline_json_together_with_odd_server_names(ccx: Ccx) -> None:
    (ccx.repo / "a.json").write_text(json.dumps({"mcpServers": {"plain": stdio_entry()}}))
    inline = json.dumps({"mcpServers": {"my.srv x": stdio_entry()}})
    run = ccx.run("-p", "/mcp", "--mcp-config", "a.json", inline)
    assert run.returncode == 0, run.stderr
    assert "plain  (stdio, dynamic)  connected" in run.stdout
    assert "my.srv x  (stdio, dynamic)  connected" in run.stdout
    assert "  mcp__my_srv_x__add" in run.stdout  # Claude Code's spelling


SIXTY = json.dumps([f"tool_{i:02d}" for i in range(60)])


def test_sixty_tools_go_behind_tool_search_and_the_api_accepts_the_loading(ccx: Ccx) -> None:
    config = json.dumps({"mcpServers": {"calc": stdio_entry(env={"TEST_MCP_TOOL_NAMES": SIXTY})}})
    ccx.api.add(
        tool_reply(("ToolSearch", {"query": "select:mcp__calc__tool_07"})),
        tool_reply(("mcp__calc__tool_07", {"text": "hi"})),
        text_reply("Done."),
    )
    run = ccx.run("-p", "use tool 7", "--mcp-config", config, "--allowedTools", "mcp__calc")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Done."
    first, loaded, called = ccx.api.requests
    names = [t["name"] for t in first.body["tools"]]
    assert "ToolSearch" in names and mcp_names(first, "calc") == []
    assert [t["name"] for t in first.body["tools"] if t.get("defer_loading")] == [
        "DeferredToolsAnchor"
    ]
    told = first.last_user_text()
    assert "mcp__calc__tool_59" in told and "ToolSearch" in told
    (reference,) = tool_results(loaded)
    assert reference == [{"type": "tool_reference", "tool_name": "mcp__calc__tool_07"}]
    (sent,) = [t for t in loaded.body["tools"] if t["name"] == "mcp__calc__tool_07"]
    assert sent["defer_loading"] is True and sent["description"] == "Answers as tool_07"
    assert loaded.body["tools"][: len(names)] == first.body["tools"]  # the prefix kept
    assert tool_results(called)[-1] == '{"result":"tool_07 got hi"}'
    assert ccx.api.errors == []
    # Keywords find by name and description; the fake API takes the references.
    ccx.api.add(
        tool_reply(("ToolSearch", {"query": "+calc tool_33", "max_results": 2})),
        text_reply("Found."),
    )
    again = ccx.run("-p", "find", "--mcp-config", config)
    assert again.returncode == 0, again.stderr
    (found,) = tool_results(ccx.api.requests[-1])
    assert found[0] == {"type": "tool_reference", "tool_name": "mcp__calc__tool_33"}
    context = ccx.run("-p", "/context", "--mcp-config", config)
    assert "tools deferred behind ToolSearch" in context.stdout


def test_tool_search_off_or_under_its_auto_threshold_sends_every_definition(ccx: Ccx) -> None:
    config = json.dumps({"mcpServers": {"calc": stdio_entry()}})
    for setting in ("false", "auto"):  # the test server's ~12 tools are far under 10%
        ccx.env["ENABLE_TOOL_SEARCH"] = setting
        ccx.api.add(text_reply("ok"))
        assert ccx.run("-p", "hi", "--mcp-config", config).returncode == 0
        request = ccx.api.requests[-1]
        assert "mcp__calc__add" in mcp_names(request, "calc")
        # no search at all: the built-in tools it would hold are sent whole too
        names = {t["name"] for t in request.body["tools"]}
        assert "ToolSearch" not in names and {"WebSearch", "NotebookEdit"} <= names
    ccx.env["ENABLE_TOOL_SEARCH"] = "auto:0"
    ccx.api.add(text_reply("ok"))
    assert ccx.run("-p", "hi", "--mcp-config", config).returncode == 0
    assert mcp_names(ccx.api.requests[-1], "calc") == []


def logged_server(log: str, **env: str) -> dict[str, Any]:
    """The test server over stdio, writing its pid to ``log`` as it starts."""
    entry = stdio_entry(env={"LOG": log, **env})
    script = 'echo "$$" >> "$LOG"; exec "$0" "$@"'
    return {**entry, "command": "sh", "args": ["-c", script, entry["command"], *entry["args"]]}


def test_mcp_configs_servers_start_with_the_command_line_and_once(ccx: Ccx) -> None:
    log = ccx.repo.parent / "starts.log"
    config = json.dumps({"mcpServers": {"calc": logged_server(str(log))}})
    ccx.api.add(tool_reply(("mcp__calc__add", {"a": 1, "b": 2})), text_reply("3"))
    run = ccx.run("-p", "add", "--mcp-config", config, "--allowedTools", "mcp__calc")
    assert run.returncode == 0, run.stderr
    assert len(log.read_text().split()) == 1  # started by the command line, taken by the session
    assert tool_results(ccx.api.requests[1]) == ['{"result":3}']


def test_a_server_started_early_that_the_settings_change_is_replaced(ccx: Ccx) -> None:
    # The managed policy's env (which wins over the environment) gives ${WHICH} another value:
    # the server started before the settings were read is not the one the session starts; it
    # is ended, and the session's own answers.
    log = ccx.repo.parent / "starts.log"
    ccx.env["WHICH"] = "-early"
    managed = ccx.config.parent / "managed-settings.json"
    managed.write_text(json.dumps({"env": {"WHICH": "-policy"}}))
    entry = logged_server(str(log), TEST_MCP_SECRET="${WHICH}")
    config = json.dumps({"mcpServers": {"calc": entry}})
    ccx.api.add(tool_reply(("mcp__calc__echo", {"text": "x"})), text_reply("done"))
    run = ccx.run("-p", "echo", "--mcp-config", config, "--allowedTools", "mcp__calc")
    assert run.returncode == 0, run.stderr
    assert tool_results(ccx.api.requests[1]) == ['{"result":"x-policy"}']
    early, _session = log.read_text().split()
    assert not running(early)


def running(pid: str) -> bool:
    """Whether the process runs (a zombie, dead and not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
