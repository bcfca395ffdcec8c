"""One spotter replay through ccx at any window, on the shared referee.

The referee's ``replay/bench_replays.py`` runs every replay at 200K and 120K;
session-memory compaction is meant to carry a session through a much
smaller window, so this runs one replay at the window given (the server
refuses anything over it, and ccx compacts against it) and prints the
referee's figures plus what ccx's json result says about each compaction:

    python3 bench/replay_window.py --only fa812bfew120 --window 60000

Prints one JSON line: the referee's ``summarize_log`` figures, whether the
final answer came (``ok``), refused requests, how many main requests carried
the first prompt verbatim, and ccx's compactions by method (from its
``compactions[]``) with the notes and summary costs by purpose.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REFEREE = Path(os.environ.get("CCX_REFEREE", "/work/shared/bench"))
ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", default=str(REFEREE / "replay" / "spotter.tar.xz"))
    parser.add_argument("--out", default="/tmp/replays-win")
    parser.add_argument("--only", default="fa812bfew120")
    parser.add_argument("--window", type=int, default=60_000)
    args = parser.parse_args()
    out = Path(args.out)
    src = out / "src"
    if not src.is_dir():
        src.mkdir(parents=True)
        with tarfile.open(args.archive) as archive:
            archive.extractall(src, filter="data")
    print(json.dumps(run(src / args.only, out, args.window)), flush=True)
    return 0


def run(scenario_dir: Path, out: Path, window: int) -> dict:
    work = out / f"{scenario_dir.name}-{window // 1000}k"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(scenario_dir, work, symlinks=True)
    scenario_path = work / "scenario.json"
    scenario = json.loads(scenario_path.read_text())
    scenario["repo"] = str(work / "repo")
    scenario_path.write_text(json.dumps(scenario))
    log = work / "log.jsonl"
    ccx = os.environ.get("CCX", str(ROOT / ".venv" / "bin" / "ccx"))
    command = ["bash", str(REFEREE / "run_ccx.sh"), str(work), str(log), "--window", str(window)]
    command += ["--", "--model", "claude-sonnet-4-5", "--autocompact", str(window)]
    started = time.time()
    subprocess.run(command, capture_output=True, text=True, env={**os.environ, "CCX": ccx})
    summary = subprocess.run(
        [sys.executable, str(REFEREE / "summarize_log.py"), str(log)],
        capture_output=True,
        text=True,
    )
    figures = json.loads(summary.stdout or "{}")
    result = _result(work / "ccx.out")
    records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    mains = [r for r in records if r["kind"] == "main" and not r.get("refused")]
    sys.path.insert(0, str(REFEREE))
    import checks

    kept = sum(scenario["task"] in checks.texts_of_request(r["body"]) for r in mains)
    methods: dict[str, int] = {}
    for record in result.get("compactions", []):
        methods[record.get("method", "?")] = methods.get(record.get("method", "?"), 0) + 1
    return {
        "id": scenario_dir.name,
        "window": window,
        "ok": (result.get("result") or "").strip() == scenario["final"].strip(),
        "steps": len(scenario["steps"]),
        "task_kept": kept,
        "requests_checked": len(mains),
        "compactions_by_method": methods,
        "cost_by_purpose": result.get("cost_by_purpose", {}),
        "wall": round(time.time() - started, 1),
        **figures,
    }


def _result(path: Path) -> dict:
    try:
        return json.loads(path.read_text().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return {}


if __name__ == "__main__":
    sys.exit(main())
