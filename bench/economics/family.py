"""The workload family: every run of the table, and the scenario folders they start from.

A run is one scenario at one window. The folders are prepared once under
OUT/src (regenerated when the generator or the probes change): the audit
(bench/audit.py's 51-call script, turned into a referee scenario), the
generated sessions of SEEDS, and the referee's spotter replays with their
retention probes added.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.economics import generate, probes, sample_repo

SEEDS = (1, 2, 3)
GENERATED_WINDOWS = (100_000, 120_000, 200_000)
SPOTTER = ("258c7280", "4d5611e5", "fa812bfe")
LONGEST_SPOTTER = "fa812bfe"


@dataclass(frozen=True)
class Run:
    id: str
    family: str  # audit, generated, spotter, spotter-60K
    window: int
    source: str  # folder under OUT/src


def all_runs() -> list[Run]:
    runs = [Run("audit-w120", "audit", 120_000, "audit")]
    for seed in SEEDS:
        for w in GENERATED_WINDOWS:
            runs.append(Run(f"gen{seed}-w{w // 1000}", "generated", w, f"gen{seed}"))
    for name in SPOTTER:
        runs.append(Run(f"spot-{name}-w200", "spotter", 200_000, f"spotter/{name}"))
        runs.append(Run(f"spot-{name}-w120", "spotter", 120_000, f"spotter/{name}w120"))
    runs.append(
        Run(f"spot-{LONGEST_SPOTTER}-w060", "spotter-60K", 60_000, f"spotter/{LONGEST_SPOTTER}w120")
    )
    return runs


def select(runs: list[Run], only: str) -> list[Run]:
    """Runs whose id or family matches one of the comma-separated patterns (glob or substring)."""
    if not only:
        return runs
    pats = [p.strip() for p in only.split(",") if p.strip()]

    def hit(run: Run, pat: str) -> bool:
        if any(c in pat for c in "*?["):
            return fnmatch.fnmatch(run.id, pat) or fnmatch.fnmatch(run.family, pat)
        return pat in run.id or pat == run.family

    return [r for r in runs if any(hit(r, p) for p in pats)]


def audit_scenario(out: Path) -> None:
    """bench/audit.py's repository and 51-call script as a referee scenario."""
    from bench import audit

    repo = out / "repo"
    repo.mkdir(parents=True)
    paths = audit.make_repo(repo)
    steps: list[dict[str, Any]] = []
    final = ""
    for reply in audit.script(paths, repo):
        texts = [b["text"] for b in reply.content if b["type"] == "text"]
        calls = [b for b in reply.content if b["type"] == "tool_use"]
        if not calls:
            final = texts[0]
            continue
        inp = json.loads(json.dumps(calls[0]["input"]).replace(str(repo), "{repo}"))
        step = {"tool": calls[0]["name"], "input": inp}
        if texts:
            step["say"] = texts[0]
        steps.append(step)
    facts = {i: audit.fact(i) for i in range(1, audit.MODULES + 1)}
    sc = {
        "repo": str(repo),
        "task": audit.USER_REQUEST,
        "steps": steps,
        "final": final,
        "facts": list(facts.values()),
    }
    sc["probes"] = probes.module_probes(sc, facts)
    (out / "scenario.json").write_text(json.dumps(sc, indent=1))


def spotter_scenarios(out: Path, archive: Path) -> None:
    out.mkdir(parents=True)
    with tarfile.open(archive) as t:
        t.extractall(out, filter="tar")
    for sc_path in sorted(out.glob("*/scenario.json")):
        sc = json.loads(sc_path.read_text())
        sc["probes"] = probes.replay_probes(sc, sc_path.parent / "repo")
        sc_path.write_text(json.dumps(sc))


def stamp(archive: Path) -> str:
    h = hashlib.sha256()
    for mod in (generate, sample_repo, probes):
        h.update(Path(mod.__file__).read_bytes())
    h.update(Path(__file__).read_bytes())
    h.update(str(archive.stat().st_size).encode())
    return h.hexdigest()[:16]


def session_hashes(src: Path) -> dict[str, str]:
    """Per run, a hash of what it asks of the clients (task, steps, final): equal hashes, same session."""
    out = {}
    for run in all_runs():
        sc = json.loads((src / run.source / "scenario.json").read_text())
        blob = json.dumps([run.window, sc["task"], sc["steps"], sc["final"]]).encode()
        out[run.id] = hashlib.sha256(blob).hexdigest()[:16]
    return out


def prepare(src: Path, archive: Path) -> Path:
    """Make (or reuse) every scenario folder under src; returns src."""
    mark = src / "stamp.txt"
    want = stamp(archive)
    if mark.exists() and mark.read_text() == want:
        return src
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    audit_scenario(src / "audit")
    for seed in SEEDS:
        generate.generate(src / f"gen{seed}", seed)
    spotter_scenarios(src / "spotter", archive)
    mark.write_text(want)
    return src
