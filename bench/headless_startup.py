"""One-turn `ccx -p`, warm and cold, against Claude Code's, side by side on the shared fake API.

.venv/bin/python bench/headless_startup.py [--runs 10] [--first-runs 3] [--claude PATH]

The clients answer the same one-turn prompt (one text reply, no tools) from
one scripted server (/work/shared/bench/fakeapi.py), round by round in turn:
ccx as installed (the default: headless runs go through the warm worker,
tui/warm/policy.py), ccx cold (CCX_WARM=0: every run imports everything) and
Claude Code, each run from a fresh HOME. Prints the wall times, their medians
and the ratios ccx / Claude Code as one JSON line. Target (issue 17): the
default's ratio <= 1.5. $CLAUDE_BIN or --claude names Claude Code
(`source /work/shared/bench/peers.sh` installs it).

The warm worker's socket lives in $XDG_RUNTIME_DIR/ccx-warm (a private folder
outside the temp folders) or ~/.ccx/run; the runs here each have their own
HOME, so they share an XDG_RUNTIME_DIR of the benchmark's own under
~/.cache, as a user's runs share /run/user/UID. The first warm run finds no
worker, runs in-process and starts one: its time is ccx_first_s, kept out of
the median, and nothing waits for the worker before the timed rounds (a run
that comes while it imports waits for it). Before that, --first-runs pairs
of a cold run and a first run (a fresh runtime folder: no worker) measure
what starting the worker costs the run that starts it (first_run_overhead_s;
each worker is stopped before the next pair). Workers started here are
stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import struct
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
CLIENTS = ("ccx", "ccx_cold", "claude")


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
    claude: str, url: str, work: Path, index: int, runtime: Path
) -> dict[str, tuple[list[str], dict[str, str]]]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CCX_"))}
    base |= {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-test"}
    home = work / f"home{index}"
    home.mkdir()
    ccx_env = base | {"HOME": str(home), "CCX_CONFIG_DIR": str(home / ".ccx")}
    claude_env = base | {
        "HOME": str(home),
        "IS_SANDBOX": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    flags = ["--output-format", "json", "--permission-mode", "bypassPermissions"]
    return {
        "ccx": ([CCX, "-p", PROMPT, *flags], ccx_env | {"XDG_RUNTIME_DIR": str(runtime)}),
        "ccx_cold": ([CCX, "-p", PROMPT, *flags], ccx_env | {"CCX_WARM": "0"}),
        "claude": ([claude, "-p", PROMPT, *flags], claude_env),
    }


def runtime_folder(parent: Path, name: str) -> Path:
    """A private XDG_RUNTIME_DIR outside the temp folders (the worker refuses those)."""
    folder = parent / name
    folder.mkdir(mode=0o700)
    return folder


def worker_pid(runtime: Path) -> int | None:
    for path in runtime.glob("ccx-warm/*.sock"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(path))
                creds = probe.getsockopt(
                    socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
                )
                return struct.unpack("3i", creds)[0]
            except OSError:
                continue
    return None


def wait_for_worker(runtime: Path) -> None:
    deadline = time.time() + 60
    while worker_pid(runtime) is None:
        if time.time() > deadline:
            raise SystemExit("the warm worker did not start")
        time.sleep(0.1)


def stop_worker(runtime: Path) -> None:
    if (pid := worker_pid(runtime)) is not None:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass


def first_runs(
    claude: str, url: str, work: Path, runtimes: Path, repo: Path, count: int
) -> dict[str, object]:
    """Pairs of a cold run and a run that finds no worker and starts one."""
    cold, first = [], []
    for index in range(count):
        runtime = runtime_folder(runtimes, f"first{index}")
        pair = clients(claude, url, work, 1000 + index, runtime)
        cold.append(one_run(*pair["ccx_cold"], repo))
        first.append(one_run(*pair["ccx"], repo))
        wait_for_worker(runtime)  # let it finish its imports off the clock, then stop it
        stop_worker(runtime)
        time.sleep(0.5)
    return {
        "first_run_median_s": round(statistics.median(first), 3),
        "first_run_cold_median_s": round(statistics.median(cold), 3),
        "first_run_overhead_s": round(statistics.median(first) - statistics.median(cold), 3),
        "first_runs_s": [round(t, 3) for t in first],
        "first_run_colds_s": [round(t, 3) for t in cold],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--first-runs", type=int, default=3, help="cold / first-run pairs")
    parser.add_argument("--claude", default=os.environ.get("CLAUDE_BIN", ""))
    args = parser.parse_args()
    if not args.claude:
        raise SystemExit("no Claude Code: source /work/shared/bench/peers.sh or pass --claude")
    cache = Path.home() / ".cache"
    cache.mkdir(parents=True, exist_ok=True)
    runtimes = Path(tempfile.mkdtemp(prefix="ccx-bench-run-", dir=cache))
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        work = Path(tmp)
        repo = work / "repo"
        repo.mkdir()
        (repo / "README.md").write_text("a repo\n")
        server, url = start_server(work)
        runtime = runtime_folder(runtimes, "main")
        times: dict[str, list[float]] = {name: [] for name in CLIENTS}
        report: dict[str, object] = {}
        try:
            report |= first_runs(args.claude, url, work, runtimes, repo, args.first_runs)
            argv, env = clients(args.claude, url, work, -1, runtime)["ccx"]
            report["ccx_first_s"] = round(one_run(argv, env, repo), 3)
            for index in range(args.runs):
                for name, (argv, env) in clients(args.claude, url, work, index, runtime).items():
                    times[name].append(one_run(argv, env, repo))
        finally:
            server.kill()
            for folder in runtimes.iterdir():
                stop_worker(folder)
            shutil.rmtree(runtimes, ignore_errors=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["ccx"] / medians["claude"]
    print(
        json.dumps(
            {
                "runs": args.runs,
                "mode": "default (warm worker) and cold (CCX_WARM=0)",
                "ccx_median_s": round(medians["ccx"], 3),
                "ccx_cold_median_s": round(medians["ccx_cold"], 3),
                "claude_median_s": round(medians["claude"], 3),
                "ratio": round(ratio, 2),
                "cold_ratio": round(medians["ccx_cold"] / medians["claude"], 2),
                "target_ratio": TARGET_RATIO,
                "met": ratio <= TARGET_RATIO,
                **report,
                **{f"{name}_s": [round(t, 3) for t in values] for name, values in times.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
