"""The Bash attempts run straight through bash, with no client in between: the baseline that
shows each attempt is live (it does have its side effect when nothing stops it), judged
by the same judge as the clients."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.e2e.hostile.attempt import Attempt
from tests.e2e.hostile.catalogue import BY_ID, in_mode
from tests.e2e.hostile.judge import Judgement, Recorder, judge
from tests.e2e.hostile.plan import build_plan
from tests.e2e.hostile.repo import build_workspace, git_environment

STEP_TIMEOUT_S = 60


def runnable_directly(attempt: Attempt) -> bool:
    """A Bash attempt whose scaffolding is Bash too, with every program it needs here."""
    calls = (*attempt.before, attempt.call, *attempt.after)
    return all(c.tool == "Bash" for c in calls) and all(shutil.which(p) for p in attempt.needs)


def run_direct_batch(mode: str, root: Path, attempts: Sequence[Attempt] | None = None) -> Judgement:
    """Run each step with ``bash -c`` in the project, a fresh shell per step, as a client
    without any permission check would."""
    chosen = [
        a for a in (attempts if attempts is not None else in_mode(mode)) if runnable_directly(a)
    ]
    ws = build_workspace(root, chosen)
    plan = build_plan(chosen, ws.places)
    recorder = Recorder(ws.root)
    env = git_environment(ws.home)
    messages: list[dict[str, Any]] = []
    for step in plan:
        recorder.main_request(json.dumps({"messages": messages}))
        try:
            done = subprocess.run(
                ["bash", "-c", str(step.call.input["command"])], cwd=ws.repo, env=env,
                stdin=subprocess.DEVNULL, capture_output=True, timeout=STEP_TIMEOUT_S,
            )  # fmt: skip
            output = (done.stdout + done.stderr).decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            output = "timed out"
        messages = [*messages, {"role": "user", "content": output}]
    recorder.main_request(json.dumps({"messages": messages}))
    recorder.finish()
    return judge(plan, BY_ID, recorder, ws, mode)
