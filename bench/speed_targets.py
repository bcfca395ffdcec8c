"""The speed bounds unit tests used to assert, measured here; the tests keep the behaviour.

Each figure is the median over --rounds runs, printed against the bound its test
asserted (so one slow moment of a loaded machine does not decide it). The
workloads are the tests' own, imported from them:

- the system prompt with git branch, status and log (warm): <= 500 ms, target 100 ms
  (tests/agent/instructions/test_system_prompt.py);
- Read of a 16 KiB module, median over 40 files: <= 1 ms (tests/tools/test_read.py);
- a round of two 0.3 s read-only tool calls then two short mutating ones: <= 0.55 s,
  as the read-only pair overlaps (tests/agent/loop/test_agent.py);
- three matching 0.4 s hooks: <= 1 s, as they run together
  (tests/agent/instructions/test_hooks.py);
- the fake API checking and answering a ~700 KB, 40-result request: <= 250 ms,
  typically ~5 ms (tests/fake_api/test_streaming.py);
- Bash streaming 50 MB of output to its cap and a saved file: <= 5 s (tests/tools/test_bash.py);
- loading a 2,000-message (~20 MB) session: <= 1 s, the whole budget of resuming in
  bench/tui_resume.py; listing the sessions alongside (tests/agent/sessions/test_session.py).

    .venv/bin/python bench/speed_targets.py [--rounds 5] [--json]

Exits 1 if a figure is over its bound.
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
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class Figure(NamedTuple):
    name: str
    seconds: float  # the median over the rounds
    bound_s: float
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.seconds <= self.bound_s


def median_of(rounds: int, once: Callable[[], float]) -> float:
    return statistics.median(once() for _ in range(rounds))


def system_prompt(work: Path, rounds: int) -> Figure:
    from agent.instructions.system_prompt import build_system_prompt
    from tests.agent.instructions.test_system_prompt import make_git_repo

    repo = make_git_repo(work / "repo")
    build_system_prompt(repo, "claude-sonnet-5-5", [])  # warm the static text and git

    def once() -> float:
        started = time.perf_counter()
        build_system_prompt(repo, "claude-sonnet-5-5", [])
        return time.perf_counter() - started

    return Figure("system prompt with git status and log", median_of(rounds, once), 0.5)


def read_16_kib(work: Path, rounds: int) -> Figure:
    from tests.tools.test_read import sixteen_kib_module
    from tools.base import ToolContext
    from tools.file_state import FileStateCache
    from tools.read import ReadParams, ReadTool

    files = [sixteen_kib_module(work / f"f{i}.py") for i in range(40)]
    ctx = ToolContext(cwd=work, file_state=FileStateCache())
    read = ReadTool()

    async def timings() -> list[float]:
        seen = []
        for path in files:
            started = time.perf_counter()
            result = await read.run(ReadParams(file_path=str(path)), ctx)
            seen.append(time.perf_counter() - started)
            assert not result.is_error, result.output
        return seen

    every = [t for _ in range(rounds) for t in asyncio.run(timings())]
    return Figure("Read of a 16 KiB module (median of 40 files)", statistics.median(every), 0.001)


def read_only_calls_overlap(work: Path, rounds: int) -> Figure:
    from tests.agent.loop.test_agent import Nap, make_agent
    from tui.fake_api import FakeApi, text_reply, tool_reply

    async def once() -> float:
        with FakeApi() as api:
            api.add(
                tool_reply(
                    ("Nap", {"seconds": 0.3, "label": "a"}),
                    ("Nap", {"seconds": 0.3, "label": "b"}),
                    ("MutatingNap", {"seconds": 0.05, "label": "m"}),
                    ("Nap", {"seconds": 0.05, "label": "c"}),
                ),
                text_reply("done"),
            )
            Nap.log.clear()
            agent = make_agent(api, work, [])
            try:
                started = time.perf_counter()
                outcome = await agent.submit("go")
                elapsed = time.perf_counter() - started
            finally:
                await agent.client.client.close()  # make_agent's client is its caller's to close
            assert outcome.result == "done" and api.errors == [], api.errors
            return elapsed

    name = "two 0.3 s read-only calls + two mutating ones"
    return Figure(name, median_of(rounds, lambda: asyncio.run(once())), 0.55, "sequential: 0.7 s")


def hooks_run_together(work: Path, rounds: int) -> Figure:
    from tests.agent.instructions.test_hooks import group, runner

    hooks = runner(
        work,
        {
            "SessionStart": [
                group("sleep 0.4; echo one"),
                group("sleep 0.4; echo two", "startup"),
                {"hooks": [{"type": "command", "command": "sleep 0.4; echo three"}]},
            ]
        },
    )

    async def once() -> float:
        started = time.perf_counter()
        outcome = await hooks.run("SessionStart", "startup", {"source": "startup"})
        elapsed = time.perf_counter() - started
        assert sorted(outcome.additional_context) == ["one", "three", "two"], outcome
        return elapsed

    name = "three matching 0.4 s hooks"
    return Figure(name, median_of(rounds, lambda: asyncio.run(once())), 1.0, "sequential: 1.2 s")


def fake_api_large_request(work: Path, rounds: int) -> Figure:
    from tests.fake_api.conftest import MODEL, make_client
    from tests.fake_api.test_streaming import large_conversation
    from tui.fake_api import FakeApi, text_reply

    messages = large_conversation()
    size_kb = len(json.dumps(messages)) / 1000
    with FakeApi() as api, make_client(api) as client:
        for _ in range(rounds):
            api.add(text_reply("ok"))
            client.messages.create(model=MODEL, max_tokens=10, messages=messages)
        assert api.errors == [], api.errors
        seconds = statistics.median(r.server_seconds for r in api.requests)
    return Figure(f"fake API: a {size_kb:.0f} KB request, server side", seconds, 0.25)


def bash_huge_output(work: Path, rounds: int) -> Figure:
    from tools.base import ToolContext
    from tools.bash import BashParams, BashTool
    from tools.file_state import FileStateCache

    ctx = ToolContext(cwd=work, file_state=FileStateCache(), session_dir=work / "session")

    async def once() -> float:
        started = time.perf_counter()
        result = await BashTool().run(BashParams(command="yes | head -c 50000000"), ctx)
        elapsed = time.perf_counter() - started
        assert not result.is_error and result.meta["cut"] is True, result.output_text()[:500]
        return elapsed

    return Figure("Bash: 50 MB of output", median_of(rounds, lambda: asyncio.run(once())), 5.0)


def session_load(work: Path, rounds: int) -> Figure:
    from agent.sessions.session import list_sessions, load_session
    from tests.agent.sessions.helpers import tool_rounds_session

    cwd = work / "project"
    cwd.mkdir()
    session = tool_rounds_session(cwd)
    size_mb = session.path.stat().st_size / 1e6

    def once() -> float:
        started = time.perf_counter()
        loaded = load_session(session.path)
        elapsed = time.perf_counter() - started
        assert len(loaded.messages) == 2000 and loaded.repairs == []
        return elapsed

    def listing() -> float:
        started = time.perf_counter()
        list_sessions(cwd)
        return time.perf_counter() - started

    seconds = median_of(rounds, once)
    note = f"list_sessions {median_of(rounds, listing) * 1000:.1f} ms"
    return Figure(f"load a 2,000-message session ({size_mb:.0f} MB)", seconds, 1.0, note)


MEASUREMENTS = (
    system_prompt,
    read_16_kib,
    read_only_calls_overlap,
    hooks_run_together,
    fake_api_large_request,
    bash_huge_output,
    session_load,
)


def shown(seconds: float, bound_s: float) -> str:
    return f"{seconds * 1000:.3g} ms" if bound_s < 1 else f"{seconds:.3g} s"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        # no user settings, hooks or sessions of this machine
        os.environ.update(HOME=tmp, CCX_CONFIG_DIR=str(Path(tmp) / "config"))
        for measure in MEASUREMENTS:
            work = Path(tmp) / measure.__name__
            work.mkdir()
            figures.append(measure(work, args.rounds))
    if args.json:
        print(json.dumps([f._asdict() | {"ok": f.ok} for f in figures], indent=2))
    for f in figures:
        line = f"{'PASS' if f.ok else 'FAIL'}  {f.name}: {shown(f.seconds, f.bound_s)}"
        line += f" (bound {shown(f.bound_s, f.bound_s)}{'; ' + f.note if f.note else ''})"
        print(line, file=sys.stderr if args.json else sys.stdout)
    sys.exit(0 if all(f.ok for f in figures) else 1)


if __name__ == "__main__":
    main()
