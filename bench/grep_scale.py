"""Grep at repository scale: ccx's Grep (ripgrep engine and Python fallback) against the
ripgrep Claude Code runs, on a generated repository, wall time and peak memory per query.

    .venv/bin/python -m bench.grep_scale                 # 100,000 files, ~1.1 GB
    .venv/bin/python -m bench.grep_scale --files 20000   # a quicker, smaller run
    .venv/bin/python -m bench.grep_scale --engines rg,claude

The repository (nested sources, a big log, node_modules and build output that
.gitignore leaves out, a .git directory) is generated under /tmp once per size
and reused. Each ccx run is a fresh Python process that builds the Grep tool and
runs one call: its wall time is the call's, its peak memory the Python process's
high-water mark plus its rg child's. Claude Code 2.1.328 carries
ripgrep inside its binary and runs it by starting itself with argv[0] "rg"; the
same arguments its Grep tool passes are given here, and the figure is that rg
process, plus for files_with_matches the stat of every file and the newest-first
sort its Grep then does (done here in Python); the rest of Claude Code's work on
the output is not counted, which favours it. Every query runs `--repeat` times, the clients taking turns; the
table shows the median time and the highest peak memory.

`rows(...)` returns the table for other scripts (bench/scale.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLAUDE = Path("/root/.cache/ccx-peers/node_modules/@anthropic-ai/claude-code-linux-x64/claude")
VCS_DIRS = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")  # Claude Code's Grep excludes them

# ccx Grep input per query; the Claude Code arguments are derived from the same input.
QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("literal", {"pattern": "handle_request_4711"}),
    ("-i", {"pattern": "needle_token", "-i": True}),
    ("regex", {"pattern": r"def \w+_cache\(self, key_\d+"}),
    ("glob *.py", {"pattern": "TODO", "glob": "*.py"}),
    ("files_with_matches", {"pattern": "FIXME", "output_mode": "files_with_matches"}),
    ("count", {"pattern": "TODO", "output_mode": "count"}),
    ("content -C 2", {"pattern": "needle_token", "output_mode": "content", "-C": 2}),
]


@dataclass(frozen=True)
class Layout:
    files: int
    log_mb: int

    @property
    def root(self) -> Path:
        return Path(f"/tmp/ccx-grep-scale-{self.files}f-{self.log_mb}mb")


def layout_for(files: int) -> Layout:
    # The default size is the issue's: 100,000 files, ~1.1 GB with a 500 MB log.
    return Layout(files, max(1, round(500 * files / 100_000)))


# --- the repository ------------------------------------------------------------------------


def generate(layout: Layout) -> Path:
    root = layout.root
    done = root / ".generated"
    if done.exists():
        return root
    rng = random.Random(1234)
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".gitignore").write_text("node_modules/\nbuild/\n*.pyc\n")
    sources = layout.files * 55 // 100
    modules = layout.files * 25 // 100
    built = layout.files - sources - modules - 1
    _write_tree(root / "src", sources, "py", 3600, rng)
    _write_tree(root / "node_modules", modules, "js", 5200, rng)
    _write_tree(root / "build", built, "js", 7800, rng)
    _write_log(root / "logs" / "service.log", layout.log_mb, rng)
    done.write_text(json.dumps({"files": layout.files, "log_mb": layout.log_mb}))
    return root


def _write_tree(base: Path, count: int, ext: str, mean_bytes: int, rng: random.Random) -> None:
    for i in range(count):
        folder = base / f"pkg{i % 40:02d}" / f"mod{(i // 40) % 50:02d}"
        if i % 2000 == 0 or i < 2000:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i:06d}.{ext}").write_text(_source(i, mean_bytes, rng))


def _source(i: int, mean_bytes: int, rng: random.Random) -> str:
    lines = [f"# module {i}: generated for the grep benchmark", "import os", ""]
    size = 0
    target = rng.randint(mean_bytes // 2, mean_bytes * 3 // 2)
    n = 0
    while size < target:
        n += 1
        line = rng.choice(
            (
                f"def handler_{n}(request, limit={n}):",
                f"    value = compute_{n % 97}(request.items, limit)",
                f"    return value + {n}",
                f"class Service{n}:",
                f"    def lookup_cache(self, key_{n}, default=None):",
                "    # keep the old behaviour for callers that pass a string",
                f"    result = [item for item in values_{n % 13} if item.ready]",
            )
        )
        lines.append(line)
        size += len(line) + 1
    if i % 37 == 0:
        lines.append("    # TODO: split this module")
    if i % 211 == 0:
        lines.append("    # FIXME: the retry count is a guess")
    if i % 997 == 0:
        lines.append(f"    marker = 'Needle_Token {i}'")
    if i % 4711 == 0:
        lines.append("def handle_request_4711(): pass")
    return "\n".join(lines) + "\n"


def _write_log(path: Path, megabytes: int, rng: random.Random) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    words = ("GET /api/items", "POST /api/orders", "GET /health", "PUT /api/users/7")
    block_lines = []
    for n in range(20_000):
        ms = rng.randint(1, 900)
        block_lines.append(
            f"2026-12-05T00:{n % 60:02d}:{n % 59:02d}.{n % 1000:03d}Z INFO worker-{n % 16} "
            f"{words[n % 4]} status=200 took={ms}ms request_id={rng.getrandbits(48):012x}"
        )
    block = ("\n".join(block_lines) + "\n").encode()
    with open(path, "wb") as f:
        written = 0
        k = 0
        while written < megabytes << 20:
            f.write(block)
            written += len(block)
            k += 1
            if k % 25 == 0:
                f.write(b"2026-12-05T01:00:00Z ERROR worker-3 needle_token lost the lease\n")


# --- the runs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measure:
    seconds: float
    peak_mb: float
    summary: str  # what the call found, to check the clients agree


class PeakSampler:
    """Peak resident memory (VmHWM) of this process's children, sampled every few ms.

    ru_maxrss cannot be used: Linux carries a process's high-water mark across fork
    and exec, so a child would report at least its parent's size at the fork.
    """

    def __init__(self, pids: Callable[[], list[int]], interval: float = 0.005) -> None:
        self.pids = pids
        self.interval = interval
        self.peak_kb: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in self.pids():
                kb = vm_hwm_kb(pid)
                if kb:
                    self.peak_kb[pid] = max(kb, self.peak_kb.get(pid, 0))
            self._stop.wait(self.interval)

    @property
    def max_kb(self) -> int:
        return max(self.peak_kb.values(), default=0)


def vm_hwm_kb(pid: int | str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def child_pids() -> list[int]:
    pids: list[int] = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                pids += [int(p) for p in f.read().split()]
        except OSError:
            continue
    return pids


_CCX_CHILD = r"""
import asyncio, json, sys, time
from pathlib import Path
from bench.grep_scale import PeakSampler, child_pids, vm_hwm_kb
from tools.base import ToolContext
from tools.file_state import FileStateCache
from tools.grep import GrepTool
engine, root, raw = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
tool = GrepTool(engine=engine, timeout_s=600)
params = tool.parse(raw)
ctx = ToolContext(cwd=Path(root), file_state=FileStateCache())
with PeakSampler(child_pids) as rg_peak:
    start = time.perf_counter()
    result = asyncio.run(tool.run(params, ctx))
    seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "python_kb": vm_hwm_kb("self"), "rg_kb": rg_peak.max_kb,
                  "engine": result.meta.get("engine"), "display": result.display}))
"""


def run_ccx(engine: str, root: Path, raw: dict[str, Any]) -> Measure:
    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-c", _CCX_CHILD, engine, str(root), json.dumps(raw)],
        capture_output=True,
        text=True,
        cwd=repo,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"ccx {engine} run failed: {proc.stderr.strip()[-2000:]}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    if data["engine"] != engine:
        raise RuntimeError(f"asked for the {engine} engine, {data['engine']} ran")
    # Python and rg run at once: their peaks added are the most the two can hold together.
    return Measure(data["seconds"], (data["python_kb"] + data["rg_kb"]) / 1024, data["display"])


def claude_rg_args(raw: dict[str, Any]) -> list[str]:
    """The arguments Claude Code 2.1.328's Grep tool gives ripgrep for this input."""
    mode = raw.get("output_mode", "files_with_matches")
    args = ["--hidden", "--no-follow"]
    for vcs in VCS_DIRS:
        args += ["--glob", f"!{vcs}"]
    args += ["--max-columns", "500"]
    if raw.get("multiline"):
        args += ["-U", "--multiline-dotall"]
    if raw.get("-i"):
        args.append("-i")
    if mode == "files_with_matches":
        args.append("-l")
    elif mode == "count":
        args += ["-c", "-H"]
    args.append("--json" if mode == "content" else "--null")
    if mode == "content":
        args.append("-n")
        if "-C" in raw:
            args += ["-C", str(raw["-C"])]
    pattern = raw["pattern"]
    args += ["-e", pattern] if pattern.startswith("-") else [pattern]
    if "type" in raw:
        args += ["--type", raw["type"]]
    if "glob" in raw:
        args += ["--glob", raw["glob"]]
    return args


def run_claude(root: Path, raw: dict[str, Any]) -> Measure:
    args = claude_rg_args(raw)
    start = time.perf_counter()
    proc = subprocess.Popen(
        ["rg", *args, str(root)],
        executable=str(CLAUDE),
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    chunks = []
    with PeakSampler(lambda: [proc.pid]) as peak:
        while chunk := proc.stdout.read(1 << 16):
            chunks.append(chunk)
        proc.wait()
    out = b"".join(chunks)
    if raw.get("output_mode", "files_with_matches") == "files_with_matches":
        _newest_first(out)
    seconds = time.perf_counter() - start
    records = out.count(b"\n") + out.count(b"\0")
    size = len(out)
    return Measure(seconds, peak.max_kb / 1024, f"{size} bytes, {records} records")


def _newest_first(out: bytes) -> list[str]:
    """What Claude Code's Grep does with rg's list of files: stat each, newest first."""
    paths = sorted(os.fsdecode(p) for p in out.split(b"\0") if p)
    timed = []
    for path in paths:
        try:
            timed.append((-os.stat(path).st_mtime, path))
        except OSError:
            timed.append((0.0, path))
    return [path for _, path in sorted(timed)]


ENGINES = ("rg", "python", "claude")


def rows(
    files: int = 100_000,
    engines: tuple[str, ...] = ENGINES,
    repeat: int = 5,
    queries: list[tuple[str, dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """One row per query: for each engine its median seconds and peak MB, and what it found.

    Engine names: "rg" (ccx's Grep on ripgrep), "python" (ccx's fallback), "claude"
    (the rg Claude Code runs, with its arguments). Ratios to Claude Code are included
    when both ran.
    """
    root = generate(layout_for(files))
    table = []
    for name, raw in queries or QUERIES:
        row: dict[str, Any] = {"query": name, "input": raw}
        runs: dict[str, list[Measure]] = {engine: [] for engine in engines}
        for attempt in range(repeat):  # interleaved, so a busy moment hits every engine alike
            for engine in engines:
                if engine == "python" and attempt:
                    continue  # the fallback is slow; once is enough
                runs[engine].append(
                    run_claude(root, raw) if engine == "claude" else run_ccx(engine, root, raw)
                )
        for engine, measures in runs.items():
            row[engine] = {
                "seconds": statistics.median(m.seconds for m in measures),
                "peak_mb": max(m.peak_mb for m in measures),
                "found": measures[-1].summary,
            }
        if "claude" in row:
            for engine in ("rg", "python"):
                if engine in row:
                    row[engine]["vs_claude"] = row[engine]["seconds"] / row["claude"]["seconds"]
        table.append(row)
    return table


def grep_rows(repo: Path, quick: bool) -> list[tuple[str, str, str]]:
    """bench/scale.py's grep rows: (query, ccx's rg time and memory, Claude Code's rg).

    The queries run on this script's own generated repository (the 100,000-file layout,
    5,000 files with ``quick``), not on ``repo``: its content is made for these queries."""
    del repo
    table = rows(files=5_000 if quick else 100_000, engines=("rg", "claude"), repeat=3)
    out = []
    for row in table:
        ccx, claude = row["rg"], row["claude"]
        out.append(
            (
                f"grep: {row['query']}",
                f"{ccx['seconds']:.3f} s, {ccx['peak_mb']:.0f} MB ({ccx['vs_claude']:.2f}x)",
                f"{claude['seconds']:.3f} s, {claude['peak_mb']:.0f} MB",
            )
        )
    return out


def format_table(table: list[dict[str, Any]], engines: tuple[str, ...]) -> str:
    head = f"{'query':<20}" + "".join(f"{e + ' s':>11}{e + ' MB':>10}" for e in engines)
    if "claude" in engines:
        head += "".join(f"{e + '/CC':>10}" for e in engines if e != "claude")
    lines = [head]
    for row in table:
        line = f"{row['query']:<20}"
        for e in engines:
            line += f"{row[e]['seconds']:>11.3f}{row[e]['peak_mb']:>10.0f}"
        if "claude" in engines:
            line += "".join(f"{row[e]['vs_claude']:>9.2f}x" for e in engines if e != "claude")
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    engines = tuple(e for e in args.engines.split(",") if e)
    if "claude" in engines and not CLAUDE.exists():
        print(f"Claude Code is not at {CLAUDE}: leaving it out", file=sys.stderr)
        engines = tuple(e for e in engines if e != "claude")
    layout = layout_for(args.files)
    start = time.perf_counter()
    generate(layout)
    print(
        f"repository: {layout.root} ({args.files:,} files; ready in {time.perf_counter() - start:.0f} s)"
    )
    table = rows(args.files, engines, args.repeat)
    print(json.dumps(table, indent=1) if args.json else format_table(table, engines))
    print("seconds: median wall time; MB: peak resident memory (ccx: Python + its rg)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
