"""Grep: search file contents with a regular expression.

Runs ripgrep (installed with ccx: tools/rg_binary.py), and a pure-Python
engine when rg is missing or cannot take the pattern; both return structured
hits that are formatted here, so the model sees the same output whichever ran.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from pathlib import Path
from typing import Literal

from pydantic import Field

from tools import grep_python, grep_rg, rg_binary
from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
from tools.glob import given_path
from tools.grep_python import FILE_TYPES, FileHits, GrepOutcome, GrepQuery, OutputMode
from tools.paths import short_path
from tools.read_text import BINARY_SNIFF_BYTES
from tools.surrogates import escape_text

MAX_OUTPUT_CHARS = 30_000
TIMEOUT_S = 60.0
Engine = Literal["auto", "rg", "python"]
_NEWLINE_IN_PATTERN = re.compile(r"\n|(?<!\\)(?:\\\\)*\\n")
_NEGATED_CLASS = re.compile(r"\[\^(?:\\.|[^\]\\])*\]")  # [^\n] never matches a newline: fine


class GrepParams(ToolParams):
    pattern: str = Field(description="Regular expression to search for in file contents")
    path: str | None = Field(
        default=None,
        description="File or directory to search in (default: the working directory)",
    )
    glob: str | None = Field(
        default=None,
        description='Only search files whose path matches this glob, e.g. "*.js" or "*.{ts,tsx}"; '
        'separate several with commas or spaces, prefix one with "!" to exclude',
    )
    file_type: str | None = Field(
        default=None,
        alias="type",
        description="File type to search, e.g. py, js, ts, rust, go, java, md (faster than glob "
        "for standard types)",
    )
    output_mode: Literal["content", "files_with_matches", "count"] | None = Field(
        default=None,
        description='"content" shows matching lines, "files_with_matches" (the default) lists '
        'matching files, "count" gives match counts per file',
    )
    case_insensitive: bool | None = Field(
        default=None, alias="-i", description="Ignore case when matching"
    )
    line_numbers: bool | None = Field(
        default=None,
        alias="-n",
        description="Show line numbers (content mode only; default true)",
    )
    after_context: int | None = Field(
        default=None,
        ge=0,
        alias="-A",
        description="Lines to show after each match (content mode only)",
    )
    before_context: int | None = Field(
        default=None,
        ge=0,
        alias="-B",
        description="Lines to show before each match (content mode only)",
    )
    context: int | None = Field(
        default=None,
        ge=0,
        alias="-C",
        description="Lines to show before and after each match (content mode only)",
    )
    head_limit: int | None = Field(
        default=None,
        ge=0,
        description="Keep only the first N lines (content), files (files_with_matches) or "
        "entries (count); 0 or absent means no limit",
    )
    multiline: bool | None = Field(
        default=None,
        description="Let the pattern span lines (. also matches newlines); default false",
    )


class GrepTool(Tool[GrepParams]):
    name = "Grep"
    is_mutating = False

    def __init__(self, engine: Engine = "auto", timeout_s: float = TIMEOUT_S) -> None:
        self.engine = engine
        self.timeout_s = timeout_s

    def label(self, params: GrepParams, cwd: StrPath | None = None) -> str:
        where = given_path(params.path)
        label = f'Grep "{one_line(params.pattern)}"'
        if where:
            label += f" in {one_line(short_path(where, cwd))}"
        if params.glob or params.file_type:
            label += f" ({one_line(params.glob or params.file_type or '')})"
        return label

    async def run(self, params: GrepParams, ctx: ToolContext) -> ToolResult:
        query = _build_query(params, ctx)
        if isinstance(query, ToolResult):
            return query
        rg = rg_binary.find_rg() if self.engine != "python" else None
        if self.engine == "rg" and rg is None:
            return ToolResult.error("ripgrep (rg) is not installed.")
        if query.root.is_file() and _is_binary(query.root):
            return ToolResult(output=f"No matches found ({query.root} is a binary file)")
        type_name = params.file_type if params.file_type and not query.type_globs else None
        if type_name and rg is None:
            known = ", ".join(sorted(FILE_TYPES))
            return ToolResult.error(f'Unknown file type "{type_name}". Known types: {known}.')
        try:
            found = await self._search(query, rg, type_name)
        except TimeoutError:
            return ToolResult.error(
                f"Grep timed out after {self.timeout_s:g} s. Narrow the search with path, glob "
                "or type."
            )
        if isinstance(found, ToolResult):
            return found
        outcome, engine = found
        outcome.files = [hits for hits in outcome.files if not ctx.hidden(hits.path)]
        return format_result(outcome, query, params, ctx.cwd, engine)

    async def _search(
        self, query: GrepQuery, rg: str | None, type_name: str | None
    ) -> tuple[GrepOutcome, str] | ToolResult:
        if rg is not None:
            try:
                return await grep_rg.search(query, rg, type_name, self.timeout_s), "rg"
            except grep_rg.RgError as exc:
                # rg lacks look-around and backreferences; Python's re has them.
                python_ok = type_name is None and _python_regex_error(query) is None
                if "regex" not in str(exc) or not python_ok:
                    return ToolResult.error(_rg_error(str(exc)))
        else:
            error = _python_regex_error(query)
            if error is not None:
                return ToolResult.error(error)
        return await self._search_python(query), "python"

    async def _search_python(self, query: GrepQuery) -> GrepOutcome:
        cancel = threading.Event()
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(grep_python.search, query, cancel), self.timeout_s
            )
        finally:
            cancel.set()  # on timeout or cancellation the worker thread stops at the next file


def _build_query(params: GrepParams, ctx: ToolContext) -> GrepQuery | ToolResult:
    given = given_path(params.path)
    root = ctx.resolve(given) if given else ctx.cwd
    root = Path(os.path.normpath(root))
    if not root.exists():
        return ToolResult.error(f"Path does not exist: {root}")
    multiline = bool(params.multiline)
    if not multiline and _NEWLINE_IN_PATTERN.search(_NEGATED_CLASS.sub("", params.pattern)):
        return ToolResult.error(
            "The pattern contains a newline (\\n), which cannot match line by line. Set "
            "multiline to true to let matches span lines."
        )
    type_globs: tuple[str, ...] = ()
    if params.file_type:
        type_globs = grep_python.resolve_type(params.file_type) or ()
    mode: OutputMode = params.output_mode or "files_with_matches"
    before = params.before_context if params.before_context is not None else params.context
    after = params.after_context if params.after_context is not None else params.context
    return GrepQuery(
        pattern=params.pattern,
        root=root,
        cwd=ctx.cwd,
        mode=mode,
        globs=grep_python.split_globs(params.glob),
        type_globs=type_globs,
        ignore_case=bool(params.case_insensitive),
        multiline=multiline,
        before=(before or 0) if mode == "content" else 0,
        after=(after or 0) if mode == "content" else 0,
        vcs_ignores=ctx.respect_gitignore,
    )


def _python_regex_error(query: GrepQuery) -> str | None:
    try:
        grep_python.compile_pattern(query)
    except re.error as exc:
        return f"Invalid regular expression {query.pattern!r}: {exc}"
    return None


def _rg_error(message: str) -> str:
    if "regex" in message:
        return f"Invalid regular expression:\n{message}"
    return f"Grep failed: {message}"


def _is_binary(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return b"\0" in f.read(BINARY_SNIFF_BYTES)
    except OSError:
        return False


def format_result(
    outcome: GrepOutcome, query: GrepQuery, params: GrepParams, cwd: Path, engine: str
) -> ToolResult:
    files = outcome.files
    meta: dict[str, object] = {"engine": engine, "mode": query.mode, "files": len(files)}
    if not files:
        meta["display"] = "No matches"
        return ToolResult(output="No matches found", display="No matches", meta=meta)
    limit = params.head_limit or None
    if query.mode == "files_with_matches":
        lines, display = _files_lines(files, cwd, limit)
    elif query.mode == "count":
        lines, display = _count_lines(files, cwd, limit)
    else:
        numbers = params.line_numbers is not False
        lines, display = _content_lines(files, cwd, limit, numbers, query.before or query.after)
    text = _cap_output("\n".join(lines))
    if outcome.truncated:
        text += "\n(The search stopped early: too many matches. Narrow it with path, glob or type.)"
    meta["display"] = display
    meta["truncated"] = outcome.truncated
    return ToolResult(output=text, display=display, meta=meta)


def _display_path(path: str, cwd: Path) -> str:
    """Relative to the working directory; bytes that are not UTF-8 shown as \\xNN."""
    prefix = str(cwd).rstrip(os.sep) + os.sep
    return escape_text(path[len(prefix) :] if path.startswith(prefix) else path)


def _path_key(hits: FileHits) -> str:
    """Orders paths component by component: with the separator as the lowest character,
    "a/z" sorts before "a-b/c" as ("a", "z") does before ("a-b", "c")."""
    return hits.path.replace(os.sep, "\0")


def _files_lines(files: list[FileHits], cwd: Path, limit: int | None) -> tuple[list[str], str]:
    def newest_first(hits: FileHits) -> tuple[float, str]:
        mtime = hits.mtime
        if mtime is None:
            try:
                mtime = os.stat(hits.path).st_mtime
            except OSError:
                mtime = 0.0
        return -mtime, _path_key(hits)

    ordered = sorted(files, key=newest_first)
    noun = "file" if len(files) == 1 else "files"
    lines = [f"Found {len(files)} {noun}"]
    shown = ordered[:limit]
    size = 0
    for hits in shown:  # only as many as the output can hold: thousands of paths are cut anyway
        line = _display_path(hits.path, cwd)
        lines.append(line)
        size += len(line) + 1
        if size > MAX_OUTPUT_CHARS:
            break
    unbuilt = len(shown) - (len(lines) - 1)
    if limit and len(files) > limit:
        if unbuilt:
            unbuilt += 1  # the note below stays beyond the cut too
        else:
            lines.append(f"(Showing the first {limit} of {len(files)} files, newest first.)")
    lines.extend([""] * unbuilt)  # stand-ins, cut with the rest: the count of lines stays true
    return lines, f"Found {len(files)} {noun}"


def _count_lines(files: list[FileHits], cwd: Path, limit: int | None) -> tuple[list[str], str]:
    ordered = sorted(files, key=_path_key)
    lines = [f"{_display_path(h.path, cwd)}:{h.count}" for h in ordered[:limit]]
    if limit and len(files) > limit:
        lines.append(f"(Showing the first {limit} of {len(files)} files.)")
    total = sum(h.count for h in files)
    occurrences = "occurrence" if total == 1 else "occurrences"
    noun = "file" if len(files) == 1 else "files"
    lines.append(f"\nFound {total} total {occurrences} across {len(files)} {noun}.")
    return lines, f"Found {total} {occurrences} in {len(files)} {noun}"


def _content_lines(
    files: list[FileHits], cwd: Path, limit: int | None, numbers: bool, with_context: int
) -> tuple[list[str], str]:
    lines: list[str] = []
    matches = 0
    for hits in sorted(files, key=_path_key):
        shown = _display_path(hits.path, cwd)
        previous = None
        for number, text, is_match in hits.lines:
            if with_context and lines and (previous is None or number != previous + 1):
                lines.append("--")
            sep = ":" if is_match else "-"
            lines.append(f"{shown}{sep}{number}{sep}{text}" if numbers else f"{shown}{sep}{text}")
            matches += is_match
            previous = number
    total = len(lines)
    if limit and total > limit:
        lines = lines[:limit]
        lines.append(f"(Showing the first {limit} of {total} lines.)")
    noun = "file" if len(files) == 1 else "files"
    return lines, f"{matches} matching line{'s' if matches != 1 else ''} in {len(files)} {noun}"


def _cap_output(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_OUTPUT_CHARS)
    cut = cut if cut > 0 else MAX_OUTPUT_CHARS
    remaining = text.count("\n", cut) + (0 if text[cut:].startswith("\n") else 1)
    return (
        text[:cut]
        + f"\n(Output cut at {MAX_OUTPUT_CHARS:,} characters; {remaining} more lines not shown. "
        "Narrow the search with path, glob, type or head_limit.)"
    )
