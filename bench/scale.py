"""Issue 22's sizes, ccx and Claude Code side by side on the referee, in one table.

    .venv/bin/python bench/scale.py [--quick] [--only sessions,cold,concurrent,grep]
        [--steps 200,2000] [--windows 120000,200000] [--clients ccx,claude]
        [--repo-scale 1.0] [--cold-runs 5] [--cold-home fresh|kept|both] [--kb 6] [--json OUT.json] [--keep]

What runs (every client on the same referee, /work/shared/bench/fakeapi.py):

- sessions: for each size in --steps and window in --windows, one `-p` session of
  that many model steps (bench/scale_session.py: Reads, Greps, Bash, and Edits
  that follow a Read of the same unit after 1-89 steps, so compactions fall
  between them). Figures: Edits refused for a Read still in the request that
  asked for them (and those whose Read was summarized away), median gap between
  consecutive requests (the per-step overhead: tools, transcript, the next
  request), peak RSS of the client's whole process tree, RSS when the requests
  of steps 500/1000/2000 arrived (the plateau check), transcript size on disk,
  main requests carrying the task verbatim; then the session is resumed
  (`-c -p`) and timed to its first request: cold, and for ccx with its warm worker
  too (the default; its socket in a private XDG_RUNTIME_DIR under ~/.cache).
- cold: `-p` to the first request, in the generated 100,000-file repository
  (bench/big_repo.py, cached under /tmp) and in a small one; ccx with its warm
  worker off (CCX_WARM=0); each run from a fresh HOME (--cold-home fresh, the default),
  or every run of a client in one HOME kept between its runs, as a user's own
  (--cold-home kept; the untimed first run fills it; both clients alike), or both;
  the median of --cold-runs after one untimed run of each.
- concurrent: 4 sessions at once in one repository, each Reading and Editing its
  own slots of one shared file; an Edit reported done that is not in the file
  at the end is a lost update.
- grep: rows from bench/grep_scale.py's `grep_rows(repo, quick=...)` (another
  part of issue 22) when that module exists; it returns (label, ccx, Claude
  Code) rows measured on the same big repository.

--quick runs small sizes (150 steps at 120K with 12 KiB units, a 5% big
repository, 2 cold runs, 20-step concurrent sessions): a few minutes.
Claude Code is 2.1.328 from /work/shared/bench/peers.sh or $CLAUDE_BIN. As in
bench/economics, ccx gets the window on the server and as --autocompact;
Claude Code gets --autocompact and a server without a window.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.big_repo import ensure_big_repo
from bench.economics.runner import CC_MODEL, CCX_MODEL
from bench.hostile_repo import claude_binary
from bench.scale_session import REFEREE, LogFigures, make_session, read_log
from bench.scale_table import MEMORY_STEPS, table
from bench.session_overhead import CCX, precompile, user_environment

CONCURRENT = 4
NO_WINDOW = 1_000_000
PRIORITY = {"nice": 0}  # --nice: every client and referee process runs at this niceness
LAUNCH = "import sys; sys.argv[0] = 'ccx'; from tui.cli.launcher import main; main()"


@dataclass
class Client:
    name: str  # its key in the report: "ccx", "claude", or "ccx_before" (--ccx-before)
    binary: str
    source: str | None = None  # ccx_before: a ccx source tree, run with this Python

    @property
    def is_ccx(self) -> bool:
        return self.name != "claude"

    @property
    def label(self) -> str:
        return {"ccx": "ccx", "claude": "Claude Code"}.get(self.name, "ccx (before)")

    def command(self, prompt: str, window: int | None, *extra: str) -> list[str]:
        if self.is_ccx:
            head = [sys.executable, "-c", LAUNCH] if self.source else [self.binary]
            argv = [*head, "-p", prompt, "--permission-mode", "bypassPermissions"]
            argv += ["--output-format", "json", "--model", CCX_MODEL]
        else:
            argv = [self.binary, "-p", prompt, "--dangerously-skip-permissions"]
            argv += ["--output-format", "json", "--model", CC_MODEL]
        return argv + (["--autocompact", str(window)] if window else []) + list(extra)

    def environment(self, work: Path, url: str) -> dict[str, str]:
        env = user_environment() | {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-test"}
        env = {k: v for k, v in env.items() if not k.startswith("CLAUDE")}
        env["HOME"] = str(work / "home")
        (work / "home").mkdir(parents=True, exist_ok=True)
        if self.source:
            env["PYTHONPATH"] = self.source  # ahead of this venv's editable install
        if self.is_ccx:
            return env | {"CCX_CONFIG_DIR": str(work / "ccxhome"), "CCX_WARM": "0"}
        return env | {
            "IS_SANDBOX": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
        }

    def transcripts(self, work: Path) -> Path:
        return work / ("ccxhome" if self.is_ccx else "home/.claude") / "projects"

    def server_window(self, window: int) -> int:
        return window if self.is_ccx else NO_WINDOW


@contextmanager
def referee(scenario: Path, log: Path, window: int = NO_WINDOW) -> Iterator[str]:
    """The shared fake API on ``scenario``; yields its URL."""
    log.unlink(missing_ok=True)
    port_file = log.with_suffix(".port")
    with open(port_file, "w") as out:
        argv = [sys.executable, str(REFEREE / "fakeapi.py"), str(scenario), "--log", str(log)]
        server = subprocess.Popen(
            [*argv, "--window", str(window)],
            stdout=out,
            stderr=subprocess.DEVNULL,
            preexec_fn=_prioritised,
        )
    try:
        deadline = time.time() + 60
        while not port_file.read_text().strip():
            if time.time() > deadline or server.poll() is not None:
                raise SystemExit("the referee did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text().strip()}"
    finally:
        server.kill()
        server.wait()


def _prioritised() -> None:
    if PRIORITY["nice"]:
        os.nice(PRIORITY["nice"])


def tree_rss_mb(root: int) -> float:
    """Resident memory of ``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e6


class MemorySampler(threading.Thread):
    """Samples a process's CPU time (its own and its reaped children's) and its tree's RSS
    every ``interval`` seconds: ``cpu`` (epoch, seconds) and ``samples`` (epoch, MB)."""

    def __init__(self, pid: int, interval: float = 0.25, tree: bool = True) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval, self.tree = pid, interval, tree
        self.samples: list[tuple[float, float]] = []
        self.cpu: list[tuple[float, float]] = []
        self.done = threading.Event()

    def run(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        while not self.done.is_set():
            now = time.time()
            try:
                with open(f"/proc/{self.pid}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                self.cpu.append((now, sum(int(f) for f in fields[11:15]) / tick))
            except (OSError, ValueError, IndexError):
                pass
            if self.tree and (rss := tree_rss_mb(self.pid)) > 0:
                self.samples.append((now, rss))
            self.done.wait(self.interval)

    def peak(self) -> float:
        return max((mb for _, mb in self.samples), default=0.0)

    def at(self, moment: float) -> float | None:
        before = [mb for t, mb in self.samples if t <= moment]
        return before[-1] if before else None

    def cpu_at(self, moment: float) -> float | None:
        before = [s for t, s in self.cpu if t <= moment]
        return before[-1] if before else None


def run_client(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    out: Path,
    timeout: float,
    sampler_interval: float = 0.25,
) -> tuple[int, float, MemorySampler]:
    """Runs one client to its end; returns its exit code, spawn time (epoch) and memory."""
    with open(out, "w") as stdout, open(out.with_suffix(".err"), "w") as stderr:
        started = time.time()
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            preexec_fn=_prioritised,
        )
        fine = sampler_interval < 0.1  # CPU only: scanning /proc that often would load the box
        sampler = MemorySampler(proc.pid, sampler_interval, tree=not fine)
        sampler.start()
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        sampler.done.set()
        sampler.join()
    return code, started, sampler


def first_main_after(log: Path, started: float) -> float | None:
    figures = read_log(log, {"task": "", "steps": []})
    return None if figures.first_main_at is None else figures.first_main_at - started


def write_scenario(path: Path, task: str, final: str, repo: Path) -> Path:
    path.write_text(json.dumps({"repo": str(repo), "task": task, "steps": [], "final": final}))
    return path


# -- the long sessions ------------------------------------------------------------------


@dataclass
class SessionRun:
    client: str
    steps: int
    window: int
    exit_code: int
    wall_s: float
    figures: dict[str, Any]
    peak_rss_mb: float
    rss_at_step_mb: dict[int, float | None]
    transcript_mb: float
    resume_first_request_s: float | None = None
    warm_resume_first_request_s: float | None = None  # ccx with its warm worker (the default)
    rss_samples: list[tuple[float, float]] = field(default_factory=list)


def run_session(
    client: Client, session: Path, out: Path, steps: int, window: int, keep: bool
) -> SessionRun:
    work = out / f"s{steps}-w{window // 1000}k.{client.name}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copytree(session / "repo", work / "repo", symlinks=True)
    scenario = json.loads((session / "scenario.json").read_text())
    scenario["repo"] = str(work / "repo")
    (work / "scenario.json").write_text(json.dumps(scenario))
    log = work / "log.jsonl"
    with referee(work / "scenario.json", log, client.server_window(window)) as url:
        argv = client.command(scenario["task"], window)
        code, started, memory = run_client(
            argv, client.environment(work, url), work / "repo", work / "run.out", 3600
        )
    wall = time.time() - started
    figures = read_log(log, scenario, work / "repo")
    transcript = sum(p.stat().st_size for p in client.transcripts(work).rglob("*.jsonl"))
    run = SessionRun(
        client=client.name,
        steps=steps,
        window=window,
        exit_code=code,
        wall_s=round(wall, 1),
        figures=summary(figures),
        peak_rss_mb=round(memory.peak(), 1),
        rss_at_step_mb={
            n: _round(memory.at(figures.step_times[n])) if n in figures.step_times else None
            for n in MEMORY_STEPS
        },
        transcript_mb=round(transcript / 1e6, 2),
        rss_samples=memory.samples[:: max(1, len(memory.samples) // 200)],
    )
    run.resume_first_request_s = resume(client, work)
    if client.name == "ccx":
        run.warm_resume_first_request_s = resume(client, work, warm=True)
    if not keep:
        log.unlink(missing_ok=True)
    return run


def resume(client: Client, work: Path, warm: bool = False) -> float | None:
    """`-c -p` on the finished session, to its first request; ``warm``: ccx with its warm
    worker (the default), timed on the second run (the first starts the worker)."""
    scenario = write_scenario(work / "resume.json", "Continue.", "Resumed.", work / "repo")
    log = work / "resume.jsonl"
    env = client.environment(work, "")
    if warm:  # the worker leaves by itself after a minute idle
        env |= {"CCX_WARM": "1", "CCX_WARM_IDLE_S": "60"} | warm_runtime()
    for _ in range(2 if warm else 1):
        with referee(scenario, log) as url:
            argv = client.command("Continue.", None, "-c")
            _, started, _ = run_client(
                argv, env | {"ANTHROPIC_BASE_URL": url}, work / "repo", work / "resume.out", 600
            )
        if warm:
            wait_for_worker(Path(env["XDG_RUNTIME_DIR"]))
    return _round(first_main_after(log, started), 3)


def warm_runtime() -> dict[str, str]:
    """XDG_RUNTIME_DIR for ccx with its warm worker: a private folder outside the temp
    folders (ccx keeps no worker's socket in one, and the config folders here are in /tmp)."""
    folder = Path.home() / ".cache" / "ccx-bench-runtime"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    return {"XDG_RUNTIME_DIR": str(folder)}


def wait_for_worker(runtime: Path, timeout: float = 60.0) -> None:
    """Until a worker listens under ``runtime`` (it starts after the run that found none)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for path in runtime.glob("ccx-warm/*.sock"):
            with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as probe:
                probe.connect(str(path))
                return
        time.sleep(0.1)


def summary(figures: LogFigures) -> dict[str, Any]:
    data = asdict(figures)
    for bulky in ("gaps_s", "step_times"):
        data.pop(bulky)
    overhead = figures.overhead_ms()
    data["step_overhead_ms"] = None if overhead is None else round(overhead, 1)
    return data


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


# -- cold start ---------------------------------------------------------------------------


def small_repo(out: Path) -> Path:
    repo = out / "small-repo"
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        (repo / "README.md").write_text("# small\n")
        (repo / "main.py").write_text("print('hello')\n")
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
        subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
        subprocess.run([*git, "add", "."], cwd=repo, check=True)
        subprocess.run([*git, "commit", "-qm", "small"], cwd=repo, check=True)
    return repo


def cold_starts(
    clients: list[Client], repo: Path, out: Path, runs: int, name: str, kept_home: bool = False
) -> dict[str, Any]:
    """Median time from spawn to the first request of `-p`, per client, in ``repo``: each
    run from a fresh HOME, or (``kept_home``) each client's runs in one HOME of its own."""
    work = out / f"cold-{name}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    scenario = write_scenario(work / "scenario.json", "Say hello.", "Hello.", repo)
    log = work / "log.jsonl"
    times: dict[str, list[float]] = {c.name: [] for c in clients}
    cpu: dict[str, list[float]] = {c.name: [] for c in clients}
    with referee(scenario, log) as url:
        for index in range(runs + 1):  # the first round warms the OS caches: not counted
            for client in clients:
                home = work / (client.name if kept_home else f"{client.name}{index}")
                argv = client.command("Say hello.", None)
                _, started, sampler = run_client(
                    argv, client.environment(home, url), repo, home / "out.json", 120, 0.01
                )
                first = first_main_after_from(log, started)
                if index and first is not None:
                    times[client.name].append(first)
                    cpu[client.name].append(sampler.cpu_at(started + first) or 0.0)
    return {
        name: {
            "median_s": round(statistics.median(v), 3),
            "runs_s": [round(t, 3) for t in v],
            "cpu_median_s": round(statistics.median(cpu[name]), 3),
            "cpu_s": [round(t, 3) for t in cpu[name]],
        }
        for name, v in times.items()
        if v
    }


def first_main_after_from(log: Path, started: float) -> float | None:
    """The first main request that arrived after ``started`` in a log shared by several runs."""
    with open(log) as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("kind") == "main" and record["t"] >= started:
                return record["t"] - started
    return None


# -- four sessions in one repository ------------------------------------------------------


def shared_board(repo: Path, sessions: int, edits: int) -> None:
    lines = ['"""The shared board: every session marks its own slots."""', ""]
    lines += [f'BOARD_{s}_{e:03d} = "open"' for s in range(sessions) for e in range(edits)]
    (repo / "board.py").write_text("\n".join(lines) + "\n")


def board_steps(session: int, edits: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    path = "{repo}/board.py"
    for e in range(edits):
        steps.append({"tool": "Read", "input": {"file_path": path}})
        old, new = f'BOARD_{session}_{e:03d} = "open"', f'BOARD_{session}_{e:03d} = "done"'
        steps.append({"tool": "Edit", "input": {"file_path": path, "old_string": old, "new_string": new}})  # fmt: skip
    return steps


def concurrent(client: Client, out: Path, edits: int) -> dict[str, Any]:
    """CONCURRENT sessions at once in one repository, each editing its own slots of one file."""
    work = out / f"concurrent.{client.name}"
    shutil.rmtree(work, ignore_errors=True)
    repo = work / "repo"
    repo.mkdir(parents=True)
    shared_board(repo, CONCURRENT, edits)
    task = "Mark your slots on the shared board done, one at a time."
    peaks: list[float] = []
    with contextlib.ExitStack() as stack:
        procs = []
        for s in range(CONCURRENT):
            scenario = work / f"scenario{s}.json"
            scenario.write_text(json.dumps({"repo": str(repo), "task": task, "steps": board_steps(s, edits), "final": "Done."}))  # fmt: skip
            url = stack.enter_context(referee(scenario, work / f"log{s}.jsonl"))
            argv = client.command(task, None)
            env = client.environment(work, url)
            procs.append(
                threading.Thread(
                    target=lambda a=argv, e=env, s=s: peaks.append(
                        run_client(a, e, repo, work / f"out{s}.json", 1200)[2].peak()
                    )
                )
            )
        started = time.time()
        for thread in procs:
            thread.start()
        for thread in procs:
            thread.join()
    board = (repo / "board.py").read_text()
    reported = lost = 0
    for s in range(CONCURRENT):
        for edit_input, ok in edit_results(work / f"log{s}.jsonl"):
            if ok:
                reported += 1
                lost += edit_input["new_string"] not in board
    return {
        "sessions": CONCURRENT,
        "edits_given": CONCURRENT * edits,
        "edits_reported_done": reported,
        "edits_in_file": board.count('= "done"'),
        "lost_updates": lost,
        "peak_rss_mb_sum": round(sum(peaks), 1),
        "wall_s": round(time.time() - started, 1),
    }


def edit_results(log: Path) -> Iterator[tuple[dict[str, Any], bool]]:
    """Each Edit a session ran, with whether its result said it was done."""
    seen: set[str] = set()
    with open(log) as lines:
        for line in lines:
            messages = json.loads(line)["body"].get("messages", [])
            uses = {
                b["id"]: b["input"]
                for m in messages
                if m["role"] == "assistant" and isinstance(m["content"], list)
                for b in m["content"]
                if b.get("type") == "tool_use" and b.get("name") == "Edit"
            }
            for m in messages:
                if m["role"] != "user" or not isinstance(m["content"], list):
                    continue
                for b in m["content"]:
                    if b.get("type") != "tool_result" or b.get("tool_use_id") not in uses:
                        continue
                    if b["tool_use_id"] in seen:
                        continue
                    seen.add(b["tool_use_id"])
                    text = json.dumps(b.get("content"))
                    yield (
                        uses[b["tool_use_id"]],
                        not (b.get("is_error") or "tool_use_error" in text),
                    )


# -- grep (bench/grep_scale.py, when present) ----------------------------------------------


def grep_rows(repo: Path, quick: bool) -> list[tuple[str, str, str]]:
    """The grep rows of the table: bench/grep_scale.py's, or one row saying it is not there.

    The hook: ``bench.grep_scale.grep_rows(repo: Path, quick: bool)`` returns rows of
    (label, ccx's figure, Claude Code's figure), measured on ``repo`` (bench/big_repo.py).
    """
    try:
        from bench import grep_scale  # type: ignore[attr-defined]
    except ImportError:
        return [
            ("grep on the big repository", "(no bench/grep_scale.py)", "(no bench/grep_scale.py)")
        ]
    return [tuple(map(str, row)) for row in grep_scale.grep_rows(repo, quick=quick)]  # type: ignore[misc]


# -- main --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes: a few minutes")
    parser.add_argument("--only", default="sessions,cold,concurrent,grep")
    parser.add_argument("--steps", default=None, help="session sizes, e.g. 200,2000")
    parser.add_argument("--windows", default=None, help="windows, e.g. 120000,200000")
    parser.add_argument("--clients", default="ccx,claude")
    parser.add_argument("--repo-scale", type=float, default=None, help="big repository size (1.0)")
    parser.add_argument("--cold-runs", type=int, default=None)
    parser.add_argument("--cold-home", choices=("fresh", "kept", "both"), default="fresh")
    parser.add_argument("--kb", type=int, default=None, help="size of a session's units (KiB)")
    parser.add_argument("--concurrent-edits", type=int, default=None)
    parser.add_argument(
        "--ccx-before",
        default=None,
        help="also run this ccx source tree (e.g. `git archive main | tar -x -C DIR`) as a "
        "client, for before/after figures from one run",
    )
    parser.add_argument(
        "--nice",
        type=int,
        default=0,
        help="niceness of the clients and the referee (root may give -10 on a shared, "
        "loaded machine: both clients alike)",
    )
    parser.add_argument("--out", default="/tmp/ccx-bench-scale")
    parser.add_argument("--json", default=None, help="also write the whole report here")
    parser.add_argument("--keep", action="store_true", help="keep the referee's logs")
    args = parser.parse_args()
    quick = args.quick
    steps = [int(s) for s in (args.steps or ("150" if quick else "200,2000")).split(",")]
    windows = [int(w) for w in (args.windows or ("120000" if quick else "120000,200000")).split(",")]  # fmt: skip
    scale = args.repo_scale if args.repo_scale is not None else (0.05 if quick else 1.0)
    cold_runs = args.cold_runs or (2 if quick else 5)
    kb = args.kb or (12 if quick else 6)
    edits = args.concurrent_edits or (10 if quick else 25)
    only = set(args.only.split(","))
    clients = []
    if args.ccx_before:
        subprocess.run([sys.executable, "-m", "compileall", "-q", args.ccx_before], check=True)
        clients.append(Client("ccx_before", sys.executable, source=args.ccx_before))
    for name in args.clients.split(","):
        if name == "ccx":
            clients.append(Client("ccx", CCX))
        elif (binary := claude_binary()) is not None:
            clients.append(Client("claude", binary))
        else:
            print("Claude Code not found (source /work/shared/bench/peers.sh)", file=sys.stderr)
    PRIORITY["nice"] = args.nice
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    precompile()
    report: dict[str, Any] = {"quick": quick, "clients": [c.name for c in clients]}
    if "sessions" in only:
        report["sessions"] = []
        for size in steps:
            session = make_session(out / f"session-{size}-{kb}k", size, kb)
            for window in windows:
                for client in clients:
                    run = run_session(client, session, out, size, window, args.keep)
                    report["sessions"].append(asdict(run))
                    print(f"{client.name} {size} steps @ {window}: {run.figures}", file=sys.stderr)
    if "cold" in only:
        big = ensure_big_repo(scale)
        report["cold"] = {}
        for kept in {"fresh": [False], "kept": [True]}.get(args.cold_home, [False, True]):
            for name, repo in (("big", big), ("small", small_repo(out))):
                label = f"{name} repo, HOME kept" if kept else f"{name} repo"
                work_name = f"{name}-kept" if kept else name
                report["cold"][label] = cold_starts(clients, repo, out, cold_runs, work_name, kept)
        print(f"cold: {report['cold']}", file=sys.stderr)
    if "concurrent" in only:
        report["concurrent"] = {c.name: concurrent(c, out, edits) for c in clients}
        print(f"concurrent: {report['concurrent']}", file=sys.stderr)
    if "grep" in only:
        report["grep"] = grep_rows(ensure_big_repo(scale), quick)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    print(table(report, [(c.name, c.label) for c in clients]))


if __name__ == "__main__":
    main()
