"""Where a cold `ccx -p` spends its CPU before the first request, phase by phase.

    .venv/bin/python bench/cold_path.py [--repo DIR] [--resume WORK] [--runs 5] [--kept-home]

Runs ccx cold (CCX_WARM=0) on the referee (/work/shared/bench/fakeapi.py), through a
launcher that wraps some of ccx's own functions (nothing of the SDK's) to note the main
thread's CPU time (``time.thread_time``) and the wall clock at each phase boundary, and
the CPU the SDK's import thread took (``import_sdk_meanwhile``, rebuilt here the same way
with a clock around its import). Prints the medians of --runs: the process's CPU at the
first request, the SDK thread's, when the SDK import ended, the main thread's CPU, then
the main thread's phases.
The two threads share the GIL, so the time to the first request is about their sum
(whatever the main thread finishes early it then waits on the SDK import for).

--repo: a project to start in (default: a small git repository made under --out);
--resume WORK: resume (`-c`) the session of a work folder of bench/resume_scale.py
instead (WORK/store.pristine is copied in first, as there).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scale import Client, first_main_after, referee, run_client, small_repo, write_scenario
from bench.session_overhead import CCX, precompile

# Run by the launched Python: the phases as (name, main thread CPU s) on stderr, as JSON.
LAUNCHER = r"""
import json, sys, threading, time
marks = [("start", time.thread_time(), time.perf_counter())]
sdk = {}
def mark(name):
    marks.append((name, time.thread_time(), time.perf_counter()))
def around(owner, name, label, is_async=False):
    original = getattr(owner, name)
    if is_async:
        async def wrapped(*args, **kwargs):
            mark("before " + label)
            try:
                return await original(*args, **kwargs)
            finally:
                mark(label)
    else:
        def wrapped(*args, **kwargs):
            mark("before " + label)
            try:
                return original(*args, **kwargs)
            finally:
                mark(label)
    setattr(owner, name, wrapped)
sys.argv[0] = "ccx"
import agent.model.client as client
def import_sdk_meanwhile():  # ccx's own, with a clock around the SDK's import
    import contextlib
    from agent.core.gc_pause import collection_paused
    def run():
        started = time.thread_time()
        from agent.model.sdk_import import import_sdk
        with contextlib.suppress(Exception), collection_paused():
            import_sdk()
        sdk["cpu"], sdk["done"] = time.thread_time() - started, time.perf_counter()
    with collection_paused():
        from pydantic import BaseModel, Field  # noqa: F401
    threading.Thread(target=run, name="ccx-sdk-import", daemon=True).start()
client.import_sdk_meanwhile = import_sdk_meanwhile
import tui.cli.main as cli
around(cli, "parse_args", "parse_args")
around(client, "make_client", "make_client")
original_headless = cli._run_headless
def run_headless(*args, **kwargs):
    mark("before imports of the session")
    import tui.headless.run  # noqa: F401
    import tui.session.driver as driver
    mark("imports of the session")
    around(driver, "assemble_runtime", "assemble_runtime")
    import tui.session.runtime as runtime
    around(runtime.Runtime, "start", "Runtime.start", is_async=True)
    once = client.ModelClient._stream_once
    async def stream_once(self, *args, **kwargs):
        if "first" not in sdk:
            sdk["first"] = True
            mark("the first request")
            sys.stderr.write("CCX_PHASES " + json.dumps({
                "marks": marks, "sdk_thread": sdk.get("cpu"), "process": time.process_time(),
                "sdk_done": sdk.get("done", 0) - marks[0][2],
            }) + "\n")
        return await once(self, *args, **kwargs)
    client.ModelClient._stream_once = stream_once
    return original_headless(*args, **kwargs)
cli._run_headless = run_headless
from tui.cli.launcher import main
main()
"""


def one_run(work: Path, repo: Path, resume: Path | None, kept_home: bool = False) -> dict | None:
    ccx = Client("ccx", CCX)
    if resume is not None:
        store = ccx.transcripts(resume)
        shutil.rmtree(store, ignore_errors=True)
        shutil.copytree(resume / "store.pristine", store, symlinks=True)
        home, repo, extra = resume, resume / "repo", ["-c"]
    else:
        home, extra = work / "home-run", []
        if not kept_home:
            shutil.rmtree(home, ignore_errors=True)
    scenario = write_scenario(work / "scenario.json", "Say hello.", "Hello.", repo)
    log = work / "log.jsonl"
    with referee(scenario, log) as url:
        argv = [sys.executable, "-c", LAUNCHER, *ccx.command("Say hello.", None, *extra)[1:]]
        _, started, _memory = run_client(
            argv, ccx.environment(home, url), repo, work / "out.json", 120, 0.02
        )
    first = first_main_after(log, started)
    lines = [
        line
        for line in (work / "out.err").read_text().splitlines()
        if line.startswith("CCX_PHASES ")
    ]
    if first is None or not lines:
        return None
    data = json.loads(lines[0].removeprefix("CCX_PHASES "))
    phases: dict[str, tuple[float, float]] = {}
    for (_, cpu_0, wall_0), (name, cpu_1, wall_1) in zip(data["marks"], data["marks"][1:], strict=False):  # fmt: skip
        cpu, wall = phases.get(name, (0.0, 0.0))
        phases[name] = (cpu + (cpu_1 - cpu_0) * 1000, wall + (wall_1 - wall_0) * 1000)
    return {
        "first_request_s": first,
        "process_cpu_s": data["process"],
        "sdk_thread_cpu_s": data["sdk_thread"],
        "sdk_import_done_s": data["sdk_done"],
        "main_thread_cpu_s": data["marks"][-1][1],
        "phases_ms": phases,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", default=None)
    parser.add_argument("--resume", default=None, help="a work folder of bench/resume_scale.py")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--kept-home", action="store_true", help="one HOME for every run (filled by the first)"
    )
    parser.add_argument("--out", default="/tmp/ccx-bench-cold-path")
    args = parser.parse_args()
    work = Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    precompile()
    repo = Path(args.repo) if args.repo else small_repo(work)
    resume = Path(args.resume) if args.resume else None
    kept = args.kept_home
    one_run(work, repo, resume, kept)  # untimed: the OS caches (and the HOME when kept)
    runs = [run for _ in range(args.runs) if (run := one_run(work, repo, resume, kept)) is not None]
    if not runs:
        raise SystemExit("no run reached its first request (see the out.err under --out)")

    def median(values: list[float | None]) -> float:
        return statistics.median(v for v in values if v is not None)

    print(f"{len(runs)} runs, medians ({'resume of ' + str(resume) if resume else repo}):")
    keys = ("first_request_s", "process_cpu_s", "sdk_thread_cpu_s", "sdk_import_done_s")
    for key in (*keys, "main_thread_cpu_s"):
        print(f"  {key:<20} {median([r[key] for r in runs]):.3f}")
    print("the main thread by phase, CPU and wall (ms; 'before X': since the last mark):")
    for name in runs[0]["phases_ms"]:
        cpu = median([r["phases_ms"][name][0] for r in runs if name in r["phases_ms"]])
        wall = median([r["phases_ms"][name][1] for r in runs if name in r["phases_ms"]])
        print(f"  {cpu:6.0f} {wall:6.0f}  {name}")


if __name__ == "__main__":
    main()
