"""Old transcripts deleted at start-up: ``cleanupPeriodDays`` (Claude Code's setting).

A transcript not written for longer than the period goes, with the folder of
saved tool outputs beside it; the session being opened never does. Only what
ccx keeps under its own ``projects`` folder is touched, and a file that cannot
be removed is left for the next start.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from agent.core.locations import config_dir

DEFAULT_DAYS = 30


def remove_old_sessions(
    days: int, keep: Path | None = None, root: Path | None = None, now: float | None = None
) -> int:
    """Delete transcripts last written more than ``days`` days ago; how many went."""
    projects = (root if root is not None else config_dir()) / "projects"
    cutoff = (now if now is not None else time.time()) - days * 86400
    removed = 0
    try:
        folders = [p for p in projects.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return 0
    for folder in folders:
        try:
            transcripts = [p for p in folder.glob("*.jsonl") if p.is_file() and not p.is_symlink()]
        except OSError:
            continue
        for path in transcripts:
            if keep is not None and path == keep:
                continue
            try:
                if path.stat().st_mtime >= cutoff:
                    continue
                path.unlink()
            except OSError:
                continue
            removed += 1
            outputs = path.with_suffix("")
            if outputs.is_dir() and not outputs.is_symlink():
                shutil.rmtree(outputs, ignore_errors=True)
    return removed
