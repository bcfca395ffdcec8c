"""Retention on the referee's logs: checks.py's notion, for any scenario.

The referee's checks.retention asks, of every main request, whether the task is
there verbatim and whether the FACT lines of the 5 most recently read distinct
files are there; it finds files by a `module_NN.py` name and facts by NN. Here
the same rule runs over a scenario's `probes` (Read step index -> [file, fact]),
so it also covers generated sessions and replays: a file counts once, with the
fact of its latest read (a part of the log read after another replaces it, as
a re-read after an edit does). Replays get their probes from `replay_probes`:
it replays the scenario's Edit and Write steps over the repository's files and
takes, for each Read, the longest line (20-200 characters, once in the file) of the part it read, as
the file then was.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

RECENT = 5
DEFAULT_LIMIT = 2000  # lines a Read without limit shows, in both clients


def module_probes(scenario: dict[str, Any], facts: dict[int, str]) -> dict[str, list[str]]:
    """Probes for an audit-style scenario: a Read of module_NN.py probes facts[NN]."""
    probes = {}
    for i, step in enumerate(scenario["steps"]):
        if step.get("tool") != "Read":
            continue
        m = re.search(r"module_(\d+)\.py", step["input"]["file_path"])
        if m and int(m.group(1)) in facts:
            probes[str(i)] = [f"module_{m.group(1)}", facts[int(m.group(1))]]
    return probes


def fingerprint(lines: list[str]) -> str | None:
    counts: dict[str, int] = {}
    for line in lines:
        s = line.strip()
        counts[s] = counts.get(s, 0) + 1
    best = [s for s, n in counts.items() if n == 1 and 20 <= len(s) <= 200]
    return max(best, key=lambda s: (len(s), s)) if best else None


def replay_probes(scenario: dict[str, Any], repo: Path) -> dict[str, list[str]]:
    """Probes for a replayed session (see the module docstring)."""
    files: dict[str, str] = {}

    def content(path: str) -> str | None:
        if path not in files:
            p = repo / path
            try:
                files[path] = p.read_text()
            except (OSError, UnicodeDecodeError):
                return None
        return files[path]

    probes = {}
    for i, step in enumerate(scenario["steps"]):
        tool, inp = step.get("tool"), step.get("input") or {}
        path = str(inp.get("file_path", "")).replace("{repo}/", "")
        if not path or path.startswith("/"):
            continue
        if tool == "Write":
            files[path] = inp.get("content", "")
        elif tool == "Edit":
            text = content(path)
            old = inp.get("old_string", "")
            if text is not None and old and old in text:
                count = -1 if inp.get("replace_all") else 1
                files[path] = text.replace(old, inp.get("new_string", ""), count)
        elif tool == "Read":
            text = content(path)
            if text is None:
                continue
            start = max(1, int(inp.get("offset") or 1)) - 1
            part = text.splitlines()[start : start + int(inp.get("limit") or DEFAULT_LIMIT)]
            fp = fingerprint(part)
            if fp:
                probes[str(i)] = [path, fp]
    return probes


def retention(
    recs: list[dict[str, Any]], scenario: dict[str, Any], texts_of_request: Any
) -> dict[str, int]:
    """Main requests checked, how many carry the task verbatim, how many carry every recent unit.

    `texts_of_request` is the referee's checks.texts_of_request (what a request shows).
    Like checks.retention, request with step k shows the results of steps before k - 1.
    """
    probes = scenario.get("probes") or {}
    checked = task = recent_ok = 0
    for r in recs:
        if r["kind"] != "main" or r.get("refused"):
            continue
        checked += 1
        text = texts_of_request(r["body"])
        task += scenario["task"] in text
        units: dict[str, str] = {}
        for idx in range(max(0, (r.get("step") or 0) - 1)):
            probe = probes.get(str(idx))
            if probe:
                units.pop(probe[0], None)
                units[probe[0]] = probe[1]
        recent_ok += all(fact in text for fact in list(units.values())[-RECENT:])
    return {"checked": checked, "task_kept": task, "recent_kept": recent_ok}
