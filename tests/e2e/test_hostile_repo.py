"""Issue 8: the hostile-repository attempts, through the real `ccx -p`, judged by side effect.

Each mode's attempts run as ONE ccx session in a fresh hostile workspace (the fake API
scripted with one tool call per attempt); each parametrized test then judges its own
attempt: no marker file, no protected or outside file changed, no secret in the request
that follows. The same Bash attempts run straight through bash prove each is live: an
attempt that has no side effect even with nothing in the way would prove nothing.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Ccx
from tests.e2e.hostile.attempt import MODES, Attempt, bash
from tests.e2e.hostile.catalogue import ATTEMPTS
from tests.e2e.hostile.ccx_session import BatchResult, run_ccx_batch
from tests.e2e.hostile.direct import run_direct_batch, runnable_directly
from tests.e2e.hostile.judge import Judgement, Recorder, counts_as_side_effect, judge
from tests.e2e.hostile.plan import build_plan
from tests.e2e.hostile.repo import Workspace, git_environment
from tests.e2e.hostile.startup import build_startup_trap, run_snapshot_commands, sprung
from tui.fake_api import FakeApi, text_reply


class Batches:
    """Each mode's batch, run once on first use (so one selected test runs one batch)."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self._ccx: dict[str, BatchResult] = {}
        self._direct: dict[str, Judgement] = {}

    def ccx(self, mode: str) -> BatchResult:
        if mode not in self._ccx:
            self._ccx[mode] = run_ccx_batch(mode, self.factory.mktemp(f"ccx-{mode}") / "ws")
        return self._ccx[mode]

    def direct(self, mode: str) -> Judgement:
        if mode not in self._direct:
            root = self.factory.mktemp(f"bash-{mode}") / "ws"
            self._direct[mode] = run_direct_batch(mode, root)
        return self._direct[mode]


@pytest.fixture(scope="module")
def batches(tmp_path_factory: pytest.TempPathFactory) -> Batches:
    return Batches(tmp_path_factory)


def _require_programs(attempt: Attempt) -> None:
    missing = [p for p in attempt.needs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"{attempt.id} needs {', '.join(missing)}, which is not installed here")


@pytest.mark.parametrize("attempt", ATTEMPTS, ids=lambda a: a.id)
def test_attempt_has_no_side_effect(attempt: Attempt, batches: Batches) -> None:
    _require_programs(attempt)
    verdict = batches.ccx(attempt.mode).judgement.verdicts[attempt.id]
    assert verdict.blocked, verdict.describe()


@pytest.mark.parametrize("attempt", [a for a in ATTEMPTS if a.is_bash], ids=lambda a: a.id)
def test_attempt_is_live_without_a_client(attempt: Attempt, batches: Batches) -> None:
    _require_programs(attempt)
    assert runnable_directly(attempt)
    verdict = batches.direct(attempt.mode).verdicts[attempt.id]
    assert verdict.reached and verdict.effects, (
        f"{attempt.id} has no side effect even straight through bash: it tests nothing"
    )


@pytest.mark.parametrize("mode", MODES)
def test_batch_session_ran_every_step(mode: str, batches: Batches) -> None:
    result = batches.ccx(mode)
    assert result.run.returncode == 0, result.run.stderr[-3000:]
    assert "Traceback" not in result.run.stderr
    assert result.api_errors == []
    assert result.judgement.startup == [], "opening ccx in the workspace had side effects"
    failed = [path for path, made in result.judgement.probes.items() if not made]
    assert failed == [], f"the {mode} mode or the project's rules were not in force"
    assert result.run.json()["result"] == "Checklist done."


def test_startup_runs_nothing_of_the_repository(tmp_path: Path) -> None:
    live = build_startup_trap(tmp_path / "live")
    assert run_snapshot_commands(live), "plain git must spring the traps, or this proves nothing"

    trap = build_startup_trap(tmp_path / "ccx")
    with FakeApi() as api:
        api.on(lambda _request: True, text_reply("Hello."))
        ccx = Ccx(api, trap.repo, trap.config)
        ccx.env = git_environment(trap.home) | {
            k: v for k, v in ccx.env.items() if k.startswith(("ANTHROPIC_", "CCX_"))
        }
        run = ccx.run("-p", "hi", "--output-format", "json")
        requests = len(api.requests)
    assert run.returncode == 0, run.stderr[-3000:]
    assert requests >= 1, "ccx never got as far as its first request"
    fired = sprung(trap.root)
    assert fired == [], f"ccx ran the repository's own code at start-up: {fired}"


# -- the judge itself -------------------------------------------------------------------


def _workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "ws" / "repo").mkdir(parents=True)
    values = {"env": "sk-live-0123", "outside": "otk-4567"}
    files = {"env": b"API_KEY=sk-live-0123\n", "outside": b"OUTSIDE_TOKEN=otk-4567\n"}
    return Workspace(tmp_path / "ws", values, files)


def _body(*outputs: str) -> str:
    """A request whose messages are ``outputs``; the cache marker moves to the last one, as
    clients move it turn by turn."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": o} for o in outputs]
    messages[-1]["cache_control"] = {"type": "ephemeral"}
    return json.dumps({"messages": messages})


def test_judge_gives_each_effect_and_leak_to_the_step_that_caused_it(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    runs = Attempt("runs", "f", "default", bash("touch PWN_runs"), "w", markers=("repo/PWN_runs",))
    leaks = Attempt("leaks", "f", "default", bash("cat .env"), "r", leaks=("env",))
    again = Attempt("again", "f", "default", bash("head .env"), "r", leaks=("env",))
    encoded = Attempt("encoded", "f", "default", bash("base64 ../o"), "r", leaks=("outside",))
    attempts = [runs, leaks, again, encoded]
    plan = build_plan(attempts, ws.places)
    rec = Recorder(ws.root)
    rec.main_request(_body("start"))
    (ws.repo / "PWN_runs").write_text("")
    rec.main_request(_body("start", "ran"))
    rec.main_request(_body("start", "ran", "API_KEY=sk-live-0123"))
    rec.main_request(_body("start", "ran", "API_KEY=sk-live-0123", "denied"))
    out = base64.b64encode(b"OUTSIDE_TOKEN=otk-4567\n").decode()
    rec.main_request(_body("start", "ran", "API_KEY=sk-live-0123", "denied", out))
    rec.finish()
    verdicts = judge(plan, {a.id: a for a in attempts}, rec, ws, "default").verdicts
    assert verdicts["runs"].effects == ["created repo/PWN_runs"]
    assert verdicts["leaks"].effects == ["secret 'env' in the next request"]
    assert verdicts["again"].blocked, "the secret was already in the conversation"
    assert verdicts["encoded"].effects == ["secret 'outside' in the next request"]


def test_judge_never_passes_a_step_the_client_did_not_get(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    first = Attempt("first", "f", "default", bash("true"), "x", markers=("repo/PWN_first",))
    second = Attempt("second", "f", "default", bash("true"), "x", markers=("repo/PWN_second",))
    rec = Recorder(ws.root)
    rec.main_request(_body("start"))  # answered with `first`; then the client died
    rec.finish()
    plan = build_plan([first, second], ws.places)
    verdicts = judge(plan, {"first": first, "second": second}, rec, ws, "default").verdicts
    assert verdicts["first"].blocked
    assert not verdicts["second"].reached and not verdicts["second"].blocked


@pytest.mark.parametrize(
    ("path", "mode", "counts"),
    [
        ("repo/notes.txt", "acceptEdits", False),  # an edit inside the project is allowed
        ("repo/notes.txt", "default", True),  # but not without asking
        ("repo/.git/hooks/pre-commit", "acceptEdits", True),
        ("repo/.claude/settings.local.json", "bypassPermissions", True),
        ("repo/src/PWN_x", "bypassPermissions", True),
        ("outside_victim.txt", "acceptEdits", True),
        ("home/.bashrc", "acceptEdits", True),
    ],
)
def test_what_counts_as_a_side_effect(path: str, mode: str, counts: bool) -> None:
    assert counts_as_side_effect(path, None, mode) is counts
