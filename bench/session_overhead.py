"""Harness overhead of a 51-step scripted session: `ccx -p` against the fake Messages API.

Per step, the overhead is the wall time outside the server: from the end of
one response to the start of the next request (stream parsing, tools, the
transcript, building and sending the request). Also reports the whole run's
wall time, which includes Python start-up and importing the SDK.

    .venv/bin/python bench/session_overhead.py [--runs 3] [--model claude-sonnet-5-5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.audit import ccx_args, make_repo, script, step_overheads
from tui.fake_api import FakeApi

PACKAGES = ("agent", "tools", "compaction", "tui")

CCX = str(Path(sys.executable).with_name("ccx"))
ROOT = Path(__file__).resolve().parent.parent


def user_environment() -> dict[str, str]:
    """The environment of a normal install: bytecode is cached (this sandbox turns that off)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CCX_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def precompile() -> None:
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *(str(ROOT / p) for p in PACKAGES)], check=True
    )


def run_once(model: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        paths = make_repo(root)
        with FakeApi(script(paths, root)) as api:
            env = dict(
                user_environment(),
                ANTHROPIC_BASE_URL=api.url,
                ANTHROPIC_API_KEY="bench",
                CCX_CONFIG_DIR=str(Path(tmp) / "config"),
                HOME=str(Path(tmp)),
            )
            started = time.perf_counter()
            proc = subprocess.run(
                [CCX, *ccx_args(model)], cwd=root, env=env, capture_output=True, text=True
            )
            wall = time.perf_counter() - started
            if proc.returncode != 0:
                raise SystemExit(f"ccx failed ({proc.returncode}): {proc.stderr[-2000:]}")
            result = json.loads(proc.stdout)
            assert result["num_turns"] == 51, result
            assert api.errors == [], api.errors
            gaps = step_overheads(api.requests)
            server = sum(r.server_seconds for r in api.requests)
            first_request = api.requests[0].received_at - started
    return {
        "wall_s": wall,
        "startup_to_first_request_s": first_request,
        "server_s": server,
        "median_step_overhead_ms": statistics.median(gaps) * 1000,
        "p95_step_overhead_ms": sorted(gaps)[int(len(gaps) * 0.95)] * 1000,
        "max_step_overhead_ms": max(gaps) * 1000,
        "steps": len(gaps) + 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model", default="claude-sonnet-5-5")
    args = parser.parse_args()
    precompile()
    runs = [run_once(args.model) for _ in range(args.runs)]
    summary = {key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0]}
    for index, run in enumerate(runs, start=1):
        print(f"run {index}: " + ", ".join(f"{k}={v:.3f}" for k, v in run.items()), file=sys.stderr)
    print(json.dumps({"runs": args.runs, "median_of_runs": summary}, indent=2))
    print(
        f"\nharness overhead per step: median {summary['median_step_overhead_ms']:.1f} ms (target <= 20 ms); "
        f"whole run {summary['wall_s']:.2f} s wall (Claude Code ~2.6 s)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
