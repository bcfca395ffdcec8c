"""Running one scenario of issue 17 with one client, and judging it.

The client is ccx (under a chosen sandbox backend, ``CCX_SANDBOX_BACKEND``) or Claude Code
(its own sandbox turned on through its user settings when the scenario is about the
sandbox). The scripted server is passed in (``Serve``): ccx's fake API in the tests
(``fake_api``), the shared referee in the benchmark. Every session runs in a fresh
process group with its own timeout; once the last has ended the harness marks the end
(``{ws}/ended``, which the planted stragglers wait for), waits ``settle_s``, then judges.
Whatever happens, every process of the workspace is ended afterwards, by pid: the
scenario's teardown (the warm worker), the services its setup started, and any process
that carries the workspace's variable or names its folders.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tests.e2e.hostile.attempt import ToolCall
from tests.e2e.hostile.edges import FINAL, Scenario, Session
from tests.e2e.hostile.edges_effects import Outcome, Request, SessionRun, file_states
from tests.e2e.hostile.edges_workspace import (
    WORKSPACE_VARIABLE,
    EdgeWorkspace,
    build_edge_workspace,
    remove_workspace,
)
from tests.e2e.hostile.plan import is_main_request
from tests.e2e.hostile.repo import git_environment
from tui.fake_api import FakeApi, RecordedRequest, Reply, text_reply, tool_reply

# The user's own session services: never reachable from a scenario's clients by accident.
_SESSION_VARIABLES = (
    "TMUX", "TMUX_PANE", "TMUX_TMPDIR", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "STY",
)  # fmt: skip
BACKEND_LABELS = {"bwrap": "bubblewrap", "landlock": "Landlock"}


@dataclass(frozen=True)
class Client:
    """A client and how it runs: ``backend`` is ccx's sandbox backend (None: its own
    choice); ``path_prefix`` goes before PATH (Claude Code finds bwrap there)."""

    name: str  # "ccx" or "cc"
    binary: str
    backend: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    path_prefix: str = ""

    @property
    def label(self) -> str:
        if self.name == "cc":
            return "Claude Code"
        return f"ccx ({BACKEND_LABELS.get(self.backend or '', 'default backend')})"


class Served(Protocol):
    url: str

    def requests(self) -> list[Request]: ...


Serve = Callable[[Sequence[ToolCall], str], AbstractContextManager[Served]]


@dataclass
class ScenarioResult:
    scenario: Scenario
    client: Client
    verdicts: dict[str, list[str]]  # attempt id -> its side effects (empty: none)
    runs: list[SessionRun]
    workspace: EdgeWorkspace


def run_scenario(
    scenario: Scenario, client: Client, root: Path, serve: Serve, keep: bool = False
) -> ScenarioResult:
    """Set up, run every session, judge each of the client's attempts, clean up."""
    ws = build_edge_workspace(root)
    try:
        _user_settings(scenario, client, ws)
        if scenario.setup is not None:
            scenario.setup(ws)
        before = file_states(ws.root)
        runs = [_run_session(scenario, session, i, client, ws, serve)
                for i, session in enumerate(scenario.sessions)]  # fmt: skip
        (ws.root / "ended").touch()
        time.sleep(scenario.settle_s)
        outcome = Outcome(ws, runs, before, file_states(ws.root), workspace_processes(ws))
        verdicts = {a.id: a.effect.found(outcome) for a in scenario.attempts_for(client.name)}
        return ScenarioResult(scenario, client, verdicts, runs, ws)
    finally:
        if scenario.teardown is not None:
            with contextlib.suppress(Exception):
                scenario.teardown(ws)
        end_workspace_processes(ws)
        if not keep:
            remove_workspace(ws)


def _run_session(
    scenario: Scenario, session: Session, index: int, client: Client, ws: EdgeWorkspace,
    serve: Serve,
) -> SessionRun:  # fmt: skip
    calls = [call.resolved(ws.places) for call in session.calls]
    with serve(calls, f"{scenario.id}-{client.name}-{index}") as served:
        env = session_environment(scenario, session, client, ws, served.url)
        ws.session_env = env
        argv = [*(ws.fill(a) for a in session.wrapper), *client_argv(client, session, ws)]
        run = _run(session, argv, Path(ws.fill(session.cwd)), env, _stdin(session, ws))
        run.requests = served.requests()
    for action in session.after:
        action(ws, client.name)
    return run


def client_argv(client: Client, session: Session, ws: EdgeWorkspace) -> list[str]:
    args = [ws.fill(a) for a in session.args]
    mode = ["--permission-mode", session.mode]
    if session.entry == "print":
        return [client.binary, "-p", session.prompt, *mode, "--output-format", "json", *args]
    if session.entry == "stream":
        stream = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        return [client.binary, "-p", *stream, *mode, *args]
    return [client.binary, *mode, *args]  # piped: stdin is not a terminal


def session_environment(
    scenario: Scenario, session: Session, client: Client, ws: EdgeWorkspace, url: str
) -> dict[str, str]:
    env = {
        k: v for k, v in git_environment(ws.home).items()
        if not k.startswith("CLAUDE") and k not in _SESSION_VARIABLES
    }  # fmt: skip
    env |= {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-test-edges",
        "TMPDIR": str(ws.tmp),
        "XDG_RUNTIME_DIR": str(ws.runtime),
        "TMUX_TMPDIR": str(ws.root / "tmux"),  # tmux's default server: the workspace's own
        WORKSPACE_VARIABLE: str(ws.root),
    }
    if client.name == "ccx":
        env |= {
            "CCX_CONFIG_DIR": str(ws.config),
            "CCX_RETRY_BASE_DELAY_MS": "5",
            "CCX_WARM": "1" if scenario.warm else "0",
            "CCX_WARM_IDLE_S": "120",  # a worker the teardown misses leaves soon
        }
        if client.backend is not None:
            env["CCX_SANDBOX_BACKEND"] = client.backend
    else:
        env |= {
            "IS_SANDBOX": "1",  # lets root use bypassPermissions
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
    if client.path_prefix:
        env["PATH"] = f"{client.path_prefix}:{env.get('PATH', '/usr/bin:/bin')}"
    env |= dict(client.env)
    env |= {k: ws.fill(v) for k, v in ws.client_env.items()}
    return env | {k: ws.fill(v) for k, v in session.env.items()}


def _user_settings(scenario: Scenario, client: Client, ws: EdgeWorkspace) -> None:
    """The user's own settings file for the client; for Claude Code also its sandbox (when
    the scenario is about the sandbox) and the trust the user gave the project."""
    settings: dict[str, Any] = json.loads(ws.fill(json.dumps(dict(scenario.user_settings))))
    if client.name == "ccx":
        (ws.config / "settings.json").write_text(json.dumps(settings, indent=2))
        return
    if scenario.sandboxed:
        settings["sandbox"] = {"enabled": True, "failIfUnavailable": True}
    folder = ws.home / ".claude"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(settings, indent=2))
    if scenario.trusted:
        projects = {str(p): {"hasTrustDialogAccepted": True} for p in (ws.repo, ws.other)}
        (ws.home / ".claude.json").write_text(json.dumps({"projects": projects}))


def _stdin(session: Session, ws: EdgeWorkspace) -> str | Path | None:
    if session.stdin is None:
        return None
    return Path(ws.fill(session.stdin)) if session.entry == "stream" else ws.fill(session.stdin)


def _run(
    session: Session, argv: list[str], cwd: Path, env: dict[str, str], stdin: str | Path | None
) -> SessionRun:
    """Run one session in its own process group; killed (group and all) at its timeout."""
    with contextlib.ExitStack() as stack:
        if isinstance(stdin, Path):
            source: Any = stack.enter_context(open(stdin, "rb"))
        else:
            source = subprocess.PIPE if stdin is not None else subprocess.DEVNULL
        started = time.monotonic()
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=source, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        data = stdin.encode() if isinstance(stdin, str) else None
        try:
            out, err = proc.communicate(data, timeout=session.timeout_s)
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            try:
                out, err = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:  # its pipes live on elsewhere (a warm run's)
                proc.wait()
                out, err = b"", b"(output lost: the pipes outlived the session)"
            code = None
        seconds = time.monotonic() - started
    text = (out.decode(errors="replace"), err.decode(errors="replace"))
    return SessionRun(session, code, seconds, *text)


# -- the processes of a workspace -------------------------------------------------------


def workspace_processes(ws: EdgeWorkspace) -> dict[int, str]:
    """pid -> command line of every process that carries the workspace's variable, names
    its folders on its command line, or works in them (the harness itself excepted)."""
    marker = f"{WORKSPACE_VARIABLE}={ws.root}\0".encode()
    names = (str(ws.root), str(ws.tmp))
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            environ = (entry / "environ").read_bytes()
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if not line:
            continue  # a zombie, or a kernel thread
        if marker in environ or any(n in line for n in names) or cwd.startswith(names):
            found[int(entry.name)] = line.strip()
    return found


def end_workspace_processes(ws: EdgeWorkspace) -> None:
    """End the services the setup started, then every process of the workspace."""
    for proc in ws.services:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
    for _round in range(3):
        pids = list(workspace_processes(ws))
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)


# -- ccx's fake API as the scripted server (the tests) ----------------------------------


@dataclass
class FakeApiServed:
    api: FakeApi
    url: str = field(init=False)

    def __post_init__(self) -> None:
        self.url = self.api.url

    def requests(self) -> list[Request]:
        return [_request(r) for r in list(self.api.requests)]


def _request(record: RecordedRequest) -> Request:
    return Request(
        record.body, record.status, record.error, record.received_at, is_main_request(record.body)
    )


@contextmanager
def fake_api(calls: Sequence[ToolCall], _name: str) -> Iterator[Served]:
    """ccx's fake Messages API answering agent request *i* with ``calls[i]``, then FINAL;
    side calls (titles, summaries) with "ok"."""
    pending = list(calls)

    def respond(request: RecordedRequest) -> Reply:
        if not is_main_request(request.body):
            return text_reply("ok")
        if pending:
            call = pending.pop(0)
            return tool_reply((call.tool, dict(call.input)))
        return text_reply(FINAL)

    with FakeApi() as api:
        api.on(lambda _request: True, respond)
        yield FakeApiServed(api)
