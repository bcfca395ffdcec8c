"""One-turn `ccx -p` against Claude Code's, side by side on the shared fake API.

.venv/bin/python bench/headless_startup.py [--runs 10] [--claude PATH] [--warm]

Both clients answer the same one-turn prompt (one text reply, no tools) from
one scripted server (/work/shared/bench/fakeapi.py), alternating ccx and
Claude Code run by run, each from a fresh HOME; prints the wall times, their
medians and the ratio ccx / Claude Code as one JSON line.
Target (issue 12): ratio <= 1.5. $CLAUDE_BIN or --claude names Claude Code
(`source /work/shared/bench/peers.sh` installs it). With --warm ccx runs
with CCX_WARM=1 (agent/app/warm.py): one untimed run first starts the worker,
which the timed runs then use; it is stopped at the end.
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


def wait_for_worker(work: Path) -> None:
    deadline = time.time() + 30
    while not list(work.glob("ccx-warm-*/*.sock")):
        if time.time() > deadline:
            raise SystemExit("the warm worker did not start")
        time.sleep(0.1)
    time.sleep(0.5)


def stop_worker(work: Path) -> None:
    import signal
    import socket
    import struct

    for path in work.glob("ccx-warm-*/*.sock"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(path))
                creds = probe.getsockopt(
                    socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
                )
                os.kill(struct.unpack("3i", creds)[0], signal.SIGTERM)
            except OSError:
                continue


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--claude", default=os.environ.get("CLAUDE_BIN", ""))
    parser.add_argument("--warm", action="store_true", help="ccx with CCX_WARM=1")
    args = parser.parse_args()
    if not args.claude:
        raise SystemExit("no Claude Code: source /work/shared/bench/peers.sh or pass --claude")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        repo = work / "repo"
        repo.mkdir()
        (repo / "README.md").write_text("a repo\n")
        server, url = start_server(work)
        warm = {"CCX_WARM": "1", "TMPDIR": str(work), "CCX_WARM_IDLE_S": "120"} if args.warm else {}
        times: dict[str, list[float]] = {"ccx": [], "claude": []}
        try:
            if warm:
                argv, env = clients(args.claude, url, work, -1, warm)["ccx"]
                one_run(argv, env, repo)
                wait_for_worker(work)
            for index in range(args.runs):
                for name, (argv, env) in clients(args.claude, url, work, index, warm).items():
                    times[name].append(one_run(argv, env, repo))
        finally:
            server.kill()
            stop_worker(work)
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["ccx"] / medians["claude"]
    print(
        json.dumps(
            {
                "runs": args.runs,
                "ccx_warm": args.warm,
                "ccx_median_s": round(medians["ccx"], 3),
                "claude_median_s": round(medians["claude"], 3),
                "ratio": round(ratio, 2),
                "target_ratio": TARGET_RATIO,
                "met": ratio <= TARGET_RATIO,
                "ccx_s": [round(t, 3) for t in times["ccx"]],
                "claude_s": [round(t, 3) for t in times["claude"]],
            }
        )
    )


if __name__ == "__main__":
    main()
