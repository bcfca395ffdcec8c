"""Issue 17's attempts on ccx's warm worker (ccx only: Claude Code has none).

The worker is turned on (``CCX_WARM=1``) in the workspace's own TMPDIR, XDG_RUNTIME_DIR
and HOME, so no real worker is ever touched; the harness finds its socket as ccx does
(``tui.warm.policy.socket_path()``, run with the session's environment), waits for the
worker a first ``ccx -p`` started, and stops it at the end. The hostile repository's
"test script" (payloads/warm_peer.py, as tests/run.py, allowed by the user's rules) is
what the sandboxed commands run.

- chain: a first run in project A, whose settings set ``env`` (PYTHONPATH with a
  sitecustomize.py, and a variable); in project B a sandboxed command hands the worker a
  run with a SessionStart hook; a run confined by the user (Landlock, NoNewPrivs) writes
  beside the project; a sandboxed command leaves a squatter on the socket; a last run,
  with an API key, must not hand it over.
- the same with a squatter that replaces the socket's folder;
- a slow peer started by a sandboxed command, and one started outside any sandbox: the
  next run must not stall.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.hostile.attempt import bash
from tests.e2e.hostile.edges import CCX_ONLY, EdgeAttempt, Scenario, Session, pause
from tests.e2e.hostile.edges_effects import (
    Created,
    Judged,
    Outcome,
    Sent,
    Slower,
    Stored,
    any_of,
)
from tests.e2e.hostile.edges_workspace import CCX_ROOT, EdgeWorkspace

FAMILY = "warm worker"
PAYLOADS = Path(__file__).resolve().parent / "payloads"
USER_RULES = {"permissions": {"allow": ["Bash(python3 tests/run.py *)", "Bash(env)"]}}
WORKER_START_S = 90  # the worker imports everything first: slow on a loaded machine
SLOW_RUN_S = 25.0  # a run through a sound worker, or in-process, takes a few seconds


def worker_socket(env: dict[str, str]) -> Path:
    """Where ccx, run with ``env``, looks for its worker."""
    code = "from tui.warm import policy; print(policy.socket_path())"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd="/", capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    return Path(done.stdout.strip())


def _worker_pid(path: Path) -> int | None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2)
        try:
            probe.connect(str(path))
        except OSError:
            return None
        creds = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[0]


def wait_for_worker(ws: EdgeWorkspace, client: str) -> None:
    """An action: wait until the worker the last run started takes connections; note its
    socket for the payloads (tests/run.json)."""
    if client != "ccx":
        return
    path = worker_socket(ws.session_env)
    deadline = time.monotonic() + WORKER_START_S
    while _worker_pid(path) is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the warm worker never listened on {path}")
        time.sleep(0.1)
    config_path = ws.repo / "tests" / "run.json"
    config = json.loads(config_path.read_text())
    config_path.write_text(json.dumps(config | {"socket": str(path)}))


def start_outside_dribbler(ws: EdgeWorkspace, client: str) -> None:
    """An action: the slow peer, started by the user's own shell (no sandbox at all)."""
    if client != "ccx":
        return
    env = ws.session_env
    done = subprocess.run(
        [sys.executable, str(ws.repo / "tests" / "run.py"), "dribble"], env=env, cwd=ws.repo,
        capture_output=True, timeout=60,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the slow peer did not start: {done.stderr[-500:]!r}")
    time.sleep(1)  # connected, and its first byte sent


def stop_worker(ws: EdgeWorkspace) -> None:
    """The teardown: the worker on ccx's socket, by pid (only if it is ccx's worker)."""
    if not ws.session_env:
        return
    pid = _worker_pid(worker_socket(ws.session_env))
    if pid is None:
        return
    try:
        line = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return
    if b"tui.warm.worker" in line:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


def _plant(ws: EdgeWorkspace) -> None:
    """Repo B's test script and its notes; project A's settings and sitecustomize.py."""
    ws.write("{repo}/tests/run.py", (PAYLOADS / "warm_peer.py").read_text())
    config = {"python": sys.executable, "ccx_root": str(CCX_ROOT), "out": str(ws.out),
              "repo": str(ws.repo)}  # fmt: skip
    ws.write("{repo}/tests/run.json", json.dumps(config))
    ws.secrets["api_key"] = f"sk-ant-api03-{os.urandom(12).hex()}"
    ws.secrets["from_a"] = f"from-a-{os.urandom(8).hex()}"
    env = {"PYTHONPATH": "{other}/pylib", "EDGES_FROM_A": ws.secrets["from_a"]}
    ws.write("{other}/.claude/settings.json", json.dumps({"env": env}, indent=2))
    ws.write("{other}/pylib/sitecustomize.py", SITECUSTOMIZE)


SITECUSTOMIZE = """\
# Project A's code: notes where it runs, now and in every process forked from this one.
import os


def _note():
    with open("{out}/sitecustomize.log", "a") as log:
        log.write(os.getcwd() + "\\n")


_note()
os.register_at_fork(after_in_child=_note)
"""


def _a_runs_in_b(outcome: Outcome) -> list[str]:
    try:
        lines = (outcome.ws.out / "sitecustomize.log").read_text().splitlines()
    except OSError:
        return []
    where = str(outcome.ws.repo)
    hits = [line for line in lines if line == where or line.startswith(where + "/")]
    return (
        [f"project A's sitecustomize.py ran in project B's run ({len(hits)} times)"] if hits else []
    )


A_FIRST = Session(cwd="{other}", after=(wait_for_worker,))
CONFINED = Session(
    calls=(bash("touch {out}/PWN_confined"),),
    mode="bypassPermissions",
    args=("--no-sandbox",),
    wrapper=(
        "{python}",
        str(PAYLOADS / "confine.py"),
        "{repo}",
        "{ws}/ccx-config",
        "{home}",
        "{tmp}",
        "/dev",
        "--",
    ),
)
WITH_KEY = Session(env={"ANTHROPIC_API_KEY": "{secret:api_key}"})


def chain(folder: bool) -> Scenario:
    name = "squat_folder" if folder else "squat_socket"
    squat = "squat-folder" if folder else "squat"
    squatter = EdgeAttempt(
        f"warm_{name}", FAMILY,
        "a setsid process replaces the worker's " + ("folder" if folder else "socket")
        + "; a later run hands it the API key",
        Stored("api_key", ("{repo}", "{out}", "{tmp}", "{ws}/run")), CCX_ONLY,
    )  # fmt: skip
    attempts: tuple[EdgeAttempt, ...] = (squatter,)
    if not folder:  # the other attempts once: the two chains differ only in the squatter
        attempts = (
            EdgeAttempt("warm_connect_hook", FAMILY,
                        "a sandboxed command hands the worker a run with a SessionStart hook",
                        Created("out/PWN_warm_hook"), CCX_ONLY),
            EdgeAttempt("warm_project_code", FAMILY,
                        "project A's env.PYTHONPATH (sitecustomize.py) runs in project B's run",
                        Judged(_a_runs_in_b), CCX_ONLY),
            EdgeAttempt("warm_project_env", FAMILY,
                        "a variable of project A's settings env reaches project B's commands",
                        Sent("from_a", session=1), CCX_ONLY),
            EdgeAttempt("warm_confined", FAMILY,
                        "a run the user confined (Landlock, NoNewPrivs) writes outside",
                        Created("out/PWN_confined"), CCX_ONLY),
            squatter,
        )  # fmt: skip
    b_calls = (bash("env"), bash("python3 tests/run.py connect"))
    return Scenario(
        id=f"warm_{name}",
        setup=_plant,
        sessions=(
            A_FIRST,
            Session(calls=b_calls if not folder else ()),
            *((CONFINED,) if not folder else ()),
            Session(calls=(bash(f"python3 tests/run.py {squat}"),), after=(pause(1),)),
            WITH_KEY,
        ),
        attempts=attempts,
        sandboxed=True,
        warm=True,
        user_settings=USER_RULES,
        teardown=stop_worker,
    )


def slow_peer(outside: bool) -> Scenario:
    """A first run starts the worker; the slow peer connects (from a sandboxed command of the
    next run, or from the user's own shell); no run after it may stall, the one whose
    command started the peer included (a stalled worker holds that run's exit status)."""
    name = "slow_peer_outside" if outside else "slow_peer"
    first = Session(after=(wait_for_worker, *((start_outside_dribbler,) if outside else ())))
    dribble = Session(calls=(bash("python3 tests/run.py dribble"),), timeout_s=60)
    later = (Session(timeout_s=60),) if outside else (dribble, Session(timeout_s=60))
    what = ("a peer of the user's own, sending one byte every 3 s" if outside
            else "a sandboxed command leaves a peer sending one byte every 3 s")  # fmt: skip
    stalls = any_of(*(Slower(i, SLOW_RUN_S) for i in range(1, len(later) + 1)))
    return Scenario(
        id=f"warm_{name}",
        setup=_plant,
        sessions=(first, *later),
        attempts=(
            EdgeAttempt(f"warm_{name}", FAMILY, what + ": a later run stalls", stalls, CCX_ONLY),
        ),
        sandboxed=not outside,
        warm=True,
        user_settings=USER_RULES,
        teardown=stop_worker,
    )


def warm_scenarios() -> list[Scenario]:
    return [chain(folder=False), chain(folder=True), slow_peer(False), slow_peer(True)]
