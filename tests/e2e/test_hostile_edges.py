"""Issue 17: the attempts at ccx's edges (the warm worker, the sandbox's blind spots, an
untrusted folder, bad input from the new surfaces), through the real `ccx` against the fake
API, each judged only by its side effect.

Each scenario (tests/e2e/hostile/edges_*.py) runs once per sandbox backend when it is about
the sandbox (``CCX_SANDBOX_BACKEND=bwrap`` and ``=landlock``; a backend that cannot run
here is skipped with its reason), else once; each parametrized test then judges one
attempt of it. The permission modes are in the scenarios (``@bypass``, ``@default``,
``@accept`` in an attempt's id). The sandbox attempts are also run with the sandbox off:
each must then have its side effect, or it tests nothing.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.e2e.conftest import CCX
from tests.e2e.hostile.edges import EdgeAttempt, Scenario, Session
from tests.e2e.hostile.edges_catalogue import BY_ID, SCENARIOS
from tests.e2e.hostile.edges_effects import (
    Changed,
    FileState,
    MetadataChanged,
    Outcome,
    Request,
    SessionRun,
    StepSlower,
)
from tests.e2e.hostile.edges_run import Client, ScenarioResult, fake_api, run_scenario
from tests.e2e.hostile.edges_sandbox import batch
from tests.e2e.hostile.edges_workspace import EdgeWorkspace, edges_root
from tools.sandbox import bubblewrap, landlock

BACKENDS = {"bwrap": bubblewrap.unavailable_reason, "landlock": landlock.unavailable_reason}
STRICT = (("CCX_STRICT_INVARIANTS", "1"),)


class Results:
    """Each (scenario, backend) run once, on first use, in a workspace removed afterwards."""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str | None, bool], ScenarioResult] = {}

    def get(self, scenario: Scenario, backend: str | None, sandbox: bool = True) -> ScenarioResult:
        key = (scenario.id, backend, sandbox)
        if key not in self._runs:
            missing = [p for p in scenario.needs if shutil.which(p) is None]
            if missing:
                pytest.skip(f"{scenario.id} needs {', '.join(missing)}, not installed here")
            if backend is not None and (reason := BACKENDS[backend]()) is not None:
                pytest.skip(f"the {backend} backend cannot run here: {reason}")
            env = STRICT if sandbox else (*STRICT, ("CCX_SANDBOX", "0"))
            client = Client("ccx", CCX, backend, env)
            root = Path(tempfile.mkdtemp(prefix="test-", dir=edges_root())) / "ws"
            try:
                self._runs[key] = run_scenario(scenario, client, root, fake_api)
            finally:
                shutil.rmtree(root.parent, ignore_errors=True)
        return self._runs[key]


@pytest.fixture(scope="module")
def results() -> Results:
    return Results()


# A limit the README states: Landlock has no rights for metadata (chmod, chown, times), so
# under it a sandboxed command can still change those of a file outside the project. Strict:
# should a kernel or ccx cover them one day, the test says so.
LANDLOCK_METADATA = pytest.mark.xfail(
    strict=True, reason="Landlock does not cover chmod, chown or timestamps (README: Safety)"
)


def _cases() -> list[object]:
    cases = []
    for scenario in SCENARIOS:
        backends = tuple(BACKENDS) if scenario.sandboxed else (None,)
        for attempt in scenario.attempts_for("ccx"):
            for backend in backends:
                name = attempt.id if backend is None else f"{attempt.id}-{backend}"
                limit = backend == "landlock" and isinstance(attempt.effect, MetadataChanged)
                marks = [LANDLOCK_METADATA] if limit else []
                cases.append(pytest.param(attempt, backend, id=name, marks=marks))
    return cases


@pytest.mark.parametrize(("attempt", "backend"), _cases())
def test_attempt_has_no_side_effect(
    attempt: EdgeAttempt, backend: str | None, results: Results
) -> None:
    scenario, _ = BY_ID[attempt.id]
    effects = results.get(scenario, backend).verdicts[attempt.id]
    assert effects == [], f"{attempt.id} ({attempt.what}): " + "; ".join(effects)


@pytest.mark.parametrize(
    ("scenario", "backend"),
    [pytest.param(s, b, id=f"{s.id}-{b}" if b else s.id)
     for s in SCENARIOS for b in (tuple(BACKENDS) if s.sandboxed else (None,))],
)  # fmt: skip
def test_every_session_reached_the_api(
    scenario: Scenario, backend: str | None, results: Results
) -> None:
    """An attempt whose session never got going proves nothing (one killed at its timeout,
    a stalled run, is the attempts' business)."""
    for index, run in enumerate(results.get(scenario, backend).runs):
        if run.returncode is None or scenario.sessions[index].may_send_nothing:
            continue
        assert run.requests, f"session {index + 1} sent no request: {run.stderr[-2000:]}"
        assert "Traceback" not in run.stderr, run.stderr[-3000:]


LIVE_BATCH = batch("default")


@pytest.mark.parametrize(
    "attempt",
    [a for a in LIVE_BATCH.attempts if not a.id.startswith("disable_sandbox")],
    ids=lambda a: a.id,
)
def test_sandbox_attempt_is_live_without_the_sandbox(
    attempt: EdgeAttempt, results: Results
) -> None:
    """The allowed script, run with CCX_SANDBOX=0: its side effect must show, or the
    attempt could not fail. (dangerouslyDisableSandbox means nothing with no sandbox.)"""
    effects = results.get(LIVE_BATCH, None, sandbox=False).verdicts[attempt.id]
    assert effects, f"{attempt.id} has no side effect even without the sandbox"


# -- the harness's own parts ------------------------------------------------------------


def test_the_confining_wrapper_confines(tmp_path: Path) -> None:
    """payloads/confine.py, the user's own Landlock confinement of ccx: writes beneath the
    allowed folder work, writes elsewhere do not, and its children inherit it."""
    if landlock.unavailable_reason() is not None:
        pytest.skip(f"no Landlock here: {landlock.unavailable_reason()}")
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    wrapper = Path(__file__).parent / "hostile" / "payloads" / "confine.py"
    script = f"touch {inside}/a; touch {outside}/b; sh -c 'touch {outside}/c'"
    subprocess.run([sys.executable, str(wrapper), str(inside), "--", "sh", "-c", script])
    assert (inside / "a").exists()
    assert not (outside / "b").exists() and not (outside / "c").exists()


def _outcome(
    before: dict[str, FileState], after: dict[str, FileState], runs: list[SessionRun]
) -> Outcome:
    ws = EdgeWorkspace(Path("/nonexistent"), Path("/nonexistent"))
    return Outcome(ws, runs, before, after, {})


def test_changed_and_metadata_changed_tell_content_from_mode() -> None:
    old = {"repo/.git/config": FileState("a", 0o100644, 1), "out/v": FileState("b", 0o100644, 1)}
    new = {"repo/.git/config": FileState("a", 0o100600, 1), "out/v": FileState("b", 0o100644, 2),
           "repo/.husky/pre-commit": FileState("c", 0o100755, 3)}  # fmt: skip
    outcome = _outcome(old, new, [])
    assert Changed("repo/.git/config").found(outcome) == []
    assert MetadataChanged("repo/.git/config").found(outcome) != []
    assert MetadataChanged("out/v").found(outcome) == ["modification time of out/v changed"]
    assert Changed("repo/.husky").found(outcome) == ["created repo/.husky/pre-commit"]


def test_step_slower_times_each_tool_call_by_the_requests_around_it() -> None:
    def request(at: float) -> Request:
        return Request({}, 200, None, at, main=True)

    run = SessionRun(Session(), 0, 40.0, "", "", [request(0), request(1), request(22), request(23)])
    outcome = _outcome({}, {}, [run])
    assert StepSlower(0, 0, 15).found(outcome) == []
    assert StepSlower(0, 1, 15).found(outcome) == ["tool call 2 took 21.0 s (> 15 s)"]
    assert StepSlower(0, 3, 15).found(outcome) == [
        "tool call 4 never came back (the session ended waiting)"
    ]
    assert StepSlower(0, 4, 15).found(outcome) == []  # never got that far: not this check's
