"""One batch through the real ``ccx -p`` against ccx's fake Messages API: a fresh hostile
workspace, one scripted tool call per request, a snapshot at every request, then the
judgement."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.conftest import Ccx, Run
from tests.e2e.hostile.attempt import Attempt
from tests.e2e.hostile.catalogue import BY_ID, in_mode
from tests.e2e.hostile.judge import Judgement, Recorder, judge
from tests.e2e.hostile.plan import FINAL, PROBES, TASK, Step, build_plan, is_main_request
from tests.e2e.hostile.repo import Workspace, build_workspace, git_environment
from tui.fake_api import FakeApi, RecordedRequest, Reply, text_reply, tool_reply

BATCH_TIMEOUT_S = 240


@dataclass
class BatchResult:
    workspace: Workspace
    plan: list[Step]
    judgement: Judgement
    run: Run
    api_errors: list[str]


def scripted_responder(
    plan: Sequence[Step], recorder: Recorder
) -> Callable[[RecordedRequest], Reply]:
    """Answers main request *i* with step *i* (then the final text), side calls with "ok"."""

    def respond(request: RecordedRequest) -> Reply:
        if not is_main_request(request.body):
            return text_reply("ok")
        index = recorder.main_request(json.dumps(request.body))
        if index < len(plan):
            call = plan[index].call
            return tool_reply((call.tool, dict(call.input)))
        return text_reply(FINAL)

    return respond


def run_ccx_batch(mode: str, root: Path, attempts: Sequence[Attempt] | None = None) -> BatchResult:
    """Run the attempts of ``mode`` (all of them by default) as one ``ccx -p`` session."""
    attempts = list(attempts if attempts is not None else in_mode(mode))
    ws = build_workspace(root, attempts)
    plan = build_plan(attempts, ws.places, PROBES[mode])
    recorder = Recorder(ws.root)
    with FakeApi() as api:
        api.on(lambda _request: True, scripted_responder(plan, recorder))
        ccx = Ccx(api, ws.repo, ws.config)
        ccx.env = git_environment(ws.home) | {
            k: v for k, v in ccx.env.items() if k.startswith(("ANTHROPIC_", "CCX_"))
        }
        run = ccx.run(
            "-p", TASK, "--permission-mode", mode, "--output-format", "json",
            timeout=BATCH_TIMEOUT_S,
        )  # fmt: skip
        errors = list(api.errors)
    recorder.finish()
    return BatchResult(ws, plan, judge(plan, BY_ID, recorder, ws, mode), run, errors)
