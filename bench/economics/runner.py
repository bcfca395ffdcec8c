"""One client on one run, against the referee: the folder, the command, the figures.

Each run gets a fresh copy of its scenario folder at OUT/<run id>.<client>
(the same path every time, since the path is part of the system prompt) and is
run with the referee's own run_ccx.sh / run_claude.sh, the way its
replay/bench_replays.py does: ccx gets the window on the server and as
`--autocompact`; Claude Code gets `--autocompact` (its minimum is 100K: below
that it gets 100K and CLAUDE_AUTOCOMPACT_PCT_OVERRIDE lowers its threshold to
the same share of the smaller window) and a server without a window, so
requests over the window are counted from the log instead of refused.
The figures are summarize_log.py's, plus retention (probes.retention over
checks.texts_of_request), the compactions by method (ccx's json result) and
whether the run finished with the scripted final answer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.economics import probes
from bench.economics.family import Run

CCX_MODEL = "claude-sonnet-4-5"
CC_MODEL = "claude-sonnet-4-5-20250929"
CC_MIN_WINDOW = 100_000
CC_SUMMARY_BUFFER = 13_000  # Claude Code compacts this far below its window


def client_command(
    client: str, referee: Path, w: Path, log: Path, window: int, thinking_tokens: int = 0
) -> tuple[list[str], dict[str, str]]:
    """The run's command line. With ``thinking_tokens`` the referee thinks that long on every
    agent step (and enforces the API's thinking rules); both clients think with their own
    defaults (no thinking flag), so the figures are what a user's session costs."""
    env = dict(os.environ)
    thinking = ["--thinking-tokens", str(thinking_tokens)] if thinking_tokens > 0 else []
    if client == "ccx":
        cmd = [
            "bash",
            str(referee / "run_ccx.sh"),
            str(w),
            str(log),
            "--window",
            str(window),
            *thinking,
            "--",
            "--model",
            CCX_MODEL,
            "--autocompact",
            str(window),
        ]
        return cmd, env
    cc_window = max(window, CC_MIN_WINDOW)
    if window < CC_MIN_WINDOW:
        env["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] = str(
            round(100 * (window - CC_SUMMARY_BUFFER) / cc_window)
        )
    cmd = [
        "bash",
        str(referee / "run_claude.sh"),
        str(w),
        str(log),
        "--window",
        "1000000",
        *thinking,
        "--",
        "--model",
        CC_MODEL,
        "--autocompact",
        str(cc_window),
    ]
    return cmd, env


def last_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return {}


def methods(result: dict[str, Any]) -> dict[str, int]:
    """ccx's compactions by method: the record's `method`, else session_memory by kind, else summary."""
    out: Counter[str] = Counter()
    for c in result.get("compactions") or []:
        out[
            c.get("method")
            or ("session_memory" if c.get("kind") == "session_memory" else "summary")
        ] += 1
    return dict(out)


def tool_errors(recs: list[dict[str, Any]]) -> int:
    mains = [r for r in recs if r["kind"] == "main" and not r.get("refused")]
    if not mains:
        return 0
    n = 0
    for m in mains[-1]["body"]["messages"]:
        if isinstance(m.get("content"), list):
            n += sum(
                1 for b in m["content"] if b.get("type") == "tool_result" and b.get("is_error")
            )
    return n


def folder(out: Path, run: Run, client: str, sample: int) -> Path:
    """OUT/<run>.ccx, OUT/<run>.cc, and OUT/<run>.c2, .c3 for Claude Code's repeats (same length)."""
    return out / f"{run.id}.{client if sample == 0 else client[0] + str(sample + 1)}"


def run_one(
    run: Run,
    client: str,
    src: Path,
    out: Path,
    referee: Path,
    sample: int = 0,
    thinking_tokens: int = 0,
) -> dict[str, Any]:
    """Run `client` on `run` in a fresh copy of its folder; returns its row of the table."""
    w = folder(out, run, client, sample)
    shutil.rmtree(w, ignore_errors=True)
    shutil.copytree(src / run.source, w, symlinks=True)
    sc_path = w / "scenario.json"
    sc = json.loads(sc_path.read_text())
    sc["repo"] = str(w / "repo")
    sc_path.write_text(json.dumps(sc))
    cmd, env = client_command(client, referee, w, w / "log.jsonl", run.window, thinking_tokens)
    (w / "thinking.json").write_text(json.dumps({"thinking_tokens": thinking_tokens}))
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    (w / "run.json").write_text(
        json.dumps({"wall": round(time.time() - t0, 1), "run": proc.stdout.strip()[-80:]})
    )
    return score(run, client, src, out, referee, sample)


def score(
    run: Run, client: str, src: Path, out: Path, referee: Path, sample: int = 0
) -> dict[str, Any]:
    """The row of a finished run, from its folder (the log, the client's output) and src's probes."""
    sys.path.insert(0, str(referee))
    import checks  # the referee's: what a request shows

    w = folder(out, run, client, sample)
    log = w / "log.jsonl"
    sc = json.loads((w / "scenario.json").read_text())
    sc["probes"] = json.loads((src / run.source / "scenario.json").read_text()).get("probes")
    ran = json.loads((w / "run.json").read_text()) if (w / "run.json").exists() else {}
    thought = w / "thinking.json"
    thinking = json.loads(thought.read_text()) if thought.exists() else {}
    summary = subprocess.run(
        [sys.executable, str(referee / "summarize_log.py"), str(log)],
        capture_output=True,
        text=True,
    )
    fig = json.loads(summary.stdout or "{}") if summary.returncode == 0 else {}
    recs = checks.load(log) if log.exists() else []
    result = last_json(w / ("ccx.out" if client == "ccx" else "claude.out"))
    over = sum(1 for r in recs if not r.get("refused") and r["tokens"] > run.window)
    row = {
        "id": run.id,
        "family": run.family,
        "window": run.window,
        "client": client,
        "ok": (result.get("result") or "").strip() == sc["final"].strip(),
        "steps": len(sc["steps"]),
        "wall": ran.get("wall", 0.0),
        "run": ran.get("run", ""),
        "input_equiv": fig.get("input_equiv"),
        "summaries": fig.get("compactions", 0),
        "refused": fig.get("refused", 0) + over,
        "peak": fig.get("peak"),
        "requests": fig.get("requests"),
        "cache_write": fig.get("cache_write"),
        "cache_read": fig.get("cache_read"),
        "output": fig.get("output"),
        "tool_errors_in_last": tool_errors(recs),
        "thinking_tokens": thinking.get("thinking_tokens", 0),
        **probes.retention(recs, sc, checks.texts_of_request),
    }
    if client == "ccx":
        row["methods"] = methods(result)
        row["clears"] = sum(
            1 for e in result.get("context_events") or [] if e.get("type") == "microcompact"
        )
    return row


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One row for repeated runs of a client: the median by input_equiv, with every sample's figure."""
    ranked = sorted(rows, key=lambda r: r.get("input_equiv") or 0)
    row = dict(ranked[(len(ranked) - 1) // 2])
    if len(rows) > 1:
        row["samples"] = [r.get("input_equiv") for r in ranked]
        row["summaries_samples"] = [r.get("summaries") for r in ranked]
    return row
