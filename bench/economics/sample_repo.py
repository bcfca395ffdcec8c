"""The repository of one generated session: modules of 3-40 KiB, a service log, a history, a test runner.

Every module carries one `# FACT:` line at a random depth and a unique
`TIMEOUT_*` line for edits; the log plants one FACT line in each part the
session will read; the four commits after the initial one change function
bodies only, so `git log -p` never shows a FACT line. `Plan` is what a seed
draws; generate.py turns it into the session's steps.
"""

from __future__ import annotations

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
