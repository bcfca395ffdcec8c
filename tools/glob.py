"""Glob: find files by name pattern, newest first.

The files are listed by ripgrep (`rg --files`) when it is installed, else by a
walk in Python; either way the pattern is matched here, so both give the same
answer.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

from pydantic import Field

from tools import rg_binary
from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
from tools.file_listing import rg_files
from tools.glob_pattern import compile_glob
from tools.paths import short_path
from tools.surrogates import escape_text

MAX_RESULTS = 100
# Walked only when the pattern names them: they are huge and rarely what is wanted.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
    }
)
_MAGIC = re.compile(r"[*?\[{]")


class GlobParams(ToolParams):
    pattern: str = Field(description='The glob pattern to match files against, e.g. "**/*.py"')
    path: str | None = Field(
        default=None,
        description="The directory to search in (default: the working directory). Omit it to "
        'use the default; do not pass "undefined" or "null"',
    )


class GlobTool(Tool[GlobParams]):
    name = "Glob"
    is_mutating = False

    def label(self, params: GlobParams, cwd: StrPath | None = None) -> str:
        where = given_path(params.path)
        label = f"Glob {one_line(params.pattern)}"
        return label + (f" in {one_line(short_path(where, cwd))}" if where else "")

    async def run(self, params: GlobParams, ctx: ToolContext) -> ToolResult:
        given = given_path(params.path)
        root = ctx.resolve(given) if given else ctx.cwd
        if not root.exists():
            return ToolResult.error(f"Directory does not exist: {root}")
        if not root.is_dir():
            return ToolResult.error(f"{root} is a file, not a directory; give a directory as path.")
        pattern = params.pattern.strip()
        if not pattern:
            return ToolResult.error("pattern is empty; give a glob such as **/*.py")
        base, rest = split_literal_prefix(root, pattern)
        cancel = threading.Event()
        try:
            matches = await asyncio.to_thread(find_files, base, rest, cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise
        return _result([m for m in matches if not ctx.hidden(m[1])])


def given_path(path: str | None) -> str | None:
    """The path the model gave, if any; models sometimes spell "no path" as a string."""
    if path is None or path.strip() in ("", "undefined", "null", "None"):
        return None
    return path


def split_literal_prefix(root: Path, pattern: str) -> tuple[Path, str]:
    """Move leading components without wildcards into the base directory ("src/**/*.py")."""
    pattern = os.path.expanduser(pattern)
    if os.path.isabs(pattern):
        root, pattern = Path(os.sep), pattern.lstrip("/")
    parts = pattern.split("/")
    literal = 0
    while literal < len(parts) - 1 and not _MAGIC.search(parts[literal]):
        literal += 1
    base = Path(os.path.normpath(root.joinpath(*parts[:literal]))) if literal else root
    return base, "/".join(parts[literal:])


def find_files(base: Path, pattern: str, cancel: threading.Event) -> list[tuple[float, str]]:
    """(mtime, absolute path) of every file under `base` whose relative path matches `pattern`.

    Symlinks are neither listed nor followed, as in Grep and ripgrep.
    """
    if not _MAGIC.search(pattern):
        target = base / pattern
        return [(_mtime(target), str(target))] if target.is_file() else []
    regex = compile_glob(pattern)
    named = set(pattern.split("/")) & SKIP_DIRS
    # Without "**" a pattern's depth is fixed, so deeper directories need no visit.
    max_depth = None if "**" in pattern else pattern.count("/")
    rg = rg_binary.find_rg()
    listed = (
        _walk(base, named, max_depth, cancel)
        if rg is None
        else _rg_list(rg, base, named, max_depth, cancel)
    )
    root = str(base)
    found: list[tuple[float, str]] = []
    for rel in listed:
        if regex.fullmatch(rel):
            path = os.path.join(root, rel)
            found.append((_mtime(path), path))
    return found


def _rg_list(
    rg: str, base: Path, named: set[str], max_depth: int | None, cancel: threading.Event
) -> Iterator[str]:
    args = ["--no-ignore", "--hidden"]  # Glob shows every file: ignored and hidden ones too
    args += [f"--glob=!{name}/" for name in sorted(SKIP_DIRS - named)]
    if max_depth is not None:
        args.append(f"--max-depth={max_depth + 1}")
    for rel in rg_files(rg, str(base), args, cancel):
        yield rel.replace(os.sep, "/")


def _walk(
    base: Path, named: set[str], max_depth: int | None, cancel: threading.Event
) -> Iterator[str]:
    """The same listing as _rg_list, in Python."""
    stack: list[tuple[str, str, int]] = [(str(base), "", 0)]
    while stack and not cancel.is_set():
        directory, rel, depth = stack.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                rel_path = rel + entry.name
                try:
                    if entry.is_symlink():
                        continue
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if (max_depth is None or depth < max_depth) and (
                        entry.name not in SKIP_DIRS or entry.name in named
                    ):
                        stack.append((entry.path, rel_path + "/", depth + 1))
                else:
                    yield rel_path


def _mtime(path: str | Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _result(matches: list[tuple[float, str]]) -> ToolResult:
    if not matches:
        return ToolResult(output="No files found", display="No files found", meta={"count": 0})
    matches.sort(key=lambda m: (-m[0], m[1]))
    shown = [escape_text(path) for _, path in matches[:MAX_RESULTS]]
    output = "\n".join(shown)
    truncated = len(matches) > MAX_RESULTS
    if truncated:
        output += (
            f"\n(Results are truncated: showing the {MAX_RESULTS} most recently modified of "
            f"{len(matches)} files. Use a more specific path or pattern.)"
        )
    display = f"Found {len(matches)} file{'s' if len(matches) != 1 else ''}"
    return ToolResult(
        output=output,
        display=display,
        meta={"count": len(matches), "truncated": truncated, "display": display},
    )
