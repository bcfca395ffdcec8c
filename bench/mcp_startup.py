"""MCP start-up and request prefix, ccx beside Claude Code on the shared referee.

``source /work/shared/bench/peers.sh && python bench/mcp_startup.py [N]`` (default 3 rounds
of each timing, the clients and the cases alternating: ``timings``). Every run is a one-prompt
``-p`` in a fresh repository against the referee's fake API (``$BENCH_DIR/fakeapi.py``), HOME
a fresh folder, ccx in-process (``CCX_WARM=0``). Three figures, each from runs of both
clients:

* ``unresponsive``: what one server that never answers (``sleep``) adds to a run, configured
  in ``~/.claude.json`` (user scope): what it adds to a run (as below).
* ``three_servers``: the wall time of a run with three real servers from npm
  (@modelcontextprotocol/server-memory, -filesystem, -everything, installed by this script
  into ``~/.cache/ccx-mcp-servers``) passed with ``--mcp-config`` (both clients wait for
  those), what the servers add to a run (``added_s``: the difference of the medians;
  ``added_paired_s``: the median of each round's difference), the ratios ccx / Claude
  Code of those, and whether each client had all three servers' tools in its first request.
* ``prefix_50_tools``: with the test server (tests/mcp/mcp_test_server.py) giving 50 tools,
  the first request's tokens (the referee's count, 4 characters a token): the tools and the
  system prompt (the fixed prefix), and the whole request.

Every timing comes with its spread (``spread_s``: min, quartiles, max): the machine is
shared, and one figure from a few runs can be far off. ``load_before`` / ``load_after``:
the 1-minute load average around the runs.
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


def timings(runs: int, base: Path, cases: dict[str, tuple[dict[str, Any], list[str]]]) -> dict:
    """Each (client, case)'s wall times, and what the second case adds to the first.

    A round runs every case of both clients back to back; the clients' order, and the cases'
    order, alternate from round to round, so a burst of load on the shared machine falls on
    both sides. What the second case adds is taken per round (its time minus the first's,
    the same client, seconds apart) and its median given, beside the difference of the two
    medians; each figure with its spread (min, quartiles, max)."""
    times: dict[str, list[float]] = {}
    added: dict[str, list[float]] = {}
    first, second = list(cases)
    for index in range(runs):
        clients = ("ccx", "claude") if index % 2 == 0 else ("claude", "ccx")
        order = [first, second] if index % 2 == 0 else [second, first]
        for client in clients:
            took = {}
            for label in order:
                servers, args = cases[label]
                took[label], _ = one_run(client, base, servers, args)
                times.setdefault(f"{client}/{label}", []).append(took[label])
            added.setdefault(client, []).append(took[second] - took[first])
    median = {key: round(statistics.median(values), 2) for key, values in times.items()}
    return {
        "median_s": median,
        "spread_s": {key: spread(values) for key, values in times.items()},
        "added_s": {c: round(median[f"{c}/{second}"] - median[f"{c}/{first}"], 2) for c in added},
        "added_paired_s": {c: round(statistics.median(values), 2) for c, values in added.items()},
        "added_paired_spread_s": {c: spread(values) for c, values in added.items()},
    }


def spread(values: list[float]) -> list[float]:
    """Min, lower quartile, median, upper quartile, max."""
    if len(values) < 2:
        return [round(v, 2) for v in values * 5]
    q1, q2, q3 = statistics.quantiles(values, n=4)
    return [round(v, 2) for v in (min(values), q1, q2, q3, max(values))]


def ratio(ccx: float, claude: float) -> float | None:
    return round(ccx / claude, 2) if claude > 0 else None


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
    out: dict[str, Any] = {"runs": runs, "load_before": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        mute = timings(runs, base, {"without": ({}, []), "with": ({"mute": MUTE}, [])})
        out["unresponsive"] = mute
        config = json.dumps({"mcpServers": npm_servers(base)})
        three = timings(runs, base, {"without": ({}, []), "three": ({}, ["--mcp-config", config])})
        seen = {c: servers_seen(one_run(c, base, {}, ["--mcp-config", config])[1]) for c in
                ("ccx", "claude")}  # fmt: skip
        median, added, paired = three["median_s"], three["added_s"], three["added_paired_s"]
        out["three_servers"] = {
            **three,
            "ratio_ccx_to_claude": ratio(median["ccx/three"], median["claude/three"]),
            "added_ratio_ccx_to_claude": ratio(added["ccx"], added["claude"]),
            "added_paired_ratio_ccx_to_claude": ratio(paired["ccx"], paired["claude"]),
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
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
