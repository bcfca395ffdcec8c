"""What the judge of issue 17's scenarios looks at, and the side effects it looks for.

An ``Outcome`` is what a scenario left: the workspace's files (content, mode and mtime)
after the setup and after the last session plus a settling pause, every request each
session sent (body, status, arrival time), each session's exit and wall time, and the
processes still running. Each effect names what it found, in words; none means the
attempt had no side effect. What a client said about a refusal is never looked at.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any, Protocol

from tests.e2e.hostile.edges import Session
from tests.e2e.hostile.edges_workspace import EdgeWorkspace

# Changing in normal use, nobody's side effect: git's object store, the clients' own state.
_PRUNED = ("repo/.git/objects", "other/.git/objects", "ccx-config", "home/.claude", "home/.cache",
           "home/.config", "home/.local", "home/.npm", "libsrc/.git/objects")  # fmt: skip


@dataclass(frozen=True)
class FileState:
    digest: str
    mode: int
    mtime_ns: int


State = dict[str, FileState]  # workspace-relative path -> its state


def file_states(root: Path) -> State:
    """Every file, symlink and folder under ``root`` (pruned where clients keep state)."""
    found: State = {}
    for top, dirs, files in os.walk(root):
        rel_top = os.path.relpath(top, root)
        kept = []
        for name in dirs:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            path = os.path.join(top, name)
            if rel in _PRUNED:
                continue
            found[rel] = _state(path, "dir")
            if not os.path.islink(path):
                kept.append(name)
        dirs[:] = kept
        for name in files:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            found[rel] = _state(os.path.join(top, name), None)
    return found


def _state(path: str, kind: str | None) -> FileState:
    try:
        stat = os.lstat(path)
    except OSError:
        return FileState("gone", 0, 0)
    if os.path.islink(path):
        digest = "-> " + os.readlink(path)
    elif kind is not None:
        digest = kind
    else:
        try:
            with open(path, "rb") as handle:
                digest = hashlib.sha1(handle.read()).hexdigest()
        except OSError as error:  # a socket, a fifo
            digest = f"unreadable: {error.strerror}"
    return FileState(digest, stat.st_mode, stat.st_mtime_ns)


@dataclass(frozen=True)
class Request:
    """One request a session sent, as the server saw it."""

    body: dict[str, Any]
    status: int | None  # None: never answered
    error: str | None
    at: float  # time.monotonic() on arrival
    main: bool  # an agent-loop request (it offers Bash and Read), not a side call

    @property
    def accepted(self) -> bool:
        return self.status == 200


@dataclass
class SessionRun:
    session: Session
    returncode: int | None  # None: killed at its timeout
    seconds: float
    stdout: str
    stderr: str
    requests: list[Request] = field(default_factory=list)

    @property
    def main_requests(self) -> list[Request]:
        return [r for r in self.requests if r.main]


@dataclass
class Outcome:
    ws: EdgeWorkspace
    runs: list[SessionRun]
    before: State
    after: State
    processes: dict[int, str]  # pid -> command line of every process of the workspace


class Effect(Protocol):
    def found(self, outcome: Outcome) -> list[str]:
        """The side effects seen, in words; empty when there is none."""
        ...


@dataclass(frozen=True)
class Created:
    """A file matching ``pattern`` (workspace-relative, fnmatch) appeared."""

    pattern: str

    def found(self, outcome: Outcome) -> list[str]:
        new = outcome.after.keys() - outcome.before.keys()
        return [f"created {p}" for p in sorted(new) if fnmatch(p, self.pattern)]


@dataclass(frozen=True)
class Changed:
    """``path`` (workspace-relative), or anything beneath it, was created, deleted or
    rewritten."""

    path: str

    def found(self, outcome: Outcome) -> list[str]:
        before, after = outcome.before, outcome.after
        out = []
        for path in sorted(before.keys() | after.keys()):
            if path != self.path and not path.startswith(self.path.rstrip("/") + "/"):
                continue
            old, new = before.get(path), after.get(path)
            if old is None:
                out.append(f"created {path}")
            elif new is None:
                out.append(f"deleted {path}")
            elif old.digest != new.digest:
                out.append(f"changed {path}")
        return out


@dataclass(frozen=True)
class MetadataChanged:
    """The mode or modification time of exactly ``path`` changed (its content need not)."""

    path: str

    def found(self, outcome: Outcome) -> list[str]:
        old, new = outcome.before.get(self.path), outcome.after.get(self.path)
        if old is None or new is None:
            return [f"{self.path} appeared or vanished"] if old != new else []
        if old.mode != new.mode:
            return [f"mode of {self.path} changed: {old.mode & 0o7777:o} -> {new.mode & 0o7777:o}"]
        if old.mtime_ns != new.mtime_ns:
            return [f"modification time of {self.path} changed"]
        return []


@dataclass(frozen=True)
class Sent:
    """The secret ``name`` (as text, base64, or reversed) in a request of any session, or
    of session ``session`` (0-based) only."""

    name: str
    session: int | None = None

    def found(self, outcome: Outcome) -> list[str]:
        value = outcome.ws.secrets[self.name]
        forms = (value, base64.b64encode(value.encode()).decode(), value[::-1])
        for index, run in enumerate(outcome.runs):
            if self.session is not None and index != self.session:
                continue
            for request in run.requests:
                if any(form in json.dumps(request.body) for form in forms):
                    return [f"secret {self.name!r} sent to the API in session {index + 1}"]
        return []


@dataclass(frozen=True)
class Stored:
    """The secret ``name`` written into a file under one of ``folders`` (placeholders)."""

    name: str
    folders: tuple[str, ...] = ("{repo}", "{out}", "{tmp}")

    def found(self, outcome: Outcome) -> list[str]:
        value = outcome.ws.secrets[self.name].encode()
        hits = []
        for folder in self.folders:
            for top, _dirs, files in os.walk(outcome.ws.fill(folder)):
                for name in files:
                    path = Path(top, name)
                    try:
                        if not path.is_symlink() and value in path.read_bytes():
                            hits.append(f"secret {self.name!r} written to {path}")
                    except OSError:
                        continue
        return hits


@dataclass(frozen=True)
class Survives:
    """A process whose command line holds ``tag`` still runs after the last session."""

    tag: str

    def found(self, outcome: Outcome) -> list[str]:
        return [
            f"process {pid} outlived the client: {line[:120]}"
            for pid, line in outcome.processes.items()
            if self.tag in line
        ]


@dataclass(frozen=True)
class Slower:
    """Session ``session`` (0-based) took more than ``seconds``, or never ended."""

    session: int
    seconds: float

    def found(self, outcome: Outcome) -> list[str]:
        run = outcome.runs[self.session]
        if run.returncode is None:
            return [f"session {self.session + 1} never ended ({run.seconds:.0f} s, killed)"]
        if run.seconds > self.seconds:
            return [f"session {self.session + 1} took {run.seconds:.1f} s (> {self.seconds:.0f} s)"]
        return []


@dataclass(frozen=True)
class StepSlower:
    """In session ``session``, tool call ``step`` (0-based) took more than ``seconds``: the
    time from the request it answered to the next agent request (or the session's end)."""

    session: int
    step: int
    seconds: float

    def found(self, outcome: Outcome) -> list[str]:
        run = outcome.runs[self.session]
        main = run.main_requests
        if len(main) <= self.step:
            return []  # never got as far: another check says so
        if len(main) == self.step + 1:
            return [f"tool call {self.step + 1} never came back (the session ended waiting)"]
        took = main[self.step + 1].at - main[self.step].at
        if took > self.seconds:
            return [f"tool call {self.step + 1} took {took:.1f} s (> {self.seconds:.0f} s)"]
        return []


@dataclass(frozen=True)
class Refused:
    """The API refused a request of session ``session`` as invalid (a context window
    overflow is not that: it is the client's to handle)."""

    session: int

    def found(self, outcome: Outcome) -> list[str]:
        return [
            f"the API refused a request: {request.error}"
            for request in outcome.runs[self.session].requests
            if request.status == 400 and "prompt is too long" not in (request.error or "")
        ][:1]


@dataclass(frozen=True)
class Unanswered:
    """No accepted agent request of session ``session`` carries ``text`` in its last user
    message: the client never put that message to the model."""

    session: int
    text: str

    def found(self, outcome: Outcome) -> list[str]:
        run = outcome.runs[self.session]
        for request in run.main_requests:
            messages = request.body.get("messages") or [{}]
            if request.accepted and self.text in json.dumps(messages[-1]):
                return []
        return [f"the message holding {self.text!r} was never answered"]


@dataclass(frozen=True)
class AgentEmptied:
    """The ssh-agent ``name`` the harness started with one key no longer holds it."""

    name: str

    def found(self, outcome: Outcome) -> list[str]:
        socket = outcome.ws.agents[self.name]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SSH_AUTH_SOCK": str(socket)}
        listed = subprocess.run(["ssh-add", "-l"], env=env, capture_output=True, text=True)
        if listed.returncode == 0 and listed.stdout.strip():
            return []
        return [f"the ssh-agent {self.name!r} lost its key: {listed.stdout.strip()}"]


@dataclass(frozen=True)
class AnyOf:
    """Every side effect of each of ``effects``."""

    effects: tuple[Effect, ...]

    def found(self, outcome: Outcome) -> list[str]:
        return [line for effect in self.effects for line in effect.found(outcome)]


def any_of(*effects: Effect) -> AnyOf:
    return AnyOf(effects)


@dataclass(frozen=True)
class Judged:
    """An effect computed by a function of the outcome (for the one-off checks)."""

    check: Callable[[Outcome], list[str]]

    def found(self, outcome: Outcome) -> list[str]:
        return self.check(outcome)
