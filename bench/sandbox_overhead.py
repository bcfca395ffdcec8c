"""Cost of the Bash sandbox: median wall time of a trivial command (`true`) through BashTool,
unsandboxed, under Landlock and under bubblewrap (when it works here).

The process first imports what a ccx session has loaded (the SDK, the TUI,
the runtime), because starting a child costs more in a bigger parent: with a
pre-exec function Python must fork instead of using vfork. Each call includes
the protected-path check around a sandboxed command.

    .venv/bin/python bench/sandbox_overhead.py [--calls 200] [--bare]
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
from tools.sandbox import SandboxPolicy, choose_backend


async def median_ms(tool: BashTool, ctx: ToolContext, calls: int) -> float:
    params = tool.parse({"command": "true"})
    assert isinstance(params, BashParams)
    for _ in range(5):  # warm up: the backend probe, the ruleset, the guardian
        await tool.run(params, ctx)
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        result = await tool.run(params, ctx)
        times.append(time.perf_counter() - started)
        assert not result.is_error, result.output
    return statistics.median(times) * 1000


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n\tbare = false\n")
    for name in ("pre-commit", "pre-push", "commit-msg", "post-checkout"):  # like git init's
        (project / ".git" / "hooks" / f"{name}.sample").write_text("#!/bin/sh\nexit 0\n" * 20)
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text('{"permissions": {"allow": []}}\n')
    return project


async def measure(calls: int) -> dict[str, float | str]:
    figures: dict[str, float | str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp))
        ctx = ToolContext(cwd=project, file_state=FileStateCache())
        figures["off_ms"] = await median_ms(BashTool(), ctx, calls)
        for backend in ("landlock", "bwrap"):
            policy = SandboxPolicy(project_dirs=(project,), backend=backend)
            chosen, reason = choose_backend(policy)
            if chosen != backend:
                figures[f"{backend}_ms"] = f"unavailable: {reason}"
                continue
            value = await median_ms(BashTool(sandbox=policy), ctx, calls)
            figures[f"{backend}_ms"] = value
            figures[f"{backend}_overhead_ms"] = value - float(figures["off_ms"])
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--bare", action="store_true", help="skip importing a session's modules")
    args = parser.parse_args()
    if not args.bare:
        import tui.fullscreen.app
        import tui.session.runtime  # noqa: F401  (the SDK and everything a session loads)
    print(json.dumps({"calls": args.calls, **asyncio.run(measure(args.calls))}, indent=2))


if __name__ == "__main__":
    main()
