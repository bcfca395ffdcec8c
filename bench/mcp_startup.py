"""What one stdio MCP server adds to a one-turn ``ccx -p``: medians of N runs each, alternating.

``python bench/mcp_startup.py [N]`` (default 5). Runs against ccx's fake
Messages API in a fresh repository; "with" approves the test MCP server
(tests/mcp/mcp_test_server.py, the mcp package's MCPServer) in
.claude/settings.local.json, so the run waits for it to connect (a -p run
needs its tools for its one prompt; interactive sessions never wait).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tui.fake_api import FakeApi, text_reply  # noqa: E402

SERVER = ROOT / "tests" / "mcp" / "mcp_test_server.py"
CCX = str(Path(sys.executable).with_name("ccx"))


def one_run(api: FakeApi, base: Path, with_server: bool) -> float:
    work = Path(tempfile.mkdtemp(dir=base))
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    if with_server:
        entry = {"command": sys.executable, "args": [str(SERVER)]}
        (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"calc": entry}}))
        (work / ".claude").mkdir()
        (work / ".claude" / "settings.local.json").write_text(
            json.dumps({"enableAllProjectMcpServers": True})
        )
    api.add(text_reply("ok"))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CCX_"))},
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-test",
        "HOME": str(base / "home"),
        "CCX_CONFIG_DIR": str(base / "ccx"),
        "CCX_SKIP_MODELS_API": "1",
    }
    started = time.perf_counter()
    proc = subprocess.run(
        [CCX, "-p", "hi"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    took = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"ccx failed: {proc.stderr[-500:]}")
    return took


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    times: dict[str, list[float]] = {"without": [], "with": []}
    with tempfile.TemporaryDirectory() as tmp, FakeApi() as api:
        base = Path(tmp)
        (base / "home").mkdir()
        for _ in range(runs):
            for label in ("without", "with"):
                times[label].append(one_run(api, base, label == "with"))
    medians = {k: round(statistics.median(v), 2) for k, v in times.items()}
    print(
        json.dumps(
            {
                "runs": runs,
                "median_s": medians,
                "added_s": round(medians["with"] - medians["without"], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
