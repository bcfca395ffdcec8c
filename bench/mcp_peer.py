"""ccx and Claude Code on one .mcp.json: the tool names, schemas and instructions each sends.

``python bench/mcp_peer.py`` (after ``source /work/shared/bench/peers.sh``: $CLAUDE_BIN).
Both clients run headless in a fresh repository with the test MCP server
(tests/mcp/mcp_test_server.py) approved in .claude/settings.local.json, against
the shared referee's fake API (fakeapi.py) scripted to call ``mcp__calc__add`` and then answer.
Prints, per client: the MCP tools in the first request, where the server's
instructions appear, and the tool_result the second request carries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FAKEAPI = Path(os.environ.get("BENCH_DIR", "/work/shared/bench")) / "fakeapi.py"

SERVER = ROOT / "tests" / "mcp" / "mcp_test_server.py"
INSTRUCTIONS = "Use the add tool for arithmetic; it is exact."


def repo(base: Path) -> Path:
    work = base / "repo"
    (work / ".claude").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    entry = {"command": sys.executable, "args": [str(SERVER)]}
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"calc": entry}}))
    (work / ".claude" / "settings.local.json").write_text(
        json.dumps({"enableAllProjectMcpServers": True})
    )
    return work


def run(client: str, base: Path) -> dict[str, Any]:
    work = repo(base)
    home = base / "home"
    home.mkdir()
    scenario = base / "scenario.json"
    scenario.write_text(
        json.dumps(
            {
                "task": "add 20 and 22",
                "steps": [{"tool": "mcp__calc__add", "input": {"a": 20, "b": 22}}],
                "final": "42",
            }
        )
    )
    log = base / "requests.jsonl"
    api = subprocess.Popen(
        [sys.executable, str(FAKEAPI), str(scenario), "--log", str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(api.stdout.readline())  # type: ignore[union-attr]
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CCX_"))},
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": "sk-test",
            "HOME": str(home),
            "CCX_CONFIG_DIR": str(base / "ccx"),
            "CCX_SKIP_MODELS_API": "1",
            "IS_SANDBOX": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        binary = (
            os.environ["CLAUDE_BIN"]
            if client == "claude"
            else str(Path(sys.executable).with_name("ccx"))
        )
        args = [
            binary,
            "-p",
            "add 20 and 22",
            "--output-format",
            "json",
            "--allowedTools",
            "mcp__calc",
        ]
        proc = subprocess.run(
            args,
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    finally:
        api.terminate()
        api.wait(10)
    bodies = [json.loads(line)["body"] for line in log.read_text().splitlines() if line.strip()]
    agent = [b for b in bodies if b.get("tools") and "mcp__calc__add" in json.dumps(b)]
    return summarize(client, proc, agent)


def summarize(client: str, proc: subprocess.CompletedProcess[str], requests: list[Any]) -> dict:
    out: dict[str, Any] = {"client": client, "exit": proc.returncode}
    if not requests:
        out["error"] = (proc.stdout + proc.stderr)[-800:]
        return out
    first = requests[0]
    tools = [t for t in first["tools"] if t["name"].startswith("mcp__")]
    out["mcp_tools"] = [t["name"] for t in tools]
    # Claude Code may defer MCP tools behind ToolSearch: named in the context, schemas not sent.
    out["mcp_tools_deferred"] = not tools and "deferred tools" in json.dumps(first)
    out["add_tool"] = next((t for t in tools if t["name"] == "mcp__calc__add"), None)
    out["instructions_in_system"] = INSTRUCTIONS in json.dumps(first.get("system"))
    out["instructions_in_messages"] = sum(
        json.dumps(m).count(INSTRUCTIONS) for m in first["messages"]
    )
    for message in first["messages"]:
        text = json.dumps(message)
        if INSTRUCTIONS in text:
            at = text.index(INSTRUCTIONS)
            out["instructions_message_role"] = message["role"]
            out["instructions_context"] = text[max(0, at - 160) : at + 60]
    if len(requests) > 1:
        out["tool_result"] = [
            b
            for m in requests[1]["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
    return out


def main() -> None:
    for client in ("ccx", "claude"):
        with tempfile.TemporaryDirectory() as base:
            print(json.dumps(run(client, Path(base))))


if __name__ == "__main__":
    main()
