"""Telling a ccx session file from another tool's (a Claude Code transcript, say).

``-r`` must refuse such a file before anything is written to it: ccx would
read none of its records and append its own, spoiling it for its owner.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

_SNIFF_LINES = 20
# Keys every Claude Code transcript record carries and no ccx record does.
_CLAUDE_CODE_KEYS = ("parentUuid", "sessionId", "isSidechain", "leafUuid")


def foreign_session_reason(path: Path) -> str | None:
    """Why ``path`` is not a ccx session file (in words for the user); None when it is one.

    A file whose first records are ccx's (its ``session`` header, or a record ccx
    writes) is ccx's; an empty or unreadable file is left to the loader to report.
    """
    try:
        with open(path, "rb") as handle:
            lines = [handle.readline() for _ in range(_SNIFF_LINES)]
    except OSError:
        return None
    records = []
    for raw in lines:
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(record, dict):
            records.append(record)
    if not records or records[0].get("type") == "session":
        return None
    if any(key in record for record in records for key in _CLAUDE_CODE_KEYS):
        return claude_code_refusal(path)
    return None


def claude_code_refusal(path: Path) -> str:
    return (
        f"{path} is a Claude Code transcript, not a ccx session; ccx cannot resume it "
        "(start a new session, or continue it in Claude Code)"
    )


def claude_code_transcript(session_id: str, home: Path | None = None) -> Path | None:
    """The Claude Code transcript with this id under ``~/.claude/projects``, if there is one."""
    if home is not None:
        root = home / ".claude"
    else:
        root = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    if not session_id or os.sep in session_id or session_id.startswith("."):
        return None
    try:
        folders = sorted(p for p in (root / "projects").iterdir() if p.is_dir())
    except OSError:
        return None
    for folder in folders:
        candidate = folder / f"{session_id}.jsonl"
        if candidate.is_file():
            return candidate
    return None
