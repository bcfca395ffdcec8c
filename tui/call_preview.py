"""What a call asking for permission would do, for any front end: an Edit's diff, a Write's head."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from tools.edit import plan_edit
from tools.paths import short_path
from tools.write import unified_diff

CONTENT_HEAD_LINES = 20
PREVIEW_FILE_BYTES = 2_000_000  # larger files get the strings' own diff, not a read of the file


def edit_diff(tool_input: dict[str, Any], cwd: Path | None = None) -> str:
    """The diff the edit would make, at its real place in the file with 3 lines of context.

    When the file cannot be read or the edit would not apply (the tool will say
    why), the two strings are diffed on their own, still under the file's name.
    """
    base = cwd or Path.cwd()
    path = base / str(tool_input.get("file_path", "file"))
    old = str(tool_input.get("old_string", ""))
    new = str(tool_input.get("new_string", ""))
    text = _small_text(path)
    if text is not None:
        plan = plan_edit(text, old, new, bool(tool_input.get("replace_all")))
        if not isinstance(plan, str):
            return unified_diff(text, plan.text, path, base) or ""
    label = short_path(str(path), base)
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{label}",
        tofile=f"b/{label}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _small_text(path: Path) -> str | None:
    try:
        if path.stat().st_size > PREVIEW_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, ValueError):  # missing, a directory, not UTF-8, a NUL in the name
        return None


def write_head(
    tool_input: dict[str, Any], limit: int = CONTENT_HEAD_LINES
) -> tuple[list[str], int]:
    """The first ``limit`` lines a Write would put in its file, and how many more follow."""
    lines = str(tool_input.get("content", "")).splitlines()
    return lines[:limit], max(0, len(lines) - limit)
