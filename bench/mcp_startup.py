"""MCP start-up and request prefix, ccx beside Claude Code on the shared referee.

``source /work/shared/bench/peers.sh && python bench/mcp_startup.py [N]`` (default 3 runs of
each timing, the clients alternating). Every run is a one-prompt ``-p`` in a fresh
repository against the referee's fake API (``$BENCH_DIR/fakeapi.py``), HOME a fresh folder.
Three figures, each from runs of both clients:

* ``unresponsive``: what one server that never answers (``sleep``) adds to a run, configured
  in ``~/.claude.json`` (user scope): median wall time with it minus without it.
* ``three_servers``: the wall time of a run with three real servers from npm
  (@modelcontextprotocol/server-memory, -filesystem, -everything, installed by this script
  into ``~/.cache/ccx-mcp-servers``) passed with ``--mcp-config`` (both clients wait for
  those), and whether each client had all three servers' tools in its first request.
* ``prefix_50_tools``: with the test server (tests/mcp/mcp_test_server.py) giving 50 tools,
  the first request's tokens (the referee's count, 4 characters a token): the tools and the
  system prompt (the fixed prefix), and the whole request.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FAKEAPI = Path(os.environ.get("BENCH_DIR", "/work/shared/bench")) / "fakeapi.py"
SERVER = ROOT / "tests" / "mcp" / "mcp_test_server.py"
NPM_DIR = Path.home() / ".cache" / "ccx-mcp-servers"
NPM_SERVERS = ("server-memory", "server-filesystem", "server-everything")
MUTE = {"command": "sleep", "args": ["3600"]}
CCX = str(Path(sys.executable).with_name("ccx"))


def npm_servers(work: Path) -> dict[str, Any]:
    """The three real servers (installed once), as ``mcpServers`` entries."""
    bins = NPM_DIR / "node_modules" / ".bin"
    if not all((bins / f"mcp-{name}").exists() for name in NPM_SERVERS):
        NPM_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "init", "-y"], cwd=NPM_DIR, capture_output=True, check=True)
        packages = [f"@modelcontextprotocol/{name}" for name in NPM_SERVERS]
        subprocess.run(["npm", "install", "-s", *packages], cwd=NPM_DIR, check=True)
    return {
        "memory": {"command": str(bins / "mcp-server-memory")},
        "filesystem": {"command": str(bins / "mcp-server-filesystem"), "args": [str(work)]},
        "everything": {"command": str(bins / "mcp-server-everything")},
    }


def one_run(
    client: str, base: Path, user_servers: dict[str, Any], args: list[str]
) -> tuple[float, dict[str, Any]]:
    """One ``-p`` run: its wall time and the referee's log line of its first agent request."""
    work = Path(tempfile.mkdtemp(dir=base))
    repo, home = work / "repo", work / "home"
    repo.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    if user_servers:
        (home / ".claude.json").write_text(json.dumps({"mcpServers": user_servers}))
    scenario = work / "scenario.json"
    scenario.write_text(json.dumps({"task": "hi", "steps": [], "final": "Done."}))
    log = work / "log.jsonl"
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
            "CCX_CONFIG_DIR": str(work / "ccx"),
            "CCX_SKIP_MODELS_API": "1",
            "CCX_WARM": "0",
            "IS_SANDBOX": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        binary = os.environ["CLAUDE_BIN"] if client == "claude" else CCX
        command = [binary, "-p", "hi", "--output-format", "json", *args]
        if client == "claude":
            command.append("--dangerously-skip-permissions")
        started = time.perf_counter()
        proc = subprocess.run(
            command,
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        took = time.perf_counter() - started
    finally:
        api.terminate()
        api.wait(10)
    if proc.returncode != 0:
        raise SystemExit(f"{client} failed: {(proc.stdout + proc.stderr)[-800:]}")
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    main = [line for line in lines if line.get("kind") == "main"]
    return took, (main or lines)[0]


def medians(runs: int, base: Path, cases: dict[str, tuple[dict[str, Any], list[str]]]) -> dict:
    """Median wall time of each (client, case), the clients and cases alternating."""
    times: dict[str, list[float]] = {}
    for _ in range(runs):
        for client in ("ccx", "claude"):
            for label, (servers, args) in cases.items():
                took, _ = one_run(client, base, servers, args)
                times.setdefault(f"{client}/{label}", []).append(took)
    return {key: round(statistics.median(values), 2) for key, values in times.items()}


def prefix_tokens(line: dict[str, Any]) -> dict[str, int]:
    body = line["body"]

    def tokens(value: Any) -> int:
        return (len(json.dumps(value, ensure_ascii=False)) + 3) // 4

    sent = [t for t in body.get("tools") or [] if not t.get("defer_loading")]
    return {
        "tools": tokens(sent),
        "system": tokens(body.get("system")),
        "fixed_prefix": tokens(sent) + tokens(body.get("system")),
        "request": int(line["tokens"]),
    }


def servers_seen(line: dict[str, Any]) -> dict[str, bool]:
    """Whether the first request names each real server's tools (sent, or listed deferred)."""
    text = json.dumps(line["body"])
    return {name: f"mcp__{name}__" in text for name in ("memory", "filesystem", "everything")}


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if not os.environ.get("CLAUDE_BIN"):
        raise SystemExit("source /work/shared/bench/peers.sh first ($CLAUDE_BIN)")
    out: dict[str, Any] = {"runs": runs}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        mute = medians(runs, base, {"without": ({}, []), "with": ({"mute": MUTE}, [])})
        out["unresponsive"] = {
            "median_s": mute,
            "added_s": {
                c: round(mute[f"{c}/with"] - mute[f"{c}/without"], 2) for c in ("ccx", "claude")
            },
        }
        config = json.dumps({"mcpServers": npm_servers(base)})
        three = medians(runs, base, {"without": ({}, []), "three": ({}, ["--mcp-config", config])})
        seen = {c: servers_seen(one_run(c, base, {}, ["--mcp-config", config])[1]) for c in
                ("ccx", "claude")}  # fmt: skip
        out["three_servers"] = {
            "median_s": three,
            "ratio_ccx_to_claude": round(three["ccx/three"] / three["claude/three"], 2),
            "added_s": {
                c: round(three[f"{c}/three"] - three[f"{c}/without"], 2) for c in ("ccx", "claude")
            },
            "tools_in_first_request": seen,
        }
        names = json.dumps([f"tool_{i:02d}" for i in range(40)])  # and the server's own 10
        entry = {"command": sys.executable, "args": [str(SERVER)]}
        entry["env"] = {"TEST_MCP_TOOL_NAMES": names}
        fifty = json.dumps({"mcpServers": {"calc": entry}})
        out["prefix_50_tools"] = {
            c: prefix_tokens(one_run(c, base, {}, ["--mcp-config", fifty])[1])
            for c in ("ccx", "claude")
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
