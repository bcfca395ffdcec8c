"""The command behind bench/economics.py: prepare, run both clients, print the table, save the JSON.

    .venv/bin/python bench/economics.py [--client ccx|cc|both] [--only PATTERN] [--json]
                                        [--cc-from FILE|latest|baseline] [--cc-runs N] [--jobs N] [--out DIR] [--list]

Every run's figures are saved to bench/results/economics-<time>-<client>.json;
Claude Code's rows are also merged into bench/results/economics-cc-latest.json
(the newest row of each run), which `--cc-from latest` reuses for fast runs of
ccx alone, as `--cc-from baseline` reuses the committed cc_baseline.json.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.economics import family, runner, table

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
CC_LATEST = RESULTS / "economics-cc-latest.json"
CC_BASELINE = (
    Path(__file__).resolve().parent / "cc_baseline.json"
)  # committed: Claude Code's "before" rows


def default_referee() -> Path:
    """$CCX_REFEREE, else the shared/bench folder beside the main checkout."""
    if os.environ.get("CCX_REFEREE"):
        return Path(os.environ["CCX_REFEREE"])
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    main = Path(common).parent if common else ROOT
    return main.parent / "shared" / "bench"


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="bench/economics.py", description="ccx and Claude Code side by side on the referee"
    )
    ap.add_argument("--client", choices=["ccx", "cc", "both"], default="both")
    ap.add_argument(
        "--only",
        default="",
        help="comma-separated run ids, families or globs (e.g. gen*-w100,spotter)",
    )
    ap.add_argument(
        "--json",
        action="store_true",
        help="print the JSON document instead of the table (the table goes to stderr)",
    )
    ap.add_argument(
        "--cc-from",
        default="",
        help="reuse Claude Code's rows from an earlier JSON: a path, 'latest' (the newest cc row of each run, "
        "this worktree) or 'baseline' (the committed before-run rows)",
    )
    ap.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    ap.add_argument(
        "--out",
        default="",
        help="work folder (default /tmp/econbench-<worktree hash>: keep it, its length is in the prompt)",
    )
    ap.add_argument(
        "--referee",
        default="",
        help="the referee folder (default $CCX_REFEREE or ../shared/bench of the main checkout)",
    )
    ap.add_argument(
        "--thinking-tokens",
        type=int,
        default=500,
        help="the referee's thinking: each agent step of a request with thinking on starts with "
        "a signed thought of about N tokens, and its thinking rules are enforced; both clients "
        "run with thinking on (default 500; 0: thinking off for both)",
    )
    ap.add_argument("--list", action="store_true", help="list the runs and exit")
    ap.add_argument(
        "--cc-runs",
        type=int,
        default=1,
        help="run Claude Code N times a run and take the median (its figures vary run to run)",
    )
    ap.add_argument(
        "--rescore",
        action="store_true",
        help="recompute the rows from the last runs' folders without running the clients",
    )
    return ap.parse_args(argv)


def load_cc(
    path: str, sessions: dict[str, str], thinking_tokens: int = 0
) -> tuple[dict[str, dict[str, Any]], str]:
    """Claude Code's rows from an earlier document, only for runs whose session is still the
    same and that thought as long as this run's (a row without the figure ran without)."""
    p = {"latest": CC_LATEST, "baseline": CC_BASELINE}.get(path) or Path(path)
    doc = json.loads(p.read_text())
    rows = {r["id"]: r["cc"] for r in doc["runs"] if r.get("cc")}
    stale = sorted(i for i in rows if (doc.get("sessions") or {}).get(i) != sessions.get(i))
    unlike = sorted(
        i for i in rows if i not in stale and rows[i].get("thinking_tokens", 0) != thinking_tokens
    )
    for i in stale + unlike:
        del rows[i]
    note = f"CC column: NOT from this run; from {p} ({doc.get('created', '?')}, ccx {doc.get('git', '?')})"
    if stale:
        note += f"\nWARNING: sessions changed since, no CC figures for: {', '.join(stale)}"
    if unlike:
        note += (
            f"\nWARNING: Claude Code thought differently there (not --thinking-tokens "
            f"{thinking_tokens}), no CC figures for: {', '.join(unlike)}"
        )
    return rows, note


def save_cc_latest(doc: dict[str, Any]) -> None:
    """Claude Code's newest row of every run, over earlier cc runs of the same sessions."""
    rows: dict[str, dict[str, Any]] = {}
    if CC_LATEST.exists():
        old = json.loads(CC_LATEST.read_text())
        same = old.get("sessions") or {}
        rows = {
            r["id"]: r
            for r in old["runs"]
            if r.get("cc") and same.get(r["id"]) == doc["sessions"].get(r["id"])
        }
    for r in doc["runs"]:
        if r.get("cc"):
            rows[r["id"]] = {
                **r,
                "ccx": None,
                "ratio": None,
                "cc": {**r["cc"], "created": doc["created"]},
            }
    order = [r.id for r in family.all_runs()]
    latest = {
        **doc,
        "clients": ["cc"],
        "runs": sorted(
            rows.values(), key=lambda r: order.index(r["id"]) if r["id"] in order else len(order)
        ),
    }
    CC_LATEST.write_text(json.dumps(latest, indent=1))


def git_head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()


def execute(
    runs: list[family.Run], clients: list[str], a: argparse.Namespace, referee: Path, out: Path
) -> dict[tuple[str, str], dict[str, Any]]:
    src = out / "src"
    os.environ.setdefault("CCX", str(ROOT / ".venv" / "bin" / "ccx"))
    # Claude Code's runs are the slow ones: start them first so the pool drains evenly
    jobs = [
        (r, c, k)
        for c in sorted(clients)
        for r in runs
        for k in range(a.cc_runs if c == "cc" else 1)
    ]
    samples: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with cf.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        if a.rescore:
            futs = {
                ex.submit(runner.score, r, c, src, out, referee, k): (r, c, k) for r, c, k in jobs
            }
        else:
            futs = {
                ex.submit(runner.run_one, r, c, src, out, referee, k, a.thinking_tokens): (r, c, k)
                for r, c, k in jobs
            }
        for f in cf.as_completed(futs):
            r, c, k = futs[f]
            try:
                row = f.result()
            except Exception as e:  # one broken run must not lose the others' figures
                print(f"  {r.id:<22} {c:<3} FAILED: {e!r}", file=sys.stderr, flush=True)
                continue
            samples.setdefault((r.id, c), []).append(row)
            print(
                f"  {r.id:<22} {c:<3}{f' #{k + 1}' if k else ''} {row['wall']:>6.1f}s "
                f"input_equiv {row['input_equiv']} finished {row['ok']} {row['run']}",
                file=sys.stderr,
                flush=True,
            )
    rows = {key: runner.median_row(rs) for key, rs in samples.items()}
    return rows


def document(
    pairs: list[tuple[family.Run, Any, Any]],
    sessions: dict[str, str],
    clients: list[str],
    cc_from: str,
    wall: float,
    thinking_tokens: int = 0,
) -> dict[str, Any]:
    """The JSON document: every run's rows for both clients and the targets."""
    doc = {
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git": git_head(),
        "sessions": sessions,
        "clients": clients,
        "cc_from": cc_from or None,
        "thinking_tokens": thinking_tokens,
        "wall_s": wall,
        "runs": [
            {
                "id": r.id,
                "family": r.family,
                "window": r.window,
                "ccx": x,
                "cc": c,
                "ratio": table.ratio(x, c),
            }
            for r, x, c in pairs
        ],
        "targets": [{"target": n, "pass": ok, "figures": f} for n, ok, f in table.targets(pairs)],
    }
    return doc


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    runs = family.select(family.all_runs(), a.only)
    if a.list or not runs:
        for r in family.all_runs():
            print(f"{r.id:<22} {r.family:<12} {r.window // 1000}K  ({r.source})")
        return 0 if runs else 2
    clients = ["ccx", "cc"] if a.client == "both" else [a.client]
    referee = Path(a.referee) if a.referee else default_referee()
    archive = referee / "replay" / "spotter.tar.xz"
    if not (referee / "fakeapi.py").exists() or not archive.exists():
        print(f"no referee at {referee} (set --referee or $CCX_REFEREE)", file=sys.stderr)
        return 2
    out = (
        Path(a.out)
        if a.out
        else Path(f"/tmp/econbench-{hashlib.sha1(str(ROOT).encode()).hexdigest()[:8]}")
    )
    sessions = family.session_hashes(family.prepare(out / "src", archive))
    cc_rows, cc_note = ({}, "")
    if a.cc_from:
        if "cc" in clients:
            print(
                "--cc-from replaces Claude Code's runs: use it with --client ccx", file=sys.stderr
            )
            return 2
        cc_rows, cc_note = load_cc(a.cc_from, sessions, a.thinking_tokens)
    t0 = time.time()
    rows = execute(runs, clients, a, referee, out)
    wall = round(time.time() - t0, 1)
    pairs = [
        (r, rows.get((r.id, "ccx")), rows.get((r.id, "cc")) or cc_rows.get(r.id)) for r in runs
    ]
    doc = document(pairs, sessions, clients, a.cc_from, wall, a.thinking_tokens)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"economics-{doc['created'].replace(':', '')[:17]}-{a.client}.json"
    path.write_text(json.dumps(doc, indent=1))
    if "cc" in clients:
        save_cc_latest(doc)
    text = table.lines(pairs, cc_note) + table.target_lines(pairs)
    text.append(f"\n{len(runs)} runs x {len(clients)} client(s) in {wall:.0f} s; JSON: {path}")
    print("\n".join(text), file=sys.stderr if a.json else sys.stdout)
    if a.json:
        print(json.dumps(doc, indent=1))
    return 0
