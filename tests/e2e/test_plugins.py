"""Plugins through the real `ccx` command: `--plugin-dir`, `enabledPlugins` with a local
marketplace, `/plugin` to list, enable and disable, and a project's plugins held back in a
folder that is not trusted (judged by side effect)."""

from __future__ import annotations

import json
from pathlib import Path

from agent.permissions import trust
from tests.e2e.conftest import Ccx
from tests.e2e.subagent_helpers import briefed, result_text, system_text, tool_results
from tests.plugin_files import write_marketplace, write_plugin
from tui.fake_api import text_reply, tool_reply


def user_text(request: object) -> str:
    return json.dumps(request.messages)  # type: ignore[attr-defined]


def test_a_plugin_dir_brings_its_command_agent_skill_hook_and_server(
    ccx: Ccx, tmp_path: Path
) -> None:
    marker = tmp_path / "hook-ran"
    plugin = write_plugin(tmp_path / "demo", hook_marker=marker)
    ccx.env["CCX_MCP_PRINT_WAIT_MS"] = "60000"
    ccx.env["ENABLE_TOOL_SEARCH"] = "false"
    ccx.api.on(briefed("Review the change"), text_reply("No bugs found."))
    ccx.api.add(
        tool_reply(("mcp__plugin_demo_tools__echo", {"text": "hi"})),
        tool_reply(("Skill", {"skill": "demo:tidy"})),
        tool_reply(
            ("Agent", {"description": "review", "prompt": "Review the change",
                       "subagent_type": "demo:reviewer"})
        ),
        text_reply("Greeted Bob."),
    )  # fmt: skip
    run = ccx.run(
        "-p", "/demo:greet Bob", "--plugin-dir", str(plugin), "--output-format", "stream-json",
        "--verbose", "--allowedTools", "mcp__plugin_demo_tools",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    init = run.events()[0]
    assert init["subtype"] == "init"
    root = str(plugin.resolve())
    assert init["plugins"] == [
        {"name": "demo", "path": root, "source": "demo@inline", "version": "1.2.0"}
    ]
    assert {"demo:greet", "demo:ops:deploy", "demo:tidy"} <= set(init["slash_commands"])
    assert "demo:reviewer" in init["agents"] and "demo:tidy" in init["skills"]
    server = {"name": "plugin:demo:tools", "status": "connected", "source": "plugin"}
    assert server in init["mcp_servers"]
    main = [r for r in ccx.api.requests if "Review the change" not in user_text(r)[:400]]
    first = main[0]
    # the command's body, with ${CLAUDE_PLUGIN_ROOT} made the plugin's folder
    assert f"Greet Bob warmly. Helpers live in {root}/bin." in user_text(first)
    assert "<command-name>/demo:greet</command-name>" in user_text(first)
    assert "demo:tidy: Tidies a folder" in system_text(first) + user_text(first)
    assert "mcp__plugin_demo_tools__echo" in [t["name"] for t in first.body["tools"]]
    # the server's answer, the skill's body, the agent's report
    assert result_text(tool_results(main[1])[0]) == '{"result":"hi"}'
    assert f"Tidy the folder with {root}/bin/tidy." in result_text(tool_results(main[2])[0])
    sub = next(r for r in ccx.api.requests if "Review the change" in user_text(r)[:400])
    assert "You review changes. Report bugs only." in system_text(sub)
    assert sorted(t["name"] for t in sub.body["tools"]) == ["Grep", "Read"]
    assert "No bugs found." in result_text(tool_results(main[3])[0])
    # the hook ran with the root both expanded and in its environment
    assert marker.read_text().split() == [root, root]


def test_a_broken_plugin_is_named_and_skipped(ccx: Ccx, tmp_path: Path) -> None:
    good = write_plugin(tmp_path / "good", name="good", server=False)
    broken = tmp_path / "broken"
    (broken / ".claude-plugin").mkdir(parents=True)
    (broken / ".claude-plugin" / "plugin.json").write_text('{"name": "broken",')
    ccx.api.add(text_reply("ok"))
    run = ccx.run("-p", "/good:greet Ann", "--plugin-dir", str(broken), "--plugin-dir", str(good))
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"Plugin {broken.resolve()}: .claude-plugin/plugin.json is not valid JSON" in run.stderr
    assert "Traceback" not in run.stderr
    assert "Greet Ann warmly." in user_text(ccx.api.requests[0])


def marketplace(tmp_path: Path, home: Path) -> Path:
    """A local marketplace with the demo plugin, declared in the user's Claude settings."""
    market = write_marketplace(tmp_path / "market", "team", {"demo": "./plugins/demo"})
    write_plugin(market / "plugins" / "demo", server=False)
    return market


def test_plugin_command_lists_enables_and_disables(ccx: Ccx, tmp_path: Path) -> None:
    market = marketplace(tmp_path, ccx.config)
    add = ccx.run("-p", f"/plugin marketplace add {market}")
    assert add.returncode == 0, add.stderr[-3000:]
    assert "team" in add.stdout
    settings = ccx.config / "settings.json"
    declared = json.loads(settings.read_text())["extraKnownMarketplaces"]
    assert declared == {"team": {"source": {"source": "directory", "path": str(market)}}}
    listed = ccx.run("-p", "/plugin")
    assert "demo@team" in listed.stdout and "not installed" in listed.stdout
    enable = ccx.run("-p", "/plugin enable demo@team")
    assert enable.returncode == 0, enable.stderr
    assert json.loads(settings.read_text())["enabledPlugins"] == {"demo@team": True}
    ccx.api.add(text_reply("ok"))
    used = ccx.run("-p", "/demo:greet Zoe")
    assert used.returncode == 0, used.stderr[-3000:]
    assert "Greet Zoe warmly." in user_text(ccx.api.requests[-1])
    disable = ccx.run("-p", "/plugin disable demo@team")
    assert disable.returncode == 0, disable.stderr
    assert json.loads(settings.read_text())["enabledPlugins"] == {"demo@team": False}
    gone = ccx.run("-p", "/demo:greet Zoe")
    assert gone.returncode == 1 and "Unknown command /demo:greet" in gone.stderr
    assert "disabled" in ccx.run("-p", "/plugin list").stdout
    bad = ccx.run("-p", "/plugin enable nothing@team")
    assert bad.returncode == 1 and "nothing" in bad.stderr


# -- a project's plugins in a folder that is not trusted ---------------------------------


def hostile_project(ccx: Ccx, tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose settings declare its own marketplace and enable a plugin whose
    hook and MCP server each touch a marker; returns the two markers."""
    hook_marker, server_marker = ccx.repo / "PWN_hook", ccx.repo / "PWN_server"
    market = write_marketplace(ccx.repo / "tools" / "market", "repo", {"evil": "./evil"})
    write_plugin(market / "evil", name="evil", hook_marker=hook_marker, server_marker=server_marker)
    settings = {
        "extraKnownMarketplaces": {
            "repo": {"source": {"source": "directory", "path": "./tools/market"}}
        },
        "enabledPlugins": {"evil@repo": True},
    }
    (ccx.repo / ".claude").mkdir(exist_ok=True)
    (ccx.repo / ".claude" / "settings.json").write_text(json.dumps(settings))
    ccx.env["CCX_MCP_PRINT_WAIT_MS"] = "60000"
    return hook_marker, server_marker


def test_an_untrusted_project_gets_no_plugin_hook_or_server(ccx: Ccx, tmp_path: Path) -> None:
    hook_marker, server_marker = hostile_project(ccx, tmp_path)
    ccx.api.add(text_reply("Hello."))
    run = ccx.run("--plain", stdin="hello\n")  # piped: the trust question cannot be asked
    assert run.returncode == 0, run.stderr[-3000:]
    assert len(ccx.api.requests) == 1, "the prompt never reached the model"
    assert not hook_marker.exists(), "the project's plugin hook ran in an untrusted folder"
    assert not server_marker.exists(), "the project's plugin server started untrusted"
    assert "evil" not in json.dumps(ccx.api.requests[0].body["tools"])
    # what the trust question it could not ask would have turned on names the plugin
    assert "plugins with their hooks and servers (evil@repo)" in run.stdout


def test_the_same_project_plugin_is_live_once_trusted(ccx: Ccx, tmp_path: Path) -> None:
    hook_marker, server_marker = hostile_project(ccx, tmp_path)
    trust.trust(ccx.repo, ccx.config)
    ccx.api.add(text_reply("Hello."))
    run = ccx.run("--plain", stdin="hello\n")
    assert run.returncode == 0, run.stderr[-3000:]
    assert hook_marker.exists(), "the attack is not live: the untrusted test proves nothing"
    assert server_marker.exists()


def test_the_agent_sdks_plugins_option_loads_the_plugin(ccx: Ccx, tmp_path: Path) -> None:
    import asyncio

    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, SystemMessage, query

    from tests.e2e.conftest import CCX

    plugin = write_plugin(tmp_path / "demo", server=False)
    ccx.api.add(text_reply("Hello, Ada!"))
    options = ClaudeAgentOptions(
        cli_path=CCX,
        cwd=str(ccx.repo),
        env=dict(ccx.env),
        plugins=[{"type": "local", "path": str(plugin)}],
    )

    async def collect() -> list[object]:
        return [m async for m in query(prompt="/demo:greet Ada", options=options)]

    messages = asyncio.run(collect())
    init = messages[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert [p["name"] for p in init.data["plugins"]] == ["demo"]
    assert "demo:greet" in init.data["slash_commands"]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.result == "Hello, Ada!"
    assert "Greet Ada warmly." in user_text(ccx.api.requests[0])
