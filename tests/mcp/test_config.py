"""Where servers are configured, ${VAR} expansion, and what a broken file does."""

from __future__ import annotations

import json
from pathlib import Path

from agent.mcp.config import expand, load_mcp_config


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_scopes_in_claude_codes_order_and_mcp_config_last(tmp_path: Path) -> None:
    home, project, ccx = tmp_path / "home", tmp_path / "project", tmp_path / "ccx"
    write(
        home / ".claude.json",
        {
            "mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b"}},
            "projects": {str(project): {"mcpServers": {"c": {"command": "local-c"}}}},
        },
    )
    write(ccx / "settings.json", {"mcpServers": {"d": {"command": "ccx-d"}}})
    write(
        project / ".mcp.json",
        {"mcpServers": {"b": {"command": "project-b"}, "c": {"command": "project-c"}}},
    )
    extra = write(
        tmp_path / "extra.json", {"mcpServers": {"e": {"type": "sse", "url": "http://h/sse"}}}
    )
    inline = json.dumps({"mcpServers": {"a": {"type": "http", "url": "http://h/mcp"}}})
    config = load_mcp_config(project, ccx, [str(extra), inline], env={}, home=home)
    got = {n: (s.scope, s.transport, s.command or s.url) for n, s in config.servers.items()}
    assert got == {
        "a": ("dynamic", "http", "http://h/mcp"),
        "b": ("project", "stdio", "project-b"),
        "c": ("local", "stdio", "local-c"),
        "d": ("user", "stdio", "ccx-d"),
        "e": ("dynamic", "sse", "http://h/sse"),
    }
    assert config.warnings == []


def test_variables_expand_in_every_string_with_defaults(tmp_path: Path) -> None:
    write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "s": {
                    "command": "${BIN}/server",
                    "args": ["--token=${TOKEN}", "${MODE:-fast}"],
                    "env": {"KEY": "${TOKEN}"},
                },
                "h": {
                    "type": "http",
                    "url": "${BASE}/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                },
                "m": {"command": "x", "args": ["${UNSET_ONE}", "${UNSET_TWO}"]},
            }
        },
    )
    env = {"BIN": "/opt", "TOKEN": "t0k", "BASE": "https://example"}
    servers = load_mcp_config(tmp_path, tmp_path / "ccx", env=env, home=tmp_path / "home").servers
    assert (servers["s"].command, servers["s"].args) == ("/opt/server", ["--token=t0k", "fast"])
    assert servers["s"].env == {"KEY": "t0k"} and servers["s"].error is None
    assert servers["h"].url == "https://example/mcp"
    assert servers["h"].headers == {"Authorization": "Bearer t0k"}
    assert servers["m"].error == "missing environment variables: UNSET_ONE, UNSET_TWO"


def test_expand_leaves_text_without_variables_alone() -> None:
    missing: list[str] = []
    assert expand("$HOME and ${} and $", {"HOME": "/h"}, missing) == "$HOME and ${} and $"
    assert missing == []


def test_broken_configuration_is_a_warning_or_a_failed_server(tmp_path: Path) -> None:
    write(tmp_path / "home" / ".claude.json", "{not json")
    write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "no-command": {"args": ["x"]},
                "odd": {"type": "websocket", "url": "ws://h"},
                "not-object": 3,
                "bad\nname": {"command": "x"},
                "odd name.ok": {"command": "x"},  # taken: its tools' names are made valid
            }
        },
    )
    config = load_mcp_config(
        tmp_path,
        tmp_path / "ccx",
        ["{oops", str(tmp_path / "missing.json")],
        env={},
        home=tmp_path / "home",
    )
    errors = {n: s.error for n, s in config.servers.items()}
    assert errors == {
        "no-command": "it needs a command (stdio) or a url (http, sse)",
        "odd": "unknown transport type 'websocket' (use stdio, http or sse)",
        "not-object": "its configuration is not an object",
        "odd name.ok": None,
    }
    assert len(config.warnings) == 4
    assert any(".claude.json: not valid JSON" in w for w in config.warnings)
    assert any("'bad\\nname' is empty or holds control characters" in w for w in config.warnings)
    assert any(w.startswith("--mcp-config: not valid JSON") for w in config.warnings)
    assert any("missing.json is not a file" in w for w in config.warnings)
