"""Subagents: what starting one costs, and whether four in one message really overlap.

A real session (the session driver, as every front end runs it) against the
fake Messages API, where every subagent request waits a fixed ``--delay``
seconds before its answer starts:

- start overhead: one Agent call whose subagent answers in one request; the
  Agent call's wall time (ToolStarted to ToolFinished) minus the time the
  server spent answering the subagent's request. That is ccx's cost of a
  subagent: building its loop, context manager and tools, the request, the
  stream, the report. Target <= 50 ms (median over --rounds).
- concurrency: one response with four Agent calls against one with one; the
  wall time of the Agent calls, four over one. Target <= 1.3x.

    .venv/bin/python bench/subagents.py [--rounds 9] [--delay 0.5]

Prints one JSON object; exits 1 if a figure misses its target. Figures taken
on a loaded machine are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OVERHEAD_TARGET_MS = 50.0
CONCURRENCY_TARGET = 1.3


class AgentClock:
    """An event sink noting when the Agent calls of each round start and finish."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}
        self.finished: dict[str, float] = {}

    def __call__(self, event: Any) -> None:
        from agent.core.events import ToolFinished, ToolStarted

        if isinstance(event, ToolStarted) and event.name == "Agent":
            self.started[event.tool_use_id] = time.perf_counter()
        elif isinstance(event, ToolFinished) and event.name == "Agent":
            self.finished[event.tool_use_id] = time.perf_counter()

    def span(self, ids: list[str]) -> float:
        return max(self.finished[i] for i in ids) - min(self.started[i] for i in ids)


def _is_subagent(request: Any) -> bool:
    first = request.messages[0]["content"] if request.messages else ""
    text = first if isinstance(first, str) else " ".join(b.get("text", "") for b in first)
    return "SUBTASK" in text


def _prepare(work: Path, url: str) -> Path:
    repo = work / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "README.md").write_text("# bench\n")
    (work / "home").mkdir()
    os.environ.update(
        ANTHROPIC_BASE_URL=url,
        ANTHROPIC_API_KEY="bench-key",
        CCX_CONFIG_DIR=str(work / "config"),
        HOME=str(work / "home"),
        CCX_SKIP_MODELS_API="1",
        CCX_SESSION_MEMORY="0",
    )
    return repo


async def _measure(rounds: int, delay: float) -> dict[str, Any]:
    from tui.fake_api import FakeApi, text_reply, tool_reply
    from tui.session.driver import SessionDriver
    from tui.session.options import RunOptions

    with tempfile.TemporaryDirectory() as tmp, FakeApi() as api:
        repo = _prepare(Path(tmp), api.url)
        api.on(_is_subagent, text_reply("sub report", delay_s=delay))
        clock = AgentClock()
        driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), clock)
        await driver.start()
        try:
            overheads = []
            for n in range(rounds + 1):  # the first round warms imports and connections
                call_id = f"toolu_one{n}"
                call = ("Agent", {"description": "bench", "prompt": f"SUBTASK {n}"}, call_id)
                api.add(tool_reply(call), text_reply("ok"))
                seen = len(api.requests)
                await driver.run(f"round {n}")
                (served,) = [r for r in api.requests[seen:] if _is_subagent(r)]
                if n:
                    overheads.append(clock.span([call_id]) - served.server_seconds)
            one, four = [], []
            for n in range(rounds):
                for width, spans in ((1, one), (4, four)):
                    ids = [f"toolu_w{width}r{n}c{c}" for c in range(width)]
                    calls = [
                        ("Agent", {"description": "bench", "prompt": f"SUBTASK {i}"}, i)
                        for i in ids
                    ]
                    api.add(tool_reply(*calls), text_reply("ok"))
                    await driver.run(f"width {width} round {n}")
                    spans.append(clock.span(ids))
        finally:
            await driver.aclose()
        errors = list(api.errors)
    overhead_ms = statistics.median(overheads) * 1000
    ratio = statistics.median(four) / statistics.median(one)
    return {
        "delay_s": delay,
        "rounds": rounds,
        "start_overhead_ms": round(overhead_ms, 1),
        "start_overhead_ms_max": round(max(overheads) * 1000, 1),
        "start_overhead_target_ms": OVERHEAD_TARGET_MS,
        "one_subagent_s": round(statistics.median(one), 3),
        "four_subagents_s": round(statistics.median(four), 3),
        "four_over_one": round(ratio, 3),
        "four_over_one_target": CONCURRENCY_TARGET,
        "ok": overhead_ms <= OVERHEAD_TARGET_MS and ratio <= CONCURRENCY_TARGET and not errors,
        "api_errors": errors,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--delay", type=float, default=0.5, help="seconds per subagent request")
    args = parser.parse_args()
    figures = asyncio.run(_measure(args.rounds, args.delay))
    print(json.dumps(figures, indent=2))
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
