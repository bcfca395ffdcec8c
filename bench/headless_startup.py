"""One-turn `ccx -p` against Claude Code's, side by side on the shared fake API.

.venv/bin/python bench/headless_startup.py [--runs 10] [--first-runs 3] [--claude PATH] [--cold]

Both clients answer the same one-turn prompt (one text reply, no tools) from
one scripted server (/work/shared/bench/fakeapi.py), alternating ccx and
Claude Code run by run, each from a fresh HOME; prints the wall times, their
medians and the ratio ccx / Claude Code as one JSON line.
Target (issue 12): ratio <= 1.5. $CLAUDE_BIN or --claude names Claude Code
(`source /work/shared/bench/peers.sh` installs it).

By default ccx runs as installed: headless runs use the warm worker
(agent/app/warm.py), in a TMPDIR of the benchmark's own, so the first ccx run
finds none, runs in-process and starts one; its time is ccx_first_s, kept
out of the median, and nothing waits for the worker before the timed runs.
Before that, --first-runs pairs of a cold run (CCX_WARM=0) and a first run
(a fresh TMPDIR: no worker) measure what starting the worker costs the run
that starts it (first_run_overhead_s; each worker is stopped before the
next pair). --cold forces CCX_WARM=0 for every ccx run. Workers started here
are stopped at the end.
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

ROOT = Path(__file__).resolve().parent.parent
CCX = str(Path(sys.executable).with_name("ccx"))
FAKE_API = Path(os.environ.get("CCX_SHARED_BENCH", "/work/shared/bench")) / "fakeapi.py"
TARGET_RATIO = 1.5
PROMPT = "Say hello."


def start_server(work: Path) -> tuple[subprocess.Popen[bytes], str]:
    scenario = work / "scenario.json"
    scenario.write_text(json.dumps({"task": PROMPT, "steps": [], "final": "Hello."}))
    port_file = work / "port.txt"
    with open(port_file, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, str(FAKE_API), str(scenario), "--log", str(work / "api.log")],
            stdout=out,
            stderr=subprocess.DEVNULL,
        )
    deadline = time.time() + 10
    while not port_file.read_text().strip():
        if time.time() > deadline:
            server.kill()
            raise SystemExit("the fake API did not start")
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port_file.read_text().strip()}"


def one_run(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - started
    if proc.returncode != 0 or "Hello." not in proc.stdout:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr[-400:]}")
    return wall


def clients(
    claude: str, url: str, work: Path, index: int, warm: dict[str, str]
) -> dict[str, tuple[list[str], dict]]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CCX_"))}
    base |= {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-test"}
    home = work / f"home{index}"
    home.mkdir()
    ccx_env = base | {"HOME": str(home), "CCX_CONFIG_DIR": str(home / ".ccx")} | warm
    claude_env = base | {
        "HOME": str(home),
        "IS_SANDBOX": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    flags = ["--output-format", "json", "--permission-mode", "bypassPermissions"]
    return {
        "ccx": ([CCX, "-p", PROMPT, *flags], ccx_env),
        "claude": ([claude, "-p", PROMPT, *flags], claude_env),
    }


def wait_for_worker(tmp: Path) -> None:
    deadline = time.time() + 60
    while not list(tmp.glob("ccx-warm-*/*.sock")):
        if time.time() > deadline:
            raise SystemExit("the warm worker did not start")
        time.sleep(0.1)


def stop_worker(tmp: Path) -> None:
    import signal
    import socket
    import struct

    for path in tmp.glob("ccx-warm-*/*.sock"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(path))
                creds = probe.getsockopt(
                    socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
                )
                os.kill(struct.unpack("3i", creds)[0], signal.SIGTERM)
            except OSError:
                continue


def first_runs(claude: str, url: str, work: Path, repo: Path, count: int) -> dict[str, object]:
    """Pairs of a cold run and a run that finds no worker and starts one."""
    cold, first = [], []
    for index in range(count):
        argv, env = clients(claude, url, work, 1000 + 2 * index, {"CCX_WARM": "0"})["ccx"]
        cold.append(one_run(argv, env, repo))
        tmp = work / f"first{index}"
        tmp.mkdir()
        argv, env = clients(claude, url, work, 1001 + 2 * index, worker_env(tmp))["ccx"]
        first.append(one_run(argv, env, repo))
        wait_for_worker(tmp)  # let it finish its imports off the clock, then stop it
        stop_worker(tmp)
        time.sleep(0.5)
    return {
        "first_run_median_s": round(statistics.median(first), 3),
        "first_run_cold_median_s": round(statistics.median(cold), 3),
        "first_run_overhead_s": round(statistics.median(first) - statistics.median(cold), 3),
        "first_runs_s": [round(t, 3) for t in first],
        "first_run_colds_s": [round(t, 3) for t in cold],
    }


def worker_env(tmp: Path) -> dict[str, str]:
    return {"TMPDIR": str(tmp), "CCX_WARM_IDLE_S": "300"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--first-runs", type=int, default=3, help="cold / first-run pairs")
    parser.add_argument("--claude", default=os.environ.get("CLAUDE_BIN", ""))
    parser.add_argument("--cold", action="store_true", help="ccx with CCX_WARM=0")
    args = parser.parse_args()
    if not args.claude:
        raise SystemExit("no Claude Code: source /work/shared/bench/peers.sh or pass --claude")
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        work = Path(tmp)
        repo = work / "repo"
        repo.mkdir()
        (repo / "README.md").write_text("a repo\n")
        (work / "main").mkdir()
        server, url = start_server(work)
        extra = {"CCX_WARM": "0"} if args.cold else worker_env(work / "main")
        times: dict[str, list[float]] = {"ccx": [], "claude": []}
        report: dict[str, object] = {}
        try:
            if not args.cold:
                report |= first_runs(args.claude, url, work, repo, args.first_runs)
                argv, env = clients(args.claude, url, work, -1, extra)["ccx"]
                report["ccx_first_s"] = round(one_run(argv, env, repo), 3)
            for index in range(args.runs):
                for name, (argv, env) in clients(args.claude, url, work, index, extra).items():
                    times[name].append(one_run(argv, env, repo))
        finally:
            server.kill()
            for folder in work.glob("*"):
                stop_worker(folder)
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["ccx"] / medians["claude"]
    print(
        json.dumps(
            {
                "runs": args.runs,
                "mode": "cold" if args.cold else "default (warm worker)",
                "ccx_median_s": round(medians["ccx"], 3),
                "claude_median_s": round(medians["claude"], 3),
                "ratio": round(ratio, 2),
                "target_ratio": TARGET_RATIO,
                "met": ratio <= TARGET_RATIO,
                **report,
                "ccx_s": [round(t, 3) for t in times["ccx"]],
                "claude_s": [round(t, 3) for t in times["claude"]],
            }
        )
    )


if __name__ == "__main__":
    main()
