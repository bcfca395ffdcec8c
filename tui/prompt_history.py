"""The prompts typed in a project, kept beside its sessions: what the app's up arrow and ctrl+r walk.

``<config>/projects/<cwd>/prompts.history``, one JSON object a line (``{"text": ...}``),
oldest first. A file that cannot be read or written costs the history, never the session.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

HISTORY_FILE = "prompts.history"  # not *.jsonl: the session store lists those as sessions
KEPT = 1_000  # the newest this many are loaded


def history_path(cwd: str | os.PathLike[str]) -> Path:
    from agent.sessions.store import project_dir

    return project_dir(cwd) / HISTORY_FILE


def load_prompts(path: Path) -> list[str]:
    """The project's prompts, oldest first; lines that do not parse are skipped."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    prompts: list[str] = []
    for line in lines[-KEPT:]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        text = record.get("text") if isinstance(record, dict) else None
        if isinstance(text, str) and text.strip() and (not prompts or prompts[-1] != text):
            prompts.append(text)
    return prompts


def add_prompt(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as file:
            file.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
    except OSError:
        pass  # a read-only config directory: the prompt is still sent
