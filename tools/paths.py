"""Paths as the file tools show them: relative labels, and errors for paths that do not work.

``short_path`` is how a label names a file (relative to the session's working
directory when it lies inside it); the messages explain a missing file (with
near-miss names) or a path the OS refuses.
"""

from __future__ import annotations

import os
from pathlib import Path

from tools.base import StrPath, ToolContext, ToolResult
from tools.surrogates import escape_text, not_utf8_note


def short_path(path: str, cwd: StrPath | None = None) -> str:
    """A path as the user would write it: relative to `cwd` (default: the current directory)."""
    if os.path.isabs(path):
        try:
            rel = os.path.relpath(path, cwd)
        except ValueError:
            return path
        if not rel.startswith(".."):
            return rel
    return path


def unusable_path(path: Path, action: str, exc: OSError | ValueError) -> ToolResult:
    """The error for a path the OS refuses: a NUL byte in it (ValueError), or an OSError."""
    if isinstance(exc, ValueError):
        return ToolResult.error(
            f"The path contains a NUL byte, which no file name can: {str(path)!r}. "
            "Check the path and try again."
        )
    return ToolResult.error(f"Cannot {action} {path}: {exc.strerror or exc}")


def missing_file_message(path: Path, given: str, ctx: ToolContext) -> str:
    msg = f"File does not exist: {path}"
    if not os.path.isabs(os.path.expanduser(given)):
        msg += f" (resolved against the working directory {ctx.cwd})"
    parent = path.parent
    if not parent.is_dir():
        return escape_text(msg + f". Its directory {parent} does not exist either.")
    similar = similar_names(parent, path.name)
    if similar:
        msg += ". Did you mean: " + ", ".join(str(parent / name) for name in similar) + "?"
    else:
        msg += "."
    return escape_text(msg + not_utf8_note(given))


def similar_names(directory: Path, name: str, limit: int = 3) -> list[str]:
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    stem = name.split(".")[0]
    same_stem = [n for n in names if n.split(".")[0] == stem and n != name]
    import difflib  # only when a path is missing: off the cold start's way

    close = difflib.get_close_matches(name, names, n=limit, cutoff=0.6)
    return list(dict.fromkeys(close + sorted(same_stem)))[:limit]
