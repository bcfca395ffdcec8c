"""The scenario form of issue 17's hostile attempts ("the edges"): attempts that need more than
one tool call in one session.

A ``Scenario`` is a setup (files, a tmux server, an ssh-agent, all in a fresh workspace),
one or more ``Session``s run in order (each a headless client with its own scripted tool
calls, permission mode, working directory, environment and way in: ``-p``, the piped
REPL or stream-json), actions of the harness between them (wait for the warm worker,
start a slow peer), and the ``EdgeAttempt``s it carries: each names one side effect
that must not happen (``tests.e2e.hostile.edges_effects``), looked for once the last
session has ended and stragglers had a few seconds to act. Attempts of one scenario
share its sessions, so each must be judged by a side effect of its own (its own
marker, secret, file or agent).

Strings in calls, arguments and environment values may hold the placeholders of
``tests.e2e.hostile.edges_workspace.EdgeWorkspace.places`` (``{repo}``, ``{out}``, ...).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.e2e.hostile.attempt import MODES, ToolCall

if TYPE_CHECKING:
    from tests.e2e.hostile.edges_effects import Effect
    from tests.e2e.hostile.edges_workspace import EdgeWorkspace

CLIENTS = ("ccx", "cc")
CCX_ONLY = frozenset({"ccx"})
BOTH = frozenset(CLIENTS)
ENTRIES = ("print", "piped", "stream")
TASK = "Work through the repository's checklist."
FINAL = "Checklist done."

# Something the harness does between sessions, given the workspace and the client's name.
Action = Callable[["EdgeWorkspace", str], None]


@dataclass(frozen=True)
class Session:
    """One headless run of the client.

    ``entry``: "print" (``-p prompt``), "piped" (``stdin`` piped in without ``-p``: both
    clients take it whole as a prompt run's prompt) or "stream" (``-p --input-format stream-json``, ``stdin`` a file
    of the workspace holding the user messages). ``calls``: the scripted model's tool
    calls, one per agent request, then ``FINAL``. ``wrapper``: an argv put before the
    client's (a program that confines it, say). ``after``: harness actions once it ended.
    ``may_send_nothing``: a client that refuses the whole input (a command it will not
    run) sends no request, and that is no sign of a session that never got going.
    """

    calls: tuple[ToolCall, ...] = ()
    mode: str = "default"
    entry: str = "print"
    prompt: str = TASK
    stdin: str | None = None  # piped: the text typed; stream: a workspace path (placeholders)
    cwd: str = "{repo}"
    env: Mapping[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    wrapper: tuple[str, ...] = ()
    after: tuple[Action, ...] = ()
    timeout_s: float = 180
    may_send_nothing: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}")
        if self.entry not in ENTRIES:
            raise ValueError(f"unknown entry {self.entry!r}")


@dataclass(frozen=True)
class EdgeAttempt:
    """One attempt, counted on its own: what it tries and the side effect it must not have."""

    id: str
    family: str
    what: str
    effect: Effect
    clients: frozenset[str] = BOTH  # the clients it applies to


@dataclass(frozen=True)
class Scenario:
    """Setup, sessions and the attempts judged on them.

    ``sandboxed``: the attempts are about the OS sandbox: ccx runs them under each backend,
    Claude Code with its own sandbox turned on. ``warm``: ccx runs with its warm worker on
    (``CCX_WARM=1``, in the workspace's own TMPDIR and XDG_RUNTIME_DIR). ``user_settings``:
    the user's own settings file, for both clients (rules the user wrote). ``trusted``:
    Claude Code is told the user trusted the project (as the user who wrote its rules did).
    ``needs``: programs without which the scenario means nothing (it is skipped).
    ``teardown``: stops what the generic clean-up might miss (the warm worker, whose
    environment need not carry the workspace's variable).
    """

    id: str
    setup: Callable[[EdgeWorkspace], None] | None
    sessions: tuple[Session, ...]
    attempts: tuple[EdgeAttempt, ...]
    sandboxed: bool = False
    warm: bool = False
    user_settings: Mapping[str, Any] = field(default_factory=dict)
    trusted: bool = True
    needs: tuple[str, ...] = ()
    settle_s: float = 3.0  # how long the judge waits after the last session for late acts
    teardown: Callable[[EdgeWorkspace], None] | None = None  # before the processes are ended

    def __post_init__(self) -> None:
        if not self.sessions or not self.attempts:
            raise ValueError(f"{self.id}: a scenario needs sessions and attempts")
        for attempt in self.attempts:
            if not attempt.clients <= set(CLIENTS):
                raise ValueError(f"{attempt.id}: unknown clients {sorted(attempt.clients)}")

    @property
    def clients(self) -> frozenset[str]:
        return frozenset().union(*(a.clients for a in self.attempts))

    def attempts_for(self, client: str) -> tuple[EdgeAttempt, ...]:
        return tuple(a for a in self.attempts if client in a.clients)


def mark(name: str) -> Action:
    """An action: create ``{ws}/NAME``, the flag planted stragglers wait for."""

    def act(ws: EdgeWorkspace, _client: str) -> None:
        (ws.root / name).touch()

    return act


def pause(seconds: float) -> Action:
    """An action: give stragglers time to act before the next session."""

    def act(_ws: EdgeWorkspace, _client: str) -> None:
        time.sleep(seconds)

    return act
