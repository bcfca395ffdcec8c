"""Write: create a file or replace one the model has read, atomically.

Also home to what Edit shares with it: the freshness check against the
FileStateCache, the atomic temp-file-and-rename write that keeps the file's
mode, and the cache update after a write.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from pydantic import Field

from tools.atomic_file import atomic_write
from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
from tools.change_lock import change_locked
from tools.file_state import FileState
from tools.paths import short_path, unusable_path

MAX_DIFF_CHARS = 1_000_000  # beyond this the UI gets no diff: difflib gets slow


class WriteParams(ToolParams):
    file_path: str = Field(
        description="Path of the file to write; absolute, or relative to the working directory"
    )
    content: str = Field(description="The complete new content of the file")


class WriteTool(Tool[WriteParams]):
    name = "Write"

    def label(self, params: WriteParams, cwd: StrPath | None = None) -> str:
        return f"Write {one_line(short_path(params.file_path, cwd))}"

    def precheck(self, params: WriteParams, ctx: ToolContext) -> ToolResult | None:
        return unread_problem(ctx, ctx.resolve(params.file_path))

    async def run(self, params: WriteParams, ctx: ToolContext) -> ToolResult:
        return await change_locked(ctx.resolve(params.file_path), lambda: self._change(params, ctx))

    async def _change(self, params: WriteParams, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(params.file_path)
        try:
            st: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            st = None
        except (OSError, ValueError) as exc:
            return unusable_path(path, "write", exc)
        if st is not None and stat.S_ISDIR(st.st_mode):
            return ToolResult.error(f"{path} is a directory; give the path of a file to write.")

        old_text = ""
        content = params.content
        if st is not None:
            try:
                old_text = path.read_bytes().decode("utf-8", errors="replace")
            except OSError as exc:
                return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
            problem = freshness_problem(ctx, path, st, old_text)
            if problem:
                return ToolResult.error(problem)
            if uses_crlf(old_text) and "\r\n" not in content:
                content = content.replace("\n", "\r\n")  # keep a Windows file's line endings

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, content.encode("utf-8", errors="surrogateescape"))
        except OSError as exc:
            return ToolResult.error(f"Cannot write {path}: {exc.strerror or exc}")
        remember_written(ctx, path, content)

        lines = count_lines(content)
        verb = "Updated" if st is not None else "Created"
        message = f"{verb} {path} ({lines} line{'s' if lines != 1 else ''})"
        display = f"{verb} {short_path(str(path), ctx.cwd)} ({lines} lines)"
        return ToolResult(
            output=message,
            display=display,
            meta={
                "path": str(path),
                "created": st is None,
                "lines": lines,
                "diff": unified_diff(old_text, content, path, ctx.cwd),
                "display": display,
            },
        )


def unread_problem(ctx: ToolContext, path: Path) -> ToolResult | None:
    """Changing an existing file the model never read fails: say so before it is asked about."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # missing or not a file: the tool's own run says what it makes of that
    except (OSError, ValueError):
        return None
    if ctx.file_state.peek(path) is not None:
        return None
    return ToolResult.error(unread_message(ctx, path))


def unread_message(ctx: ToolContext, path: Path) -> str:
    """Why an existing file without a read may not be changed; a read that a compaction
    summarized away is named as such, so the model knows its earlier read no longer counts."""
    if ctx.file_state.was_summarized(path):
        return (
            f"{path} was read earlier, but that read was summarized away when the conversation "
            "was compacted, so its content is no longer in context. Read it again, then retry."
        )
    return (
        f"{path} has not been read in this session. Read it first, then retry: changes to an "
        "existing file must start from its current content."
    )


def freshness_problem(ctx: ToolContext, path: Path, st: os.stat_result, current: str) -> str | None:
    """Why changing an existing file now would be unsafe, or None if it is safe.

    The model must have read the file in this session, and the file must not
    have changed since: a newer mtime counts as a change unless a full read's
    content still matches exactly (a `touch` or a save without changes).
    """
    entry = ctx.file_state.peek(path)
    if entry is None:
        return unread_message(ctx, path)
    if not entry.stale and entry.mtime == st.st_mtime:
        return None
    if entry.is_full_read and entry.content == current:
        return None
    return (
        f"{path} was modified on disk after you last read it (by the user, a formatter or "
        "another program). Read it again to see its current content, then retry."
    )


def remember_written(ctx: ToolContext, path: Path, text: str) -> None:
    """Record the file's new content as a full view, so the next Edit sees it as fresh."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes kept as surrogates: store them as Read would
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", errors="replace")
    ctx.file_state.set(
        path,
        FileState(
            content=text,
            mtime=os.stat(path).st_mtime,
            read_at=time.time(),
            # The model saw its own change, not the whole resulting file: a later
            # Read must show the content instead of the "unchanged" stub.
            in_context=False,
        ),
    )


def uses_crlf(text: str) -> bool:
    """True for a Windows-style file: it has CRLF and no bare LF line ending."""
    crlf = text.count("\r\n")
    return crlf > 0 and crlf == text.count("\n")


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def unified_diff(old: str, new: str, path: Path, cwd: Path) -> str | None:
    if len(old) + len(new) > MAX_DIFF_CHARS:
        return None
    try:
        label = str(path.relative_to(cwd))
    except ValueError:
        label = str(path)
    old_lines = old.replace("\r\n", "\n").splitlines(keepends=True)
    new_lines = new.replace("\r\n", "\n").splitlines(keepends=True)
    import difflib  # only for an edit's diff: off the cold start's way

    return "".join(
        difflib.unified_diff(old_lines, new_lines, fromfile=f"a/{label}", tofile=f"b/{label}")
    )
