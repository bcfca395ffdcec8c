"""MCP servers in a session: approval, the question, permission rules, /mcp, tools appearing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import Event, Notice
from agent.mcp.status import init_entries
from tests.fake_env import use_fake_api
from tests.mcp.servers import stdio_entry
from tui.commands import builtin as commands
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions
from tui.session.runtime import Runtime


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        # These tests are about approval and rules, not how long -p waits for a server.
        monkeypatch.setenv("CCX_MCP_PRINT_WAIT_MS", "60000")
        yield server


def project_servers(repo: Path, settings: dict[str, Any] | None = None, **entries: Any) -> None:
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": entries}))
    if settings is not None:
        (repo / ".claude").mkdir(exist_ok=True)
        (repo / ".claude" / "settings.local.json").write_text(json.dumps(settings))


def local_settings(repo: Path) -> dict[str, Any]:
    return json.loads((repo / ".claude" / "settings.local.json").read_text())


async def started(repo: Path, events: list[Event], **kwargs: Any) -> Runtime:
    headless = kwargs.pop("headless", True)
    trusted = kwargs.pop("project_trusted", True)
    options = RunOptions(
        cwd=repo, watch_files=False, headless=headless, project_trusted=trusted, **kwargs
    )
    runtime = assemble_runtime(options, events.append)
    await runtime.start()
    return runtime


def states(runtime: Runtime) -> dict[str, str]:
    return {s.name: s.state for s in runtime.mcp.status()}


def tool_names(runtime: Runtime) -> list[str]:
    """The tools the model has at the next turn boundary (where MCP tools join or leave)."""
    runtime.mcp_tools.turn_started()
    return [tool.name for tool in runtime.tools]


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (None, "pending approval"),
        ({"enableAllProjectMcpServers": True}, "connected"),
        ({"enabledMcpjsonServers": ["calc"]}, "connected"),
        ({"enableAllProjectMcpServers": True, "disabledMcpjsonServers": ["calc"]}, "disabled"),
    ],
)
async def test_project_servers_start_only_when_the_settings_approve_them(
    api: FakeApi, repo: Path, settings: dict[str, Any] | None, expected: str
) -> None:
    project_servers(repo, settings, calc=stdio_entry())
    events: list[Event] = []
    runtime = await started(repo, events)
    try:
        assert states(runtime) == {"calc": expected}
        assert ("mcp__calc__add" in tool_names(runtime)) == (expected == "connected")
        if expected == "pending approval":
            assert any("not approved" in n.text for n in events if isinstance(n, Notice))
    finally:
        await runtime.aclose()


async def test_an_untrusted_folder_never_starts_its_servers(api: FakeApi, repo: Path) -> None:
    # Trust is what the interactive front ends ask; the project's own settings cannot grant it.
    project_servers(repo, {"enableAllProjectMcpServers": True}, calc=stdio_entry())
    runtime = await started(repo, [], project_trusted=False)
    try:
        assert states(runtime) == {"calc": "not trusted"}
        assert runtime.mcp.connections == {}
    finally:
        await runtime.aclose()


@pytest.mark.parametrize(("answer", "expected"), [("allow", "connected"), ("deny", "disabled")])
async def test_an_interactive_session_asks_once_and_remembers(
    api: FakeApi, repo: Path, answer: str, expected: str
) -> None:
    project_servers(repo, calc=stdio_entry())
    asked: list[str] = []

    async def ask(request: Any) -> str:
        asked.append(request.tool_name)
        return answer

    options = RunOptions(cwd=repo, watch_files=False, headless=False)
    for _ in range(2):
        runtime = assemble_runtime(options, lambda _e: None, ask=ask)
        await runtime.start()
        try:
            assert all([await question is None for question in runtime.mcp_questions])
            await runtime.mcp.wait(30)
            assert states(runtime) == {"calc": expected}
        finally:
            await runtime.aclose()
    assert asked == ["MCP server calc"]  # the second session read the saved answer
    key = "enabledMcpjsonServers" if answer == "allow" else "disabledMcpjsonServers"
    assert local_settings(repo)[key] == ["calc"]


async def test_interactive_start_does_not_wait_for_a_server(api: FakeApi, repo: Path) -> None:
    project_servers(repo, {"enableAllProjectMcpServers": True}, calc=stdio_entry())
    runtime = await started(repo, [], headless=False)
    try:
        assert states(runtime) == {"calc": "connecting"}
        assert "pending" in (await commands.run_command(runtime, "/mcp")).text
        assert not any(name.startswith("mcp__") for name in tool_names(runtime))
        await runtime.mcp.wait(30)
        assert not any(t.name.startswith("mcp__") for t in runtime.tools)  # not mid-turn
        assert "mcp__calc__add" in tool_names(runtime)  # the next turn has them
    finally:
        await runtime.aclose()


@pytest.mark.parametrize(
    ("flags", "allowed"),
    [
        ({}, False),
        ({"allowed_tools": ["mcp__calc"]}, True),
        ({"allowed_tools": ["mcp__calc__*"]}, True),
        ({"allowed_tools": ["mcp__calc__add"]}, True),
        ({"allowed_tools": ["mcp__calc__echo"]}, False),
        ({"allowed_tools": ["mcp__calcx"]}, False),
        ({"allowed_tools": ["mcp__calc"], "disallowed_tools": ["mcp__calc__add"]}, False),
    ],
)
async def test_mcp_tools_ask_by_default_and_follow_mcp_rules(
    api: FakeApi, repo: Path, flags: dict[str, list[str]], allowed: bool
) -> None:
    api.add(tool_reply(("mcp__calc__add", {"a": 2, "b": 3})), text_reply("done"))
    config = json.dumps({"mcpServers": {"calc": stdio_entry()}})
    runtime = await started(repo, [], mcp_config=[config], **flags)
    try:
        await runtime.agent.submit("add")
        result = next(
            block
            for message in api.requests[1].messages
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        )
        assert (result["content"] == '{"result":5}') == allowed, result
        if not allowed:
            assert result["is_error"] and "mcp__calc__add" in json.dumps(result)
    finally:
        await runtime.aclose()


async def test_the_mcp_command_shows_states_and_approves(api: FakeApi, repo: Path) -> None:
    project_servers(
        repo,
        calc=stdio_entry(),
        broken={"type": "http", "url": "http://127.0.0.1:9/mcp?key=${NO_SUCH_VAR_FOR_TEST}"},
    )
    runtime = await started(repo, [])
    try:
        shown = (await commands.run_command(runtime, "/mcp")).text
        assert "calc  (stdio, project)  pending approval" in shown
        assert init_entries(runtime.mcp.status()) == [
            {"name": "calc", "status": "disabled", "source": "project"},
            {"name": "broken", "status": "failed", "source": "project"},
        ]
        assert "broken  (http, project)  failed: missing environment variables: " in shown
        assert "NO_SUCH_VAR_FOR_TEST" in shown
        reply = await commands.run_command(runtime, "/mcp enable calc")
        assert "approved" in reply.text and local_settings(repo)["enabledMcpjsonServers"] == [
            "calc"
        ]
        await runtime.mcp.wait(30)
        shown = (await commands.run_command(runtime, "/mcp")).text
        assert "calc  (stdio, project)  connected" in shown and "  mcp__calc__add" in shown
        assert init_entries(runtime.mcp.status())[0]["status"] == "connected"
        bad = await commands.run_command(runtime, "/mcp enable nosuch")
        assert bad.is_error and "calc" in bad.text
        assert "mcp__calc__add" in tool_names(runtime)
        await commands.run_command(runtime, "/mcp disable calc")
        await asyncio.sleep(0)
        assert "mcp__calc__add" not in tool_names(runtime)
    finally:
        await runtime.aclose()
