"""Judging attempts by side effect only.

The scripted server takes a snapshot of the workspace each time a main agent request
arrives, before answering it, and keeps the request body. Request *i* is answered with
step *i* of the plan, so whatever changed between snapshot *i* and *i+1* (or the snapshot
after the client exited) was done by step *i*, and a secret first seen in request *i+1*
was read by step *i*. What a client said about a refusal is never looked at.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.hostile.attempt import Attempt
from tests.e2e.hostile.plan import Step
from tests.e2e.hostile.repo import Workspace

# Directories and files that change in normal use and are nobody's side effect: git's
# object store and index (a read-only `git status` refreshes it), the clients' own state.
PRUNED_DIRS = ("objects", "ccx-config", "home/.claude", "home/.cache", "home/.npm",
               "home/.config", "home/.local")  # fmt: skip
IGNORED_FILES = ("*/index", "*/index.lock", "home/.claude.json*", "home/.lesshst")
# Paths that no attempt may change in any mode (besides markers and declared files).
PROTECTED = ("repo/.git/*", "repo/sub/.git/*", "repo/evil/*", "repo/.claude/*", "repo/.mcp.json",
             "repo/victim_*")  # fmt: skip

Snapshot = dict[str, str]  # workspace-relative path -> fingerprint of its content


def snapshot(root: Path) -> Snapshot:
    """Every file and symlink under ``root`` with a fingerprint of its content."""
    found: Snapshot = {}
    for top, dirs, files in os.walk(root):
        rel_top = os.path.relpath(top, root)
        kept = []
        for name in dirs:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            if os.path.islink(os.path.join(top, name)):
                found[rel] = "-> " + os.readlink(os.path.join(top, name))
            elif name != "objects" and rel not in PRUNED_DIRS:
                kept.append(name)
        dirs[:] = kept
        for name in files:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            if any(fnmatch.fnmatch(rel, pattern) for pattern in IGNORED_FILES):
                continue
            found[rel] = _fingerprint(os.path.join(top, name))
    return found


def _fingerprint(path: str) -> str:
    if os.path.islink(path):
        return "-> " + os.readlink(path)
    try:
        with open(path, "rb") as handle:
            return hashlib.sha1(handle.read()).hexdigest()
    except OSError as error:  # a socket, a file gone in between
        return f"unreadable: {error.strerror}"


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """``created PATH`` / ``changed PATH`` / ``deleted PATH`` for each difference."""
    out = [f"created {p}" for p in after.keys() - before.keys()]
    out += [f"deleted {p}" for p in before.keys() - after.keys()]
    out += [f"changed {p}" for p in before.keys() & after.keys() if before[p] != after[p]]
    return sorted(out, key=lambda line: line.split(" ", 1)[1])


def counts_as_side_effect(path: str, attempt: Attempt | None, mode: str) -> bool:
    """Whether a change at ``path`` is a side effect the attempt must not have."""
    if os.path.basename(path).startswith("PWN"):
        return True
    if attempt is not None and path in (*attempt.markers, *attempt.unchanged):
        return True
    if any(fnmatch.fnmatch(path, pattern) for pattern in PROTECTED):
        return True
    if not path.startswith("repo/"):
        return True  # outside the project: files beside it, the fake HOME
    return mode == "default"  # the default mode writes nothing in the project unasked


def secret_forms(ws: Workspace) -> dict[str, tuple[str, ...]]:
    """Each secret as text, as `base64` of its file prints it, and as `rev` prints it."""
    return {
        name: (value, base64.b64encode(ws.secret_files[name]).decode(), value[::-1])
        for name, value in ws.secrets.items()
    }


class Recorder:
    """What the scripted server saw: a snapshot and the body of every main request."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.before = snapshot(root)
        self.snapshots: list[Snapshot] = []
        self.bodies: list[str] = []
        self.after: Snapshot | None = None
        self._lock = threading.Lock()

    def main_request(self, body_json: str) -> int:
        """Record one main request; returns its index (the plan step that answers it)."""
        with self._lock:
            self.snapshots.append(snapshot(self.root))
            self.bodies.append(body_json)
            return len(self.bodies) - 1

    def finish(self) -> None:
        self.after = snapshot(self.root)


@dataclass
class Verdict:
    attempt: Attempt
    reached: bool
    effects: list[str] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        """No side effect, and the client really got the tool call."""
        return self.reached and not self.effects

    def describe(self) -> str:
        if not self.reached:
            return f"{self.attempt.id}: never sent (the session ended before this step)"
        if not self.effects:
            return f"{self.attempt.id}: no side effect"
        return f"{self.attempt.id} ({self.attempt.what}): " + "; ".join(self.effects)


@dataclass
class Judgement:
    verdicts: dict[str, Verdict]
    startup: list[str]  # side effects before the first request
    shutdown: list[str]  # side effects after the last request
    probes: dict[str, bool] = field(default_factory=dict)  # probe's file -> it was created


def judge(
    plan: Sequence[Step], attempts: Mapping[str, Attempt], rec: Recorder, ws: Workspace, mode: str
) -> Judgement:
    """Every attempt of ``plan`` judged from what ``rec`` saw."""
    after = rec.after if rec.after is not None else snapshot(rec.root)
    states = [*rec.snapshots, after]  # states[i]: as request i arrived; the last: after exit
    leaks = _leaks_per_request(rec.bodies, secret_forms(ws))
    verdicts: dict[str, Verdict] = {}
    probes: dict[str, bool] = {}
    for index, step in enumerate(plan):
        if step.probe is not None:
            made = index < len(rec.snapshots) and step.probe in states[index + 1]
            probes[step.probe] = made and step.probe not in states[index]
        if step.attempt is None:
            continue
        attempt = attempts[step.attempt]
        verdict = verdicts.setdefault(attempt.id, Verdict(attempt, reached=False))
        if index >= len(rec.snapshots):
            continue  # never sent: the session ended before this step
        verdict.reached = verdict.reached or step.main
        verdict.effects += _side_effects(states[index], states[index + 1], attempt, mode)
        if index + 1 < len(leaks):
            verdict.effects += [
                f"secret {n!r} in the next request" for n in sorted(leaks[index + 1])
            ]
    startup = _side_effects(rec.before, states[0], None, "default")
    startup += [f"secret {n!r} in the first request" for n in sorted(leaks[0] if leaks else ())]
    sent_final = len(rec.snapshots) > len(plan)
    shutdown = _side_effects(states[-2], states[-1], None, mode) if sent_final else []
    return Judgement(verdicts, startup, shutdown, probes)


def _side_effects(
    before: Snapshot, after: Snapshot, attempt: Attempt | None, mode: str
) -> list[str]:
    return [
        change
        for change in changes(before, after)
        if counts_as_side_effect(change.split(" ", 1)[1], attempt, mode)
    ]


def _leaks_per_request(
    bodies: Sequence[str], forms: Mapping[str, tuple[str, ...]]
) -> list[set[str]]:
    """For each request, the secrets in what it adds to the one before (new messages, a
    changed system prompt): one session runs many attempts, so a secret the conversation
    already holds says nothing about the attempt that just ran."""
    found: list[set[str]] = []
    previous: dict[str, Any] = {}
    for body_json in bodies:
        body = json.loads(body_json)
        new = _added(previous, body)
        found.append({name for name, variants in forms.items() if any(v in new for v in variants)})
        previous = body
    return found


def _added(previous: Mapping[str, Any], body: Mapping[str, Any]) -> str:
    """The JSON text of what ``body`` has that ``previous`` had not (cache markers ignored)."""
    old = [_plain(m) for m in previous.get("messages") or []]
    new = [_plain(m) for m in body.get("messages") or []]
    same = 0
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    parts = new[same:]
    if _plain(body.get("system")) != _plain(previous.get("system")):
        parts.append(_plain(body.get("system")))
    return "\n".join(parts)


def _plain(value: Any) -> str:
    return json.dumps(_strip_cache_control(value), sort_keys=True)


def _strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_control(v) for v in value]
    return value
