"""Read: a text file as numbered lines, an image as an image block.

The tool checks the path, answers an unchanged re-read with a stub, and picks
the reader (tools/read_text.py for text, tools/read_image.py for images). Every
successful read is recorded in the FileStateCache, which is what lets
Edit/Write check freshness and lets an unchanged re-read answer with a stub.
"""

from __future__ import annotations

import asyncio
import os
import stat
import time
from pathlib import Path

from pydantic import Field

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
from tools.file_state import FileState
from tools.notebook import NotebookError, parse_notebook, render
from tools.paths import missing_file_message, short_path, unusable_path
from tools.read_image import IMAGE_TYPES, read_image
from tools.read_pdf import read_pdf
from tools.read_text import (
    BINARY_EXTENSIONS,
    DEFAULT_LIMIT,
    MAX_FULL_READ_BYTES,
    TextSlice,
    binary_message,
    number_lines,
    read_slice,
    read_small,
    too_large_message,
)

MAX_OUTPUT_TOKENS = 25_000
MAX_NOTEBOOK_BYTES = (
    20 * 1024 * 1024
)  # outputs make notebooks big; beyond this, read the JSON in parts
# How an unchanged re-read answers; compaction/ recognizes it (the full read it points to stays).
UNCHANGED_STUB_PREFIX = "File unchanged since your last Read of it"


class ReadParams(ToolParams):
    file_path: str = Field(
        description="Path of the file to read; absolute, or relative to the working directory"
    )
    offset: int | None = Field(
        default=None,
        ge=0,
        description="1-based first line; only for files too large to read at once",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="Lines to read (default 2000); only for files too large to read at once",
    )
    pages: str | None = Field(
        default=None,
        description='PDF only: the pages to read, e.g. "3" or "1-5" (at most 20); needed for '
        "PDFs over 10 pages",
    )


class ReadTool(Tool[ReadParams]):
    name = "Read"
    is_mutating = False

    def label(self, params: ReadParams, cwd: StrPath | None = None) -> str:
        label = f"Read {one_line(short_path(params.file_path, cwd))}"
        if params.offset not in (None, 0, 1) or params.limit is not None:
            start = max(params.offset or 1, 1)
            end = f"{start + params.limit - 1}" if params.limit else ""
            label += f" (lines {start}-{end})"
        if params.pages:
            label += f" (pages {one_line(params.pages)})"
        return label

    async def run(self, params: ReadParams, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(params.file_path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return ToolResult.error(missing_file_message(path, params.file_path, ctx))
        except (OSError, ValueError) as exc:
            return unusable_path(path, "read", exc)
        if stat.S_ISDIR(st.st_mode):
            return ToolResult.error(
                f"{path} is a directory, not a file. List it with Glob (e.g. pattern "
                f'"*" and path "{path}") or with `ls` through Bash.'
            )
        if not stat.S_ISREG(st.st_mode):
            return ToolResult.error(f"{path} is not a regular file (a device, pipe or socket).")

        suffix = path.suffix.lower()
        if suffix in IMAGE_TYPES:
            return await read_image(path, st.st_size)
        if suffix == ".pdf":
            return await read_pdf(path, params.pages)
        if params.pages is not None:
            return ToolResult.error(f"pages is only for PDF files; {path} is not one.")
        if suffix in BINARY_EXTENSIONS:
            return ToolResult.error(binary_message(path))

        start = max(params.offset or 1, 1)
        whole_file = start == 1 and params.limit is None
        if whole_file:
            stub = _unchanged_stub(ctx, path, st)
            if stub is not None:
                return stub
            if suffix == ".ipynb":
                return await asyncio.to_thread(_read_notebook, ctx, path, st)
        limit = params.limit or DEFAULT_LIMIT
        if st.st_size > MAX_FULL_READ_BYTES:
            if whole_file:
                return ToolResult.error(await asyncio.to_thread(too_large_message, path, st))
            sliced = await asyncio.to_thread(read_slice, path, start, limit)
        else:
            sliced = read_small(path, start, limit)
        if isinstance(sliced, ToolResult):
            return sliced
        return _finish(ctx, path, st, sliced)


def _finish(ctx: ToolContext, path: Path, st: os.stat_result, sl: TextSlice) -> ToolResult:
    if sl.total == 0 and sl.full_text is not None:
        _remember(ctx, path, st, "", None, None, partial=False)
        note = f"(The file {path} exists but is empty.)"
        return ToolResult(
            output=note,
            display="Read 0 lines (empty file)",
            meta={"path": str(path), "lines_read": 0, "total_lines": 0, "display": "Empty file"},
        )
    if not sl.lines:
        return ToolResult.error(
            f"{path} has {sl.total} lines, so offset {sl.start} is past its end. "
            f"Use an offset between 1 and {sl.total}."
        )
    body = number_lines(sl.lines, sl.start)
    end = sl.start + len(sl.lines) - 1
    if end < sl.total:
        body += (
            f"\n\n(Showing lines {sl.start}-{end} of {sl.total}. "
            f"To read on, call Read with offset={end + 1}.)"
        )
    tokens = len(body) // 4
    if tokens > MAX_OUTPUT_TOKENS:
        return ToolResult.error(
            f"The selected part of {path} is about {tokens:,} tokens, over the "
            f"{MAX_OUTPUT_TOKENS:,}-token limit for one Read. Use a smaller limit (the file has "
            f"{sl.total:,} lines), or Grep to find the part you need."
        )
    # A read that showed every line is a full view, whatever offset/limit were given.
    complete = sl.full_text is not None and sl.start == 1 and end >= sl.total
    if complete:
        _remember(ctx, path, st, sl.full_text or "", None, None, partial=False)
    else:
        _remember(ctx, path, st, "\n".join(sl.lines), sl.start, len(sl.lines), partial=True)
    display = f"Read {len(sl.lines)} line{'s' if len(sl.lines) != 1 else ''}"
    if not complete:
        display += f" ({sl.start}-{end} of {sl.total})"
    return ToolResult(
        output=body,
        display=display,
        meta={
            "path": str(path),
            "start_line": sl.start,
            "lines_read": len(sl.lines),
            "total_lines": sl.total,
            "display": display,
        },
    )


def _read_notebook(ctx: ToolContext, path: Path, st: os.stat_result) -> ToolResult:
    """A notebook as cells; recorded as a full read of its JSON, which is what NotebookEdit
    and Edit check freshness against. offset/limit read the raw JSON instead."""
    if st.st_size > MAX_NOTEBOOK_BYTES:
        return ToolResult.error(
            f"{path} is {st.st_size / 1_048_576:.1f} MB, too large to show as cells (most of it is "
            "usually outputs). Read parts of its JSON with offset and limit, or Grep it."
        )
    try:
        text = path.read_bytes().decode("utf-8")
        notebook = parse_notebook(text)
    except (OSError, UnicodeDecodeError) as exc:
        return ToolResult.error(f"Cannot read {path} as a notebook: {exc}")
    except NotebookError as exc:
        return ToolResult.error(f"{path} {exc}. Read it with offset and limit to see the JSON.")
    body = render(notebook)
    tokens = len(body) // 4
    if tokens > MAX_OUTPUT_TOKENS:
        return ToolResult.error(
            f"The cells of {path} come to about {tokens:,} tokens, over the {MAX_OUTPUT_TOKENS:,}"
            "-token limit for one Read. Read parts of its JSON with offset and limit, or Grep it."
        )
    _remember(ctx, path, st, text, None, None, partial=False)
    count = len(notebook.cells)
    display = f"Read {count} cell{'s' if count != 1 else ''}"
    return ToolResult(
        output=body or f"(The notebook {path} has no cells.)",
        display=display,
        meta={"path": str(path), "cells": count, "display": display},
    )


def _remember(
    ctx: ToolContext,
    path: Path,
    st: os.stat_result,
    content: str,
    offset: int | None,
    limit: int | None,
    *,
    partial: bool,
) -> None:
    ctx.file_state.set(
        path,
        FileState(
            content=content,
            mtime=st.st_mtime,
            read_at=time.time(),
            offset=offset,
            limit=limit,
            is_partial_view=partial,
        ),
    )


def _unchanged_stub(ctx: ToolContext, path: Path, st: os.stat_result) -> ToolResult | None:
    entry = ctx.file_state.peek(path)
    if (
        entry is None
        or not entry.is_full_read
        or entry.stale
        or not entry.in_context
        or entry.mtime != st.st_mtime
    ):
        return None
    ctx.file_state.get(path)  # refresh its recency: the model is still using this file
    when = time.strftime("%H:%M:%S", time.localtime(entry.read_at))
    ago = _ago(time.time() - entry.read_at)
    return ToolResult(
        output=(
            f"{UNCHANGED_STUB_PREFIX} (at {when}, {ago}); the content shown "
            "in that earlier result is still current."
        ),
        display="Unchanged since last read",
        meta={"path": str(path), "unchanged": True, "display": "Unchanged since last read"},
    )


def _ago(seconds: float) -> str:
    if seconds < 60:
        return "moments ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    return f"{seconds / 3600:.1f} h ago"
