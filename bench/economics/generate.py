"""Generated sessions: one seed gives a repository and a referee scenario over it.

Richer than the referee's make_scenario.py audit, and different per seed:
modules of 3-40 KiB (sizes drawn log-uniformly), a large log read in parts
(Read with offset / limit), large shell outputs (`git log -p` over a real
history, a test run that prints a lot), greps, edits each followed by a re-read
of the edited file, and re-reads of files read long before. Every module and
every log part read carries one planted FACT line, so retention can be judged:
the scenario's `probes` maps a Read step's index to [file, fact]. No grep or
shell output prints a FACT line, so a fact is in a request only if the read
that showed it still is.

The result is a referee scenario (repo, task, steps, final, facts, probes), as
make_scenario.py writes; the same seed always gives the same bytes.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PACKAGES = ("billing", "ingest", "router", "auth", "report", "sched", "notify", "search")
NOUNS = ("queue", "ledger", "index", "cursor", "batch", "token", "shard", "window")
LOG_PATH = "logs/service.log"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


@dataclass
class Module:
    rel: str  # path inside the repo
    stem: str
    fact: str
    timeout_line: str  # the line an edit changes (unique in the file)
    lines: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """What one seed draws: modules, log parts and the ordered steps."""

    rng: random.Random
    modules: list[Module] = field(default_factory=list)
    log_parts: list[tuple[int, int, str]] = field(default_factory=list)  # offset, limit, fact
    steps: list[dict[str, Any]] = field(default_factory=list)
    probes: dict[str, list[str]] = field(default_factory=dict)
    read_at: dict[str, int] = field(default_factory=dict)  # module rel -> last step that read it
    edited: set[str] = field(default_factory=set)
    docs_edited: set[str] = field(default_factory=set)


def module_lines(index: int, mod: Module, size: int, rng: random.Random) -> list[str]:
    """A Python module of about `size` bytes with its FACT line at a random depth."""
    lines = [
        f'"""{mod.stem}: part of the {mod.rel.split("/")[1]} service."""',
        "",
        "import os",
        "",
        mod.timeout_line,
        "",
    ]
    n = 0
    body: list[str] = []
    while sum(len(x) + 1 for x in lines + body) < size:
        n += 1
        a, b = rng.randint(1, 999), rng.randint(1, 10**6)
        body += [
            "",
            f"def handle_{index:02d}_{n:03d}(request, scale={a}):",
            f'    """Serve request kind {n} of {mod.stem}; scaled by {a}."""',
            f"    value = request.get('k{n}', {b})",
            f"    if value % {a % 17 + 2} == 0:",
            f"        return value // {a % 13 + 2}",
            "    return value * scale",
        ]
    at = rng.randrange(0, max(1, len(body) // 7)) * 7
    body[at:at] = ["", f"# FACT: {mod.fact}"]
    return lines + body + [""]


def draw_modules(plan: Plan, count: int) -> None:
    rng = plan.rng
    for i in range(count):
        pkg = PACKAGES[i % len(PACKAGES)]
        stem = f"{pkg}_{i:02d}"
        size = int(math.exp(rng.uniform(math.log(3 * 1024), math.log(40 * 1024))))
        ms = rng.randint(10, 9999)
        fact = f"{stem} flushes its {rng.choice(NOUNS)} every {ms} ms (owner {rng.choice(NOUNS)}-{rng.randint(100, 999)})"
        mod = Module(
            rel=f"src/{pkg}/{stem}.py",
            stem=stem,
            fact=fact,
            timeout_line=f"TIMEOUT_{stem.upper()} = {rng.randint(2, 90)}",
        )
        mod.lines = module_lines(i, mod, size, rng)
        plan.modules.append(mod)


def log_text(plan: Plan) -> str:
    """A service log of several thousand lines; each part the session reads holds one FACT line."""
    rng = plan.rng
    offset = 1
    for k in range(rng.randint(6, 9)):
        limit = rng.randint(250, 450)
        if k in (2, 5):  # a seek, as when chasing an error further down
            offset += rng.randint(500, 1500)
        plan.log_parts.append(
            (
                offset,
                limit,
                f"FACT log part {k}: incident {rng.randint(1000, 9999)} traced to shard {rng.randint(1, 64)}",
            )
        )
        offset += limit
    total = offset + rng.randint(200, 1500)
    planted = {off + lim // 2 - 1: fact for off, lim, fact in plan.log_parts}
    lines = []
    for n in range(total):
        if n in planted:
            lines.append(
                f"2026-11-30T08:{n // 60 % 60:02d}:{n % 60:02d}Z NOTE [triage] {planted[n]}"
            )
            continue
        level = rng.choice(("INFO", "INFO", "INFO", "WARN", "DEBUG", "ERROR"))
        lines.append(
            f"2026-11-30T08:{n // 60 % 60:02d}:{n % 60:02d}.{rng.randint(0, 999):03d}Z {level} "
            f"[{rng.choice(PACKAGES)}] request {rng.getrandbits(48):012x} took {rng.randint(1, 4000)} ms "
            f"path=/api/{rng.choice(NOUNS)}/{rng.randint(1, 500)} status={rng.choice((200, 200, 201, 404, 500))}"
        )
    return "\n".join(lines) + "\n"


def test_runner_source(plan: Plan) -> str:
    """tools/run_tests.py: prints a long, deterministic test report (no FACT lines)."""
    names = [m.stem for m in plan.modules]
    lines_wanted = plan.rng.randint(300, 420)
    return (
        "import random\n"
        f"NAMES = {names!r}\n"
        f"rng = random.Random({plan.rng.randint(1, 10**6)})\n"
        f"for n in range({lines_wanted}):\n"
        "    name = NAMES[n % len(NAMES)]\n"
        "    status = 'FAILED' if rng.random() < 0.03 else 'PASSED'\n"
        "    print(f'tests/test_{name}.py::test_case_{n:04d} {status} [{n * 100 // "
        f"{lines_wanted}:3d}}%]')\n"
        "    if status == 'FAILED':\n"
        "        print(f'    AssertionError: expected {rng.randint(1, 99)} got {rng.randint(100, 999)}')\n"
        f"print('{lines_wanted} tests ran')\n"
    )


def git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        **GIT_ENV,
        "GIT_AUTHOR_DATE": "2026-11-01T10:00:00Z",
        "GIT_COMMITTER_DATE": "2026-11-01T10:00:00Z",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def write_repo(plan: Plan, repo: Path) -> None:
    """The files, committed in an initial commit and four later ones that change function bodies."""
    repo.mkdir(parents=True)
    (repo / "README.md").write_text(
        f"# sample services\n\n{len(plan.modules)} modules under src/, a service log under logs/, "
        "and tools/run_tests.py for the test report.\n"
    )
    (repo / "tools").mkdir()
    (repo / "tools" / "run_tests.py").write_text(test_runner_source(plan))
    (repo / "logs").mkdir()
    (repo / LOG_PATH).write_text(log_text(plan))
    for mod in plan.modules:
        path = repo / mod.rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(mod.lines))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "Initial import of the services")
    rng = plan.rng
    for c in range(4):
        for mod in rng.sample(plan.modules, 4):
            text = (repo / mod.rel).read_text().splitlines()
            # change body lines only: a hunk's context never reaches the FACT line
            spots = [i for i, x in enumerate(text) if x.startswith("    value = request.get(")]
            fact_at = next(i for i, x in enumerate(text) if x.startswith("# FACT:"))
            for i in rng.sample(spots, min(3, len(spots))):
                if abs(i - fact_at) > 6:
                    text[i] += f" + {c + 1}"
            (repo / mod.rel).write_text("\n".join(text) + "\n")
            mod.lines = [*text, ""]
        git(repo, "commit", "-qam", f"Tune request handling, round {c + 1}")


def add_read(plan: Plan, mod: Module, say: str | None = None) -> None:
    step: dict[str, Any] = {"tool": "Read", "input": {"file_path": f"{{repo}}/{mod.rel}"}}
    if say:
        step["say"] = say
    plan.probes[str(len(plan.steps))] = [mod.rel, f"# FACT: {mod.fact}"]
    plan.read_at[mod.rel] = len(plan.steps)
    plan.steps.append(step)


def extra_step(plan: Plan, kind: str) -> bool:
    """Append one of the session's other moves; False when it cannot happen yet."""
    rng, now = plan.rng, len(plan.steps)
    old = [m for m in plan.modules if m.rel in plan.read_at and now - plan.read_at[m.rel] >= 15]
    if kind == "log":
        k = sum(1 for s in plan.steps if s["input"].get("file_path", "").endswith(LOG_PATH))
        off, lim, fact = plan.log_parts[k]
        plan.probes[str(now)] = [LOG_PATH, fact]
        plan.steps.append(
            {
                "tool": "Read",
                "input": {"file_path": f"{{repo}}/{LOG_PATH}", "offset": off, "limit": lim},
            }
        )
    elif kind == "gitlog":
        plan.steps.append(
            {
                "tool": "Bash",
                "input": {
                    "command": "git log -p -4 | head -n 700",
                    "description": "Recent changes",
                },
            }
        )
    elif kind == "tests":
        plan.steps.append(
            {
                "tool": "Bash",
                "input": {"command": "python3 tools/run_tests.py", "description": "Run the tests"},
            }
        )
    elif kind == "grep":
        if rng.random() < 0.5:
            plan.steps.append(
                {
                    "tool": "Grep",
                    "input": {
                        "pattern": "TIMEOUT_",
                        "path": "{repo}/src",
                        "output_mode": "content",
                    },
                }
            )
        else:
            n = rng.randint(1, 40)
            plan.steps.append(
                {
                    "tool": "Bash",
                    "input": {
                        "command": f"grep -rn 'def handle_.._0{n:02d}' src | head -60",
                        "description": "Find handlers",
                    },
                }
            )
    elif kind == "small":
        command = rng.choice(
            (
                "git status --short",
                "wc -l src/*/*.py | tail -n 3",
                f"ls src/{rng.choice(PACKAGES)}",
                "git diff --stat",
            )
        )
        plan.steps.append(
            {"tool": "Bash", "input": {"command": command, "description": "Look around"}}
        )
    elif kind == "reread":
        if not old:
            return False
        add_read(plan, rng.choice(old), say="Checking that module again.")
    elif kind == "edit":
        fresh = [m for m in plan.modules if m.rel in plan.read_at and m.rel not in plan.edited]
        if not fresh:
            return False
        mod = rng.choice(fresh)
        if now - plan.read_at[mod.rel] > 1:
            add_read(plan, mod)
        value = int(mod.timeout_line.rsplit(" ", 1)[1])
        plan.steps.append(
            {
                "tool": "Edit",
                "say": "Raising the timeout.",
                "input": {
                    "file_path": f"{{repo}}/{mod.rel}",
                    "old_string": mod.timeout_line,
                    "new_string": f"TIMEOUT_{mod.stem.upper()} = {value * 2}  # doubled for the retry path",
                },
            }
        )
        plan.edited.add(mod.rel)
        add_read(plan, mod)
    elif kind == "edit2":
        return second_edit(plan)
    elif kind == "write":
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
