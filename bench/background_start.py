"""How long Bash with run_in_background takes to return (the model waits this long), in ms.

.venv/bin/python bench/background_start.py [--runs 30]

Calls the real BashTool with a registry, as the loop does, on `sleep 5`, and
times each call from start to its result; the jobs are stopped afterwards.
The process guard is started by a warm-up call first (it is started once per
ccx process). Prints the median and the worst.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.base import ToolContext
from tools.bash import BashParams, BashTool
from tools.file_state import FileStateCache
from tools.jobs import JobRegistry


async def measure(runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        jobs = JobRegistry(Path(tmp) / "session")
        bash = BashTool(jobs=jobs)
        ctx = ToolContext(cwd=Path(tmp), file_state=FileStateCache(), session_dir=Path(tmp))
        params = BashParams(command="sleep 5", run_in_background=True)
        await bash.run(params, ctx)  # warm-up: the process guard starts here
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            result = await bash.run(params, ctx)
            times.append((time.perf_counter() - started) * 1000)
            assert not result.is_error, result.output
        await jobs.stop_all()
    return {"runs": runs, "median_ms": round(statistics.median(times), 2),
            "max_ms": round(max(times), 2)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    print(json.dumps(asyncio.run(measure(parser.parse_args().runs))))


if __name__ == "__main__":
    main()
