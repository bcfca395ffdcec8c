"""Glob: find files by name pattern, newest first.

Also the glob-to-regex translation that Grep's pure-Python engine shares
(``**``, ``*``, ``?``, ``[...]``, ``{a,b}``), in plain form for Glob and in
gitignore form (unanchored without a slash) for Grep's ``glob`` filter.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from functools import lru_cache
from pathlib import Path

from pydantic import Field

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
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
    """(mtime, absolute path) of every file under `base` whose relative path matches `pattern`."""
    if not _MAGIC.search(pattern):
        target = base / pattern
        return [(_mtime(target), str(target))] if target.is_file() else []
    regex = compile_glob(pattern)
    named = set(pattern.split("/")) & SKIP_DIRS
    # Without "**" a pattern's depth is fixed, so deeper directories need no visit.
    max_depth = None if "**" in pattern else pattern.count("/")
    found: list[tuple[float, str]] = []
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
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if (max_depth is None or depth < max_depth) and (
                        entry.name not in SKIP_DIRS or entry.name in named
                    ):
                        stack.append((entry.path, rel_path + "/", depth + 1))
                elif regex.fullmatch(rel_path):
                    found.append((_mtime(entry.path), entry.path))
    return found


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


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex for the whole relative path: `*` and `?` stay within one path component."""
    return re.compile(glob_to_regex(pattern), re.DOTALL)


@lru_cache(maxsize=256)
def compile_gitignore_glob(glob: str) -> tuple[re.Pattern[str], bool]:
    """Gitignore-style: no slash means any depth; a trailing slash matches directories only."""
    dir_only = glob.endswith("/")
    body = glob.rstrip("/")
    anchored = "/" in body
    body = body.lstrip("/")
    regex = glob_to_regex(body)
    if not anchored:
        regex = "(?:.*/)?" + regex
    return re.compile(regex, re.DOTALL), dir_only


def glob_to_regex(pattern: str, *, braces: bool = True) -> str:
    out: list[str] = []
    depth = 0
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            whole_component = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
            if j - i >= 2 and whole_component:
                if j == n:
                    out.append(".*")
                else:
                    out.append("(?:.*/)?")  # "**/": zero or more directories
                    j += 1
            else:
                out.append("[^/]*")
            i = j
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            end = _class_end(pattern, i)
            if end == -1:
                out.append(re.escape(c))
            else:
                inner = pattern[i + 1 : end]
                negate = inner[:1] in ("!", "^")
                inner = inner[1:] if negate else inner
                inner = inner.replace("\\", "\\\\").replace("[", "\\[")
                out.append(f"[{'^/' if negate else ''}{inner}]")
                i = end + 1
                continue
        elif c == "{" and braces:
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    if depth:  # an unclosed brace is just a character
        return glob_to_regex(pattern, braces=False)
    return "".join(out)


def _class_end(pattern: str, start: int) -> int:
    j = start + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    end = pattern.find("]", j)
    return end
