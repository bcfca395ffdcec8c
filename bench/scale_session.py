"""The long sessions of issue 22's scale runs: their repository, their script, their figures.

`make_session(out, steps)` writes a repository of small Python units (each
with one marker line and eight `SLOT_* = "open"` lines an Edit turns to
"done") and a referee scenario of ``steps`` model steps: Reads, Greps, Bash
commands, and Edits that each follow a Read of the same unit after a gap of
1 to 89 steps, so that compactions fall between many Reads and their Edits.

`read_log(log, scenario, repo)` reads the referee's log as a stream (a
2,000-step log runs to a gigabyte) and says, per run: how many Edits did not
land, and of those how many were refused while the unit's Read was still in
the request that asked for the Edit (the unit's marker line was in it); the
per-step gaps between requests; whether the task was in every main request;
and when each step's request arrived (for the memory at step N).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REFEREE = Path(os.environ.get("CCX_SHARED_BENCH", "/work/shared/bench"))
TASK = (
    "Work through the units under src/ as the plan goes: read each one named, mark its "
    "open slots done one at a time, and check the tree with grep and the shell on the way."
)
FINAL = "All planned slots are done."
SLOTS = 8
GAPS = (1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89)
MARK = re.compile(r"UNIT_MARK = \"(u\d{4}-[0-9a-f]{8})\"")


def unit_path(index: int) -> str:
    return f"src/area_{index % 8}/unit_{index:04d}.py"


def unit_source(index: int, kb: int, rng: random.Random) -> str:
    lines = [
        f'"""Unit {index:04d}: one step of the sample pipeline."""',
        "",
        f'UNIT_MARK = "u{index:04d}-{rng.getrandbits(32):08x}"',
    ]
    lines += [f'SLOT_{index:04d}_{slot} = "open"' for slot in range(SLOTS)]
    body = 0
    while sum(len(line) + 1 for line in lines) < kb * 1024:
        body += 1
        a, b = rng.randint(1, 999), rng.randint(1, 999)
        lines += [
            "",
            f"def helper_{index:04d}_{body:02d}(value: int, scale: int = {a}) -> int:",
            f'    """Scale by {a}, offset by {b}: section {body} of unit {index}."""',
            f"    return value * scale + {b} if value % {max(2, b % 11)} else value // {max(2, a % 7)}",
        ]
    return "\n".join(lines) + "\n"


def make_session(out: Path, steps: int, kb: int = 6, seed: int = 22) -> Path:
    """OUT/repo and OUT/scenario.json; returns OUT. Kept when already made with these sizes."""
    stamp = out / "made.json"
    spec = {"steps": steps, "kb": kb, "seed": seed}
    if stamp.exists() and json.loads(stamp.read_text()) == spec:
        return out
    shutil.rmtree(out, ignore_errors=True)
    repo = out / "repo"
    rng = random.Random(seed)
    units = max(40, steps // 4)
    for index in range(units):
        path = repo / unit_path(index)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(unit_source(index, kb, rng))
    (repo / "README.md").write_text("# Sample pipeline\n\nUnits live under src/area_*/.\n")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "Sample pipeline"], cwd=repo, check=True)
    scenario = {
        "repo": str(repo),
        "task": TASK,
        "steps": script(steps, units, rng),
        "final": FINAL,
        "facts": [],
    }
    (out / "scenario.json").write_text(json.dumps(scenario, indent=0))
    stamp.write_text(json.dumps(spec))
    return out


def script(steps: int, units: int, rng: random.Random) -> list[dict[str, Any]]:
    """The model's steps: Reads (a third of them open a Read-then-Edit pair), Greps, Bash."""
    out: list[dict[str, Any]] = []
    pending: list[tuple[int, int, int]] = []  # (due step, unit, slot)
    busy: set[int] = set()
    next_slot = [0] * units
    while len(out) < steps:
        position = len(out)
        due = [p for p in pending if p[0] <= position]
        if due:
            _, unit, slot = due[0]
            pending.remove(due[0])
            busy.discard(unit)
            old, new = f'SLOT_{unit:04d}_{slot} = "open"', f'SLOT_{unit:04d}_{slot} = "done"'
            out.append(edit_step(unit, old, new))
            continue
        roll = rng.random()
        if roll < 0.45:
            unit = rng.randrange(units)
            if roll < 0.22 and unit not in busy and next_slot[unit] < SLOTS:
                busy.add(unit)
                pending.append((position + rng.choice(GAPS), unit, next_slot[unit]))
                next_slot[unit] += 1
            out.append(
                {
                    "say": f"Reading unit {unit}.",
                    "tool": "Read",
                    "input": {"file_path": "{repo}/" + unit_path(unit)},
                }
            )
        elif roll < 0.7:
            out.append(grep_step(rng, units))
        else:
            out.append(bash_step(rng, units))
    return out


def edit_step(unit: int, old: str, new: str) -> dict[str, Any]:
    path = "{repo}/" + unit_path(unit)
    return {"tool": "Edit", "input": {"file_path": path, "old_string": old, "new_string": new}}


def grep_step(rng: random.Random, units: int) -> dict[str, Any]:
    unit = rng.randrange(units)
    if rng.random() < 0.5:
        query = {"pattern": f"def helper_{unit:04d}_0", "output_mode": "files_with_matches"}
    else:
        query = {"pattern": f"SLOT_{unit:04d}_", "output_mode": "content", "-n": True}
    return {"tool": "Grep", "input": {**query, "path": "{repo}/src"}}


def bash_step(rng: random.Random, units: int) -> dict[str, Any]:
    area, unit = rng.randrange(8), rng.randrange(units)
    commands = (
        f"wc -l {{repo}}/src/area_{area}/*.py | tail -3",
        "git -C {repo} status --short | head -20",
        f"ls {{repo}}/src/area_{area} | head -30",
        f"grep -c done {{repo}}/{unit_path(unit)}",
    )
    return {"tool": "Bash", "input": {"command": rng.choice(commands), "description": "Check"}}


@dataclass
class LogFigures:
    requests: int = 0
    main: int = 0
    summaries: int = 0
    refused: int = 0
    task_kept: int = 0
    peak_tokens: int = 0
    gaps_s: list[float] = field(default_factory=list)
    step_times: dict[int, float] = field(default_factory=dict)  # step -> arrival (epoch)
    first_main_at: float | None = None
    edits: int = 0
    edits_not_applied: int = 0
    refused_read_in_context: int = 0
    refused_read_gone: int = 0
    last_step: int = 0

    def overhead_ms(self) -> float | None:
        return statistics.median(self.gaps_s) * 1000 if self.gaps_s else None


def read_log(log: Path, scenario: dict[str, Any], repo: Path | None = None) -> LogFigures:
    """The figures of one run (see the module docstring); ``repo`` for the Edits' outcome."""
    sys.path.insert(0, str(REFEREE))
    import checks  # the referee's own notion of what a request shows

    figures = LogFigures()
    steps = scenario.get("steps", [])
    edit_marker_seen: dict[int, bool] = {}  # edit step index -> its unit's Read was in context
    previous: dict[str, Any] | None = None
    if not log.exists():
        return figures
    with open(log) as lines:
        for line in lines:
            record = json.loads(line)
            figures.requests += 1
            kind = record.get("kind")
            if record.get("refused"):
                figures.refused += 1
            elif kind == "compact":
                figures.summaries += 1
            if kind != "main" or record.get("refused"):
                previous = None
                continue
            figures.main += 1
            figures.peak_tokens = max(figures.peak_tokens, record.get("tokens", 0))
            text = checks.texts_of_request(record["body"])
            figures.task_kept += scenario["task"] in text
            if figures.first_main_at is None:
                figures.first_main_at = record["t"]
            step = record.get("step", 0)
            figures.step_times[step] = record["t"]
            figures.last_step = max(figures.last_step, step)
            given = steps[step - 1] if 0 < step <= len(steps) else {}
            if given.get("tool") == "Edit":
                marks = set(MARK.findall(text))
                unit = int(re.search(r"unit_(\d{4})", given["input"]["file_path"]).group(1))
                edit_marker_seen[step - 1] = any(m.startswith(f"u{unit:04d}-") for m in marks)
            if previous is not None:
                figures.gaps_s.append(record["t"] - previous["t"])
            previous = record
    if repo is not None:
        edits_outcome(figures, steps, edit_marker_seen, repo)
    return figures


def edits_outcome(
    figures: LogFigures, steps: list[dict[str, Any]], seen: dict[int, bool], repo: Path
) -> None:
    """Which given Edits are not in the files at the end, split by whether their Read was in context."""
    contents: dict[str, str] = {}
    for index, in_context in seen.items():
        step = steps[index]
        path = step["input"]["file_path"].replace("{repo}/", "")
        if path not in contents:
            contents[path] = (repo / path).read_text()
        figures.edits += 1
        if step["input"]["new_string"] in contents[path]:
            continue
        figures.edits_not_applied += 1
        if in_context:
            figures.refused_read_in_context += 1
        else:
            figures.refused_read_gone += 1
