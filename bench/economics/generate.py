"""Generated sessions: one seed gives a repository and a referee scenario over it.

Richer than the referee's make_scenario.py audit, and different per seed:
modules of 3-40 KiB (sizes drawn log-uniformly), a large log read in parts
(Read with offset / limit), large shell outputs (`git log -p` over a real
history, a test run that prints a lot), greps, edits each followed by a re-read
of the edited file (some files edited twice), new test files, and re-reads of
files read long before. Every module and every log part read carries one
planted FACT line, so retention can be judged:
the scenario's `probes` maps a Read step's index to [file, fact]. No grep or
shell output prints a FACT line, so a fact is in a request only if the read
that showed it still is.

sample_repo.py writes the repository; this module draws the steps over it.
The result is a referee scenario (repo, task, steps, final, facts, probes), as
make_scenario.py writes; the same seed always gives the same bytes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from bench.economics.sample_repo import LOG_PATH, PACKAGES, Module, Plan, draw_modules, write_repo


def add_read(plan: Plan, mod: Module, say: str | None = None) -> None:
    step: dict[str, Any] = {"tool": "Read", "input": {"file_path": f"{{repo}}/{mod.rel}"}}
    if say:
        step["say"] = say
    plan.probes[str(len(plan.steps))] = [mod.rel, f"# FACT: {mod.fact}"]
    plan.read_at[mod.rel] = len(plan.steps)
    plan.steps.append(step)


def bash(plan: Plan, command: str, description: str) -> bool:
    plan.steps.append({"tool": "Bash", "input": {"command": command, "description": description}})
    return True


def read_log_part(plan: Plan) -> bool:
    k = sum(1 for s in plan.steps if s["input"].get("file_path", "").endswith(LOG_PATH))
    off, lim, fact = plan.log_parts[k]
    plan.probes[str(len(plan.steps))] = [LOG_PATH, fact]
    plan.steps.append(
        {
            "tool": "Read",
            "input": {"file_path": f"{{repo}}/{LOG_PATH}", "offset": off, "limit": lim},
        }
    )
    return True


def grep(plan: Plan) -> bool:
    rng = plan.rng
    if rng.random() < 0.5:
        plan.steps.append(
            {
                "tool": "Grep",
                "input": {"pattern": "TIMEOUT_", "path": "{repo}/src", "output_mode": "content"},
            }
        )
        return True
    n = rng.randint(1, 40)
    return bash(plan, f"grep -rn 'def handle_.._0{n:02d}' src | head -60", "Find handlers")


def look_around(plan: Plan) -> bool:
    rng = plan.rng
    command = rng.choice(
        (
            "git status --short",
            "wc -l src/*/*.py | tail -n 3",
            f"ls src/{rng.choice(PACKAGES)}",
            "git diff --stat",
        )
    )
    return bash(plan, command, "Look around")


def reread(plan: Plan) -> bool:
    """Re-read a module read at least 15 steps ago."""
    now = len(plan.steps)
    old = [m for m in plan.modules if m.rel in plan.read_at and now - plan.read_at[m.rel] >= 15]
    if not old:
        return False
    add_read(plan, plan.rng.choice(old), say="Checking that module again.")
    return True


def first_edit(plan: Plan) -> bool:
    """Double a module's timeout (re-read first if need be), then re-read it."""
    fresh = [m for m in plan.modules if m.rel in plan.read_at and m.rel not in plan.edited]
    if not fresh:
        return False
    mod = plan.rng.choice(fresh)
    if len(plan.steps) - plan.read_at[mod.rel] > 1:
        add_read(plan, mod)
    value = int(mod.timeout_line.rsplit(" ", 1)[1])
    new = f"TIMEOUT_{mod.stem.upper()} = {value * 2}  # doubled for the retry path"
    plan.steps.append(
        {
            "tool": "Edit",
            "say": "Raising the timeout.",
            "input": {
                "file_path": f"{{repo}}/{mod.rel}",
                "old_string": mod.timeout_line,
                "new_string": new,
            },
        }
    )
    plan.edited.add(mod.rel)
    add_read(plan, mod)
    return True


def write_and_check(plan: Plan) -> bool:
    write_test(plan)
    return True


def second_edit(plan: Plan) -> bool:
    """Edit a handler's docstring in a module edited before (re-read first if need be), then re-read."""
    done = [m for m in plan.modules if m.rel in plan.edited]
    if not done:
        return False
    mod = plan.rng.choice(done)
    if len(plan.steps) - plan.read_at[mod.rel] > 1:
        add_read(plan, mod)
    docs = [
        x
        for x in mod.lines
        if x.startswith('    """Serve request kind ') and x not in plan.docs_edited
    ]
    line = plan.rng.choice(docs)
    plan.docs_edited.add(line)
    plan.steps.append(
        {
            "tool": "Edit",
            "say": "Documenting the retry bound.",
            "input": {
                "file_path": f"{{repo}}/{mod.rel}",
                "old_string": line,
                "new_string": line.replace('."""', '; retries stay under the doubled timeout."""'),
            },
        }
    )
    add_read(plan, mod)
    return True


def write_test(plan: Plan) -> None:
    """A new test file of a few KiB (the model's own output), then a run of it."""
    rng = plan.rng
    mod = rng.choice(plan.modules)
    cases = []
    for n in range(rng.randint(12, 30)):
        v = rng.randint(1, 10**6)
        cases.append(
            f"def test_{mod.stem}_kind_{n:02d}():\n    request = {{'k{n}': {v}}}\n    assert request['k{n}'] == {v}\n"
        )
    rel = f"tests/test_{mod.stem}_{len(plan.steps)}.py"
    plan.steps.append(
        {
            "tool": "Write",
            "say": "Adding tests for it.",
            "input": {"file_path": f"{{repo}}/{rel}", "content": "\n\n".join(cases)},
        }
    )
    plan.steps.append(
        {
            "tool": "Bash",
            "input": {
                "command": f"python3 -m py_compile {rel} && python3 tools/run_tests.py | tail -n 30",
                "description": "Check the new tests",
            },
        }
    )


MOVES = {
    "log": read_log_part,
    "gitlog": lambda plan: bash(plan, "git log -p -4 | head -n 700", "Recent changes"),
    "tests": lambda plan: bash(plan, "python3 tools/run_tests.py", "Run the tests"),
    "grep": grep,
    "small": look_around,
    "reread": reread,
    "edit": first_edit,
    "edit2": second_edit,
    "write": write_and_check,
}


def extra_step(plan: Plan, kind: str) -> bool:
    """Append one of the session's other moves; False when it cannot happen yet."""
    return MOVES[kind](plan)


def draw_steps(plan: Plan) -> None:
    rng = plan.rng
    plan.steps += [
        {
            "tool": "Bash",
            "input": {"command": "git log --oneline | head -20", "description": "History"},
        },
        {"tool": "Read", "input": {"file_path": "{repo}/README.md"}},
    ]
    extras = (
        ["log"] * len(plan.log_parts)
        + ["gitlog"] * rng.randint(2, 3)
        + ["grep"] * rng.randint(3, 5)
    )
    extras += ["reread"] * rng.randint(6, 10) + ["edit"] * rng.randint(4, 7) + ["tests"] * 2
    extras += ["edit2"] * rng.randint(3, 6) + ["write"] * rng.randint(1, 3)
    extras += ["small"] * rng.randint(10, 20)
    rng.shuffle(extras)
    pending: list[str] = []
    order = rng.sample(plan.modules, len(plan.modules))
    for n, mod in enumerate(order):
        add_read(plan, mod, say=f"Reading {mod.stem}." if n % 4 == 0 else None)
        share = (len(extras) + len(pending)) / (len(order) - n)
        while (pending or extras) and rng.random() < share:
            kind = pending.pop(0) if pending else extras.pop()
            if not extra_step(plan, kind):
                pending.append(kind)
                break
            share -= 1
    for kind in pending + extras:
        extra_step(plan, kind)
    plan.steps.append(
        {
            "tool": "Bash",
            "input": {
                "command": "python3 tools/run_tests.py | tail -n 40",
                "description": "Final test run",
            },
        }
    )


def generate(out: Path, seed: int) -> dict[str, Any]:
    """Write out/repo and out/scenario.json for `seed`; returns the scenario."""
    plan = Plan(rng=random.Random(seed))
    draw_modules(plan, plan.rng.randint(26, 34))
    write_repo(plan, out / "repo")
    draw_steps(plan)
    facts = [f"# FACT: {m.fact}" for m in plan.modules] + [p[2] for p in plan.log_parts]
    scenario = {
        "repo": str((out / "repo").resolve()),
        "task": (
            "Review the services under src/ one by one: note each module's FACT line, chase the "
            f"incidents noted in {LOG_PATH}, check recent history and the test report, double the "
            "timeouts that are too tight, and finish with a summary of what you found."
        ),
        "steps": plan.steps,
        "final": f"Review complete: {len(plan.modules)} modules, {len(plan.log_parts)} log incidents, {len(plan.edited)} timeouts doubled.",
        "facts": facts,
        "probes": plan.probes,
        "seed": seed,
    }
    (out / "scenario.json").write_text(json.dumps(scenario, indent=1))
    return scenario
