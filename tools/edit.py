"""Edit: replace an exact string in a file the model has read.

The match must be unique unless replace_all is set. Line endings are kept
(the model writes "\\n"; a CRLF file stays CRLF), and a string that differs
from the file only in curly versus straight quotes is still found and written
in the file's own quote style. The write is atomic, as Write's.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from tools.atomic_file import atomic_write
from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
from tools.change_lock import change_locked
from tools.paths import missing_file_message, short_path, unusable_path
from tools.read_text import BINARY_SNIFF_BYTES, number_lines
from tools.write import (
    count_lines,
    freshness_problem,
    remember_written,
    unified_diff,
    unread_problem,
    uses_crlf,
)

SNIPPET_CONTEXT = 4
SNIPPET_MAX_LINES = 40

_STRAIGHTEN = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
    }
)
_CURLY_DOUBLE = "\u201c\u201d\u201e\u201f"
_CURLY_SINGLE = "\u2018\u2019\u201a\u201b"
_ANY_QUOTE = "'\"" + _CURLY_DOUBLE + _CURLY_SINGLE
_OPENERS = " \t\n\r([{<-\u2014\u2013"
_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+(\t|\u2192)", re.MULTILINE)


class EditParams(ToolParams):
    file_path: str = Field(
        description="Path of the file to change; absolute, or relative to the working directory"
    )
    old_string: str = Field(description="The exact text to replace")
    new_string: str = Field(description="The text to replace it with (must differ from old_string)")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence of old_string (default false)"
    )


class EditTool(Tool[EditParams]):
    name = "Edit"

    def label(self, params: EditParams, cwd: StrPath | None = None) -> str:
        return f"Edit {one_line(short_path(params.file_path, cwd))}"

    def precheck(self, params: EditParams, ctx: ToolContext) -> ToolResult | None:
        return unread_problem(ctx, ctx.resolve(params.file_path))

    async def run(self, params: EditParams, ctx: ToolContext) -> ToolResult:
        return await change_locked(ctx.resolve(params.file_path), lambda: self._change(params, ctx))

    async def _change(self, params: EditParams, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(params.file_path)
        if params.old_string == params.new_string:
            return ToolResult.error("old_string and new_string are identical: nothing to change.")
        try:
            st = os.stat(path)
        except FileNotFoundError:
            if params.old_string == "":
                return _create(ctx, path, params.new_string)
            return ToolResult.error(
                missing_file_message(path, params.file_path, ctx)
                + " To create a new file, use Write (or Edit with an empty old_string)."
            )
        except (OSError, ValueError) as exc:
            return unusable_path(path, "edit", exc)
        if stat.S_ISDIR(st.st_mode):
            return ToolResult.error(f"{path} is a directory, not a file.")
        if not stat.S_ISREG(st.st_mode):
            return ToolResult.error(f"{path} is not a regular file.")
        try:
            data = path.read_bytes()
        except OSError as exc:
            return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
        if b"\0" in data[:BINARY_SNIFF_BYTES]:
            return ToolResult.error(f"{path} is a binary file; Edit only changes text files.")
        problem = freshness_problem(ctx, path, st, data.decode("utf-8", errors="replace"))
        if problem:
            return ToolResult.error(problem)

        # surrogateescape: bytes that are not UTF-8 go back to disk exactly as they were.
        text = data.decode("utf-8", errors="surrogateescape")
        if params.old_string == "":
            if text.strip():
                return ToolResult.error(
                    f"old_string is empty but {path} already has content. Give the exact text "
                    "to replace, or use Write to replace the whole file."
                )
            plan: _Plan | str = _Plan(params.new_string, 0, params.new_string, 1)
        else:
            plan = plan_edit(text, params.old_string, params.new_string, params.replace_all)
        if isinstance(plan, str):
            return ToolResult.error(plan.replace("{path}", str(path)))
        try:
            atomic_write(path, plan.text.encode("utf-8", errors="surrogateescape"))
        except OSError as exc:
            return ToolResult.error(f"Cannot write {path}: {exc.strerror or exc}")
        remember_written(ctx, path, plan.text)
        return _result(ctx, path, text, plan)


@dataclass
class _Plan:
    text: str  # the whole new file content, in the file's own line endings
    first_start: int  # offset of the first replacement in the "\n"-only form of `text`
    first_replacement: str
    count: int


def plan_edit(text: str, old: str, new: str, replace_all: bool) -> _Plan | str:
    """The edited text, or an error message (with "{path}" where the file name goes)."""
    crlf = uses_crlf(text)
    work = text.replace("\r\n", "\n") if crlf else text
    if crlf:
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    spans = _exact_spans(work, old, new)
    if not spans and not crlf and "\r\n" in work and "\n" in old:
        # Mixed line endings: the region may use CRLF even though the file is not all CRLF.
        spans = _exact_spans(work, old.replace("\n", "\r\n"), new.replace("\n", "\r\n"))
    if not spans:
        spans = _quote_insensitive_spans(work, old, new)
    if not spans:
        return _not_found_message(work, old)
    if len(spans) > 1 and not replace_all:
        lines = [work.count("\n", 0, start) + 1 for start, _, _ in spans]
        shown = ", ".join(map(str, lines[:10])) + (", …" if len(lines) > 10 else "")
        return (
            f"old_string occurs {len(spans)} times in {{path}} (lines {shown}). Include more "
            "surrounding lines to make it unique, or set replace_all to true to change every one."
        )
    if not replace_all:
        spans = spans[:1]
    parts: list[str] = []
    pos = 0
    for start, end, replacement in spans:
        parts.append(work[pos:start])
        parts.append(replacement)
        pos = end
    parts.append(work[pos:])
    result = "".join(parts)
    if crlf:
        result = result.replace("\n", "\r\n")
    # The snippet is numbered in the "\n"-only text; the text before the first change is as it was.
    first_start, _, first_replacement = spans[0]
    first_start -= work.count("\r\n", 0, first_start)
    return _Plan(result, first_start, first_replacement.replace("\r\n", "\n"), len(spans))


def _exact_spans(work: str, old: str, new: str) -> list[tuple[int, int, str]]:
    spans = []
    start = work.find(old)
    while start != -1:
        spans.append((start, start + len(old), new))
        start = work.find(old, start + len(old))
    return spans


def _quote_insensitive_spans(work: str, old: str, new: str) -> list[tuple[int, int, str]]:
    """Where `old` occurs if curly and straight quotes count as equal; `new` in the file's style."""
    if not any(q in old for q in _ANY_QUOTE):
        return []
    straight_old = old.translate(_STRAIGHTEN)
    # Translation maps one character to one, so offsets carry over to the real text.
    spans = _exact_spans(work.translate(_STRAIGHTEN), straight_old, new)
    return [(s, e, match_quote_style(new, work[s:e])) for s, e, _ in spans]


def match_quote_style(new: str, found: str) -> str:
    """Write `new` with the quote characters the file uses in the text it replaces."""
    if any(q in found for q in _CURLY_DOUBLE) and '"' not in found:
        new = _curl(new, '"', "\u201c", "\u201d")
    elif '"' in found and not any(q in found for q in _CURLY_DOUBLE):
        new = new.translate(str.maketrans(_CURLY_DOUBLE, '"' * len(_CURLY_DOUBLE)))
    if any(q in found for q in _CURLY_SINGLE) and "'" not in found:
        new = _curl(new, "'", "\u2018", "\u2019")
    elif "'" in found and not any(q in found for q in _CURLY_SINGLE):
        new = new.translate(str.maketrans(_CURLY_SINGLE, "'" * len(_CURLY_SINGLE)))
    return new


def _curl(text: str, straight: str, opening: str, closing: str) -> str:
    out = []
    for i, ch in enumerate(text):
        if ch == straight:
            prev = text[i - 1] if i else " "
            ch = opening if prev in _OPENERS else closing
        out.append(ch)
    return "".join(out)


def _not_found_message(work: str, old: str) -> str:
    message = (
        "old_string was not found in {path}. It must match the file exactly, including "
        "whitespace and indentation; Read the file again to see its current content."
    )
    if _LINE_NUMBER_PREFIX.search(old):
        stripped = _LINE_NUMBER_PREFIX.sub("", old)
        if stripped and stripped in work:
            return message + (
                " old_string seems to include the line-number prefixes of Read's output "
                "(the number and tab at the start of each line); leave them out."
            )
    line = _whitespace_insensitive_line(work, old)
    if line is not None:
        message += (
            f" Text matching it except for whitespace (indentation, tabs versus spaces or "
            f"trailing spaces) starts at line {line}; copy that region exactly."
        )
    return message


def _whitespace_insensitive_line(work: str, old: str) -> int | None:
    def squash(text: str) -> str:
        return "\n".join(" ".join(line.split()) for line in text.split("\n"))

    needle = squash(old).strip("\n")
    if not needle.strip():
        return None
    haystack = squash(work)
    index = haystack.find(needle)
    return None if index == -1 else haystack.count("\n", 0, index) + 1


def _create(ctx: ToolContext, path: Path, content: str) -> ToolResult:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, content.encode("utf-8", errors="surrogateescape"))
    except OSError as exc:
        return ToolResult.error(f"Cannot create {path}: {exc.strerror or exc}")
    remember_written(ctx, path, content)
    lines = count_lines(content)
    display = f"Created {short_path(str(path), ctx.cwd)} ({lines} lines)"
    return ToolResult(
        output=f"Created {path} ({lines} line{'s' if lines != 1 else ''})",
        display=display,
        meta={
            "path": str(path),
            "created": True,
            "diff": unified_diff("", content, path, ctx.cwd),
            "display": display,
        },
    )


def _result(ctx: ToolContext, path: Path, old_text: str, plan: _Plan) -> ToolResult:
    new_lf = plan.text.replace("\r\n", "\n")
    lines = new_lf.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the final newline ends the last line
    first = new_lf.count("\n", 0, plan.first_start) + 1
    last = first + plan.first_replacement.rstrip("\n").count("\n")
    lo = max(1, first - SNIPPET_CONTEXT)
    hi = min(len(lines), last + SNIPPET_CONTEXT)
    snippet_lines = lines[lo - 1 : hi]
    cut = ""
    if len(snippet_lines) > SNIPPET_MAX_LINES:
        snippet_lines = snippet_lines[:SNIPPET_MAX_LINES]
        cut = f"\n… ({hi - lo + 1 - SNIPPET_MAX_LINES} more lines of the edited region)"
        hi = lo + SNIPPET_MAX_LINES - 1
    which = " (the first shown)" if plan.count > 1 else ""
    noun = "replacement" if plan.count == 1 else "replacements"
    output = (
        f"Edited {path} ({plan.count} {noun}{which}). Lines {lo}-{hi} now read:\n"
        f"{number_lines(snippet_lines, lo)}{cut}"
    )
    diff = unified_diff(old_text, plan.text, path, ctx.cwd)
    added = removed = 0
    for line in (diff or "").splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    display = f"Edited {short_path(str(path), ctx.cwd)} (+{added} -{removed})"
    return ToolResult(
        output=output,
        display=display,
        meta={
            "path": str(path),
            "replacements": plan.count,
            "diff": diff,
            "added": added,
            "removed": removed,
            "display": display,
        },
    )
