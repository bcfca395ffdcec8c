"""A batch: the attempts of one mode laid out as the scripted model's tool calls, one per
request, with each attempt's scaffolding around it; and the same batch as a scenario for the
shared referee server (/work/shared/bench/fakeapi.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tests.e2e.hostile.attempt import Attempt, ToolCall, bash, write

TASK = "Work through the repository's checklist."
FINAL = "Checklist done."


@dataclass(frozen=True)
class Step:
    call: ToolCall  # placeholders already filled in
    attempt: str | None  # the attempt this step belongs to
    main: bool = False  # the attempt's own call, not its scaffolding
    probe: str | None = None  # for a probe: the file it must create


@dataclass(frozen=True)
class Probe:
    """A call the mode and the rules must let through, leaving a file: proof that the rules
    are in force, without which a blocked attempt could mean the rules were never read."""

    call: ToolCall
    creates: str  # workspace-relative
    needs: tuple[str, ...] = ()


PROBES = {
    # npm test is allowed only by the rule Bash(npm test *); its script writes this file.
    "default": Probe(bash("npm test"), "repo/npm-test-ran.txt", needs=("npm",)),
    "acceptEdits": Probe(write("{repo}/probe-edit.txt", "probe\n"), "repo/probe-edit.txt"),
    "bypassPermissions": Probe(bash("touch probe-bypass.txt"), "repo/probe-bypass.txt"),
}


def _changes_settings(attempt: Attempt) -> bool:
    return any(p.startswith("repo/.claude/") for p in attempt.unchanged)


def build_plan(
    attempts: Iterable[Attempt], places: Mapping[str, str], probe: Probe | None = None
) -> list[Step]:
    """The steps of one batch: the probe first, then the attempts. Attempts that rewrite the
    permission settings go last, so when one gets through it cannot change how the others
    are judged."""
    ordered = sorted(attempts, key=_changes_settings)
    steps: list[Step] = []
    if probe is not None and all(shutil.which(p) for p in probe.needs):
        steps.append(Step(probe.call.resolved(places), None, probe=probe.creates))
    for attempt in ordered:
        steps += [Step(c.resolved(places), attempt.id) for c in attempt.before]
        steps.append(Step(attempt.call.resolved(places), attempt.id, main=True))
        steps += [Step(c.resolved(places), attempt.id) for c in attempt.after]
    return steps


def referee_scenario(plan: Iterable[Step]) -> dict[str, Any]:
    """The plan in the shared referee's scenario format ("task", "steps", "final")."""
    return {
        "task": TASK,
        "steps": [{"tool": s.call.tool, "input": dict(s.call.input)} for s in plan],
        "final": FINAL,
    }


def is_main_request(body: Mapping[str, Any]) -> bool:
    """An agent-loop request (it offers the tools), not a title, summary or other side call."""
    names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    return {"Bash", "Read"} <= names
