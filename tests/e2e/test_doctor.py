"""`ccx doctor`: a real command (never a prompt to the model) that reports what this folder
would run with, and starts nothing of the project's while it looks."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.e2e.conftest import CCX


def _doctor(repo: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CCX_", "CLAUDE"))
    }
    base.update(HOME=str(tmp_path / "home"), CCX_CONFIG_DIR=str(tmp_path / "config"), **env)
    return subprocess.run(
        [CCX, "doctor"], cwd=repo, env=base, capture_output=True, text=True, timeout=60
    )


def test_doctor_reports_without_running_anything_of_the_project(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "model": "sonnet",
                "hooks": {
                    "SessionStart": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]
                },
                "statusLine": {"type": "command", "command": f"touch {marker}"},
            }
        )
    )
    server = {"command": "sh", "args": ["-c", f"touch {marker}"]}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"local-tools": server}}))

    run = _doctor(repo, tmp_path, ANTHROPIC_API_KEY="sk-test")

    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert any(line.startswith("✓ key") for line in lines)
    assert any("not trusted yet" in line for line in lines)
    assert any("only harmless keys" in line and "settings.json" in line for line in lines)
    assert any(
        line.startswith("✓ model") and "claude-sonnet-5-5 (as 'sonnet')" in line for line in lines
    )
    assert any(
        line.startswith("✓ mcp") and "local-tools (project, stdio)" in line for line in lines
    )
    for topic in ("sandbox", "grep", "warm worker", "terminal"):
        assert any(line[2:].startswith(topic) for line in lines), topic
    assert not marker.exists()  # no hook, status line or MCP server was started


def test_doctor_without_a_key_says_so_and_fails(repo: Path, tmp_path: Path) -> None:
    run = _doctor(repo, tmp_path)
    assert run.returncode == 1
    (key,) = [line for line in run.stdout.splitlines() if line[2:].startswith("key")]
    assert key.startswith("✗") and "no API credentials" in key


def test_doctor_names_the_enabled_plugins_and_starts_none(repo: Path, tmp_path: Path) -> None:
    from tests.plugin_files import write_marketplace, write_plugin

    marker = tmp_path / "server-started"
    market = write_marketplace(tmp_path / "market", "team", {"demo": "./plugins/demo"})
    write_plugin(market / "plugins" / "demo", server_marker=marker)
    claude = tmp_path / "home" / ".claude"
    claude.mkdir(parents=True)
    source = {"source": {"source": "directory", "path": str(market)}}
    (claude / "settings.json").write_text(
        json.dumps(
            {
                "extraKnownMarketplaces": {"team": source},
                "enabledPlugins": {"demo@team": True, "gone@team": True},
            }
        )
    )

    run = _doctor(repo, tmp_path, ANTHROPIC_API_KEY="sk-test")

    lines = run.stdout.splitlines()
    assert any(
        line.startswith("✓ plugins") and "demo@team" in line and "MCP servers: tools" in line
        for line in lines
    ), run.stdout
    assert any(line[2:].startswith("plugins") and "gone" in line for line in lines), run.stdout
    assert not marker.exists()
