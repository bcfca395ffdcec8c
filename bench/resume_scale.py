"""Resume of a long session, ccx and Claude Code side by side: time to the first request.

    .venv/bin/python bench/resume_scale.py [--steps 2000] [--window 120000] [--runs 5]
        [--clients ccx,claude] [--ccx-before DIR] [--reuse] [--nice N] [--out DIR] [--json OUT]

Each client first runs one `-p` session of --steps model steps on the referee
(bench/scale_session.py's script, as bench/scale.py's sessions part runs it);
its transcript store is then kept aside, and every timed resume (`-c -p
Continue.`) starts from a fresh copy of it, so each one reads the same file.
Figures, the median of --runs after one untimed round (the rounds take the
setups in turn, so a burst of load on a shared machine hits all alike):

- cold: ccx with its warm worker off (CCX_WARM=0), as bench/scale.py runs it;
- warm: ccx with the warm worker on (the default for `-p`; the untimed run starts it), its
  socket in a private XDG_RUNTIME_DIR of the benchmark's under ~/.cache (``warm_runtime``):
  ccx keeps none in a temp folder, where the config folders under --out are;
- ccx (before): --ccx-before, a ccx source tree (e.g. `git archive main`), resuming
  the same transcript as ccx, cold;
- Claude Code 2.1.328 (/work/shared/bench/peers.sh or $CLAUDE_BIN) on its own session.

Then the part of ccx's resume that is the transcript, measured in-process on the same
file: the whole-file load (`load_session`, what a resume did before) against the load
from the end (`load_for_resume`), and the rebuild of the file-read cache. --reuse
keeps the sessions already made under --out.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.hostile_repo import claude_binary
from bench.scale import (
    PRIORITY,
    Client,
    first_main_after,
    referee,
    run_client,
    run_session,
    warm_runtime,
    write_scenario,
)
from bench.scale_session import make_session
from bench.session_overhead import CCX, precompile


def store_of(client: Client, work: Path) -> Path:
    """The folder of the client's transcripts (the warm worker's socket is elsewhere)."""
    return client.transcripts(work)


def session_for(client: Client, session: Path, out: Path, steps: int, window: int, reuse: bool) -> Path:  # fmt: skip
    """The work folder of a finished session of ``client``, with its store kept aside."""
    work = out / f"s{steps}-w{window // 1000}k.{client.name}"
    pristine = work / "store.pristine"
    if not (reuse and pristine.exists()):
        run_session(client, session, out, steps, window, keep=False)
        shutil.rmtree(pristine, ignore_errors=True)
        shutil.copytree(store_of(client, work), pristine, symlinks=True)
    return work


def timed_resume(
    client: Client, work: Path, pristine: Path, warm: bool
) -> tuple[float | None, float | None]:
    """One `-c -p` from a fresh copy of the stored session: the wall time to its first request
    and the CPU time the client had used by then (s; its own process: a warm run's CPU is
    the worker's, not counted)."""
    store = store_of(client, work)
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(pristine, store, symlinks=True)
    scenario = write_scenario(work / "resume.json", "Continue.", "Resumed.", work / "repo")
    log = work / "resume.jsonl"
    with referee(scenario, log) as url:
        env = client.environment(work, url)
        if warm:  # the default; the worker leaves by itself after a minute idle
            env = env | {"CCX_WARM": "1", "CCX_WARM_IDLE_S": "60"} | warm_runtime()
        argv = client.command("Continue.", None, "-c")
        _, started, sampler = run_client(
            argv, env, work / "repo", work / "resume.out", 600, sampler_interval=0.02
        )
    wall = first_main_after(log, started)
    return wall, None if wall is None else sampler.cpu_at(started + wall)


@dataclass(frozen=True)
class Setup:
    key: str  # its name in the report
    client: Client
    work: Path
    warm: bool


def interleaved(setups: list[Setup], runs: int) -> dict[str, dict[str, Any]]:
    """Each setup's figures: one untimed round (caches, the warm worker), then ``runs`` rounds
    that take the setups in turn, so a burst of load on a shared machine hits all alike."""
    for setup in setups:
        timed_resume(setup.client, setup.work, setup.work / "store.pristine", setup.warm)
    figures: dict[str, list[tuple[float | None, float | None]]] = {s.key: [] for s in setups}
    for _ in range(runs):
        for setup in setups:
            pristine = setup.work / "store.pristine"
            figures[setup.key].append(timed_resume(setup.client, setup.work, pristine, setup.warm))
    return {s.key: summary(figures[s.key], s.warm) for s in setups}


def summary(figures: list[tuple[float | None, float | None]], warm: bool) -> dict[str, Any]:
    walls = [wall for wall, _cpu in figures if wall is not None]
    cpus = [cpu for _wall, cpu in figures if cpu is not None]
    return {
        "median_s": round(statistics.median(walls), 3) if walls else None,
        "runs_s": [None if wall is None else round(wall, 3) for wall, _cpu in figures],
        "cpu_median_s": None if warm or not cpus else round(statistics.median(cpus), 2),
    }


def loading_breakdown(transcript: Path, runs: int) -> dict[str, Any]:
    """The transcript's part of a resume, in-process, before and after (median CPU ms)."""
    code = f"""
import json, statistics, time
from pathlib import Path
from agent.sessions.session import load_for_resume, load_session, rebuild_file_state
from tools.file_state import FileStateCache
path = Path({str(transcript)!r})
def ms(f):  # CPU time: on a loaded machine wall time is mostly waiting for a core
    times = []
    for _ in range({runs}):
        t = time.process_time(); value = f(); times.append((time.process_time() - t) * 1000)
    return round(statistics.median(times), 1), value
whole_ms, whole = ms(lambda: load_session(path))
tail_ms, tail = ms(lambda: load_for_resume(path))
every_ms, _ = ms(lambda: rebuild_file_state(whole, FileStateCache(max_entries=10**6)))
kept_ms, _ = ms(lambda: rebuild_file_state(tail, FileStateCache()))
print(json.dumps({{
    "transcript_mb": round(path.stat().st_size / 1e6, 2),
    "parsing_starts_at_mb": round(tail.unread_before / 1e6, 2),
    "messages_loaded": len(tail.messages),
    "whole_file_load_ms": whole_ms, "load_from_end_ms": tail_ms,
    "file_reads_rebuilt_every_ms": every_ms, "file_reads_rebuilt_kept_ms": kept_ms,
}}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--window", type=int, default=120000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kb", type=int, default=6)
    parser.add_argument("--clients", default="ccx,claude")
    parser.add_argument("--ccx-before", default=None, help="a ccx source tree to compare with")
    parser.add_argument("--reuse", action="store_true", help="keep sessions made under --out")
    parser.add_argument("--out", default="/tmp/ccx-bench-resume")
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--nice", type=int, default=0, help="niceness of clients and referee (as bench/scale.py)"
    )
    args = parser.parse_args()
    PRIORITY["nice"] = args.nice
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    precompile()
    session = make_session(out / f"session-{args.steps}-{args.kb}k", args.steps, args.kb)
    report: dict[str, Any] = {"steps": args.steps, "window": args.window, "runs": args.runs}
    names = args.clients.split(",")
    setups: list[Setup] = []
    transcript = None
    if "ccx" in names:
        ccx = Client("ccx", CCX)
        work = session_for(ccx, session, out, args.steps, args.window, args.reuse)
        setups += [Setup("ccx_cold", ccx, work, False), Setup("ccx_warm", ccx, work, True)]
        if args.ccx_before:
            subprocess.run([sys.executable, "-m", "compileall", "-q", args.ccx_before], check=True)
            before = Client("ccx_before", sys.executable, source=args.ccx_before)
            setups.append(Setup("ccx_before_cold", before, work, False))  # the same transcript
        transcript = max((work / "store.pristine").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    if "claude" in names:
        binary = claude_binary()
        if binary is None:
            print("Claude Code not found (source /work/shared/bench/peers.sh)", file=sys.stderr)
        else:
            claude = Client("claude", binary)
            work = session_for(claude, session, out, args.steps, args.window, args.reuse)
            setups.append(Setup("claude", claude, work, False))
            sizes = [p.stat().st_size for p in (work / "store.pristine").rglob("*.jsonl")]
            report["claude_transcript_mb"] = round(max(sizes, default=0) / 1e6, 2)
    report |= interleaved(setups, args.runs)
    if transcript is not None:
        report["ccx_loading"] = loading_breakdown(transcript, args.runs)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    rows = [("ccx_cold", "ccx, cold (CCX_WARM=0)"), ("ccx_warm", "ccx, warm worker"),
            ("ccx_before_cold", "ccx before, cold"), ("claude", "Claude Code")]  # fmt: skip
    print(f"\nresume of a {args.steps}-step session (-c -p), to the first request, median s:")
    for key, label in rows:
        if key in report:
            cpu = report[key]["cpu_median_s"]
            print(f"  {label:<26} {report[key]['median_s']}" + (f" (CPU {cpu})" if cpu else ""))


if __name__ == "__main__":
    main()
