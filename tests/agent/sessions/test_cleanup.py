"""cleanupPeriodDays: old transcripts and their output folders go, the rest stay."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agent.sessions.cleanup import remove_old_sessions


def transcript(root: Path, project: str, name: str, age_days: float) -> Path:
    path = root / "projects" / project / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\n")
    (path.with_suffix("")).mkdir()
    (path.with_suffix("") / "output.txt").write_text("saved")
    stamp = time.time() - age_days * 86400
    os.utime(path, (stamp, stamp))
    return path


def test_old_transcripts_go_with_their_folders(tmp_path: Path) -> None:
    old = transcript(tmp_path, "-a", "old", 40)
    recent = transcript(tmp_path, "-a", "recent", 3)
    elsewhere = transcript(tmp_path, "-b", "other", 31)
    kept = transcript(tmp_path, "-b", "open", 90)
    assert remove_old_sessions(30, keep=kept, root=tmp_path) == 2
    assert not old.exists() and not old.with_suffix("").exists()
    assert not elsewhere.exists()
    assert recent.exists() and recent.with_suffix("").exists()
    assert kept.exists()


def test_nothing_to_clean(tmp_path: Path) -> None:
    assert remove_old_sessions(30, root=tmp_path) == 0
