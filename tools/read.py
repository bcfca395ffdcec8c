"""Read: a text file as numbered lines, an image as an image block.

Small files are read in one go (the common case must cost well under a
millisecond); slices of big files are streamed so a 100 MB log never sits in
memory. Every successful read is recorded in the FileStateCache, which is what
lets Edit/Write check freshness and lets an unchanged re-read answer with a stub.
"""

from __future__ import annotations

import asyncio
import base64
import difflib
import operator
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pydantic import Field

from tools.base import Tool, ToolContext, ToolParams, ToolResult
from tools.file_state import FileState
from tools.surrogates import escape_text, not_utf8_note

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_FULL_READ_BYTES = 256 * 1024
MAX_OUTPUT_TOKENS = 25_000
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # the API's limit, on the base64 text
BINARY_SNIFF_BYTES = 8192
COUNT_LINES_MAX_BYTES = 32 * 1024 * 1024  # above this a size error does not count lines
_CHUNK = 1 << 20
# Enough bytes for MAX_LINE_CHARS characters of up to 4 bytes each.
_LINE_CAP_BYTES = MAX_LINE_CHARS * 4 + 4

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
_BINARY_EXTENSION_LIST = """
    .exe .dll .so .dylib .o .obj .a .lib .bin .class .jar .war .ear .pyc .pyo .pyd .whl .egg
    .zip .tar .gz .tgz .bz2 .xz .lz .lzma .zst .7z .rar .cab .deb .rpm .apk .dmg .iso .img
    .pdf .doc .docx .xls .xlsx .ppt .pptx .odt .ods .odp .epub
    .mp3 .mp4 .m4a .wav .flac .ogg .opus .aac .avi .mov .mkv .webm .wmv .flv
    .bmp .ico .tif .tiff .psd .heic .avif .icns
    .ttf .otf .woff .woff2 .eot
    .sqlite .sqlite3 .db .mdb .wasm .npy .npz .pkl .pickle .pt .pth .onnx .h5 .parquet .feather
    .swf .blend .fbx .glb
"""
BINARY_EXTENSIONS = frozenset(_BINARY_EXTENSION_LIST.split())


class ReadParams(ToolParams):
    file_path: str = Field(
        description="Path of the file to read; absolute, or relative to the working directory"
    )
    offset: int | None = Field(
        default=None,
        ge=0,
        description="1-based line number to start reading at. Give it only for files too large "
        "to read at once",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="How many lines to read (default 2000). Give it only for files too large to "
        "read at once",
    )


class ReadTool(Tool):
    name = "Read"
    Params = ReadParams
    is_mutating = False

    def summary(self, params: ToolParams) -> str:
        assert isinstance(params, ReadParams)
        label = f"Read {short_path(params.file_path)}"
        if params.offset not in (None, 0, 1) or params.limit is not None:
            start = max(params.offset or 1, 1)
            end = f"{start + params.limit - 1}" if params.limit else ""
            label += f" (lines {start}-{end})"
        return label

    async def run(self, params: ToolParams, ctx: ToolContext) -> ToolResult:
        assert isinstance(params, ReadParams)
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
            return await _read_image(path, st.st_size)
        if suffix in BINARY_EXTENSIONS:
            return ToolResult.error(_binary_message(path))

        start = max(params.offset or 1, 1)
        whole_file = start == 1 and params.limit is None
        if whole_file:
            stub = _unchanged_stub(ctx, path, st)
            if stub is not None:
                return stub
        limit = params.limit or DEFAULT_LIMIT
        if st.st_size > MAX_FULL_READ_BYTES:
            if whole_file:
                return ToolResult.error(await asyncio.to_thread(_too_large_message, path, st))
            sliced = await asyncio.to_thread(_read_slice, path, start, limit)
        else:
            sliced = _read_small(path, start, limit)
        if isinstance(sliced, ToolResult):
            return sliced
        return _finish(ctx, path, st, sliced)


@dataclass(slots=True)
class _Slice:
    """The selected lines of a file, plus what the caller needs to describe them."""

    lines: list[str]  # without their line terminators
    start: int
    total: int
    full_text: str | None  # the whole file's text, when it was read in full


def _read_small(path: Path, start: int, limit: int) -> _Slice | ToolResult:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return ToolResult.error(_binary_message(path))
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start another
    selected = lines[start - 1 : start - 1 + limit]
    return _Slice(selected, start, len(lines), text)


def _read_slice(path: Path, start: int, limit: int) -> _Slice | ToolResult:
    """Stream lines start..start+limit-1 of a big file, counting the rest without keeping it."""
    try:
        with open(path, "rb") as f:
            if b"\0" in f.read(BINARY_SNIFF_BYTES):
                return ToolResult.error(_binary_message(path))
            f.seek(0)
            newlines = _skip_lines(f, start - 1)
            lines: list[str] = []
            while len(lines) < limit:
                raw, terminated = _read_capped_line(f)
                if not raw and not terminated:
                    break
                lines.append(raw.decode("utf-8", errors="replace"))
                newlines += terminated
            newlines += _count_newlines(f)
            size = f.tell()
            f.seek(max(size - 1, 0))
            ends_open = size > 0 and f.read(1) != b"\n"
    except OSError as exc:
        return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
    return _Slice(lines, start, newlines + ends_open, None)


def _skip_lines(f: BinaryIO, count: int) -> int:
    """Move past `count` newlines; returns how many were found before EOF."""
    seen = 0
    while seen < count:
        pos = f.tell()
        chunk = f.read(_CHUNK)
        if not chunk:
            return seen
        found = chunk.count(b"\n")
        if seen + found < count:
            seen += found
            continue
        idx = -1
        for _ in range(count - seen):
            idx = chunk.index(b"\n", idx + 1)
        f.seek(pos + idx + 1)
        return count
    return seen


def _read_capped_line(f: BinaryIO) -> tuple[bytes, bool]:
    """One line (at most _LINE_CAP_BYTES, enough to cut it later); True if a newline ended it."""
    raw = f.readline(_LINE_CAP_BYTES)
    if raw.endswith(b"\n"):
        return raw[:-1], True
    if len(raw) == _LINE_CAP_BYTES:
        while more := f.readline(_CHUNK):  # skip the rest of an overlong line without keeping it
            if more.endswith(b"\n"):
                return raw, True
    return raw, False


def _count_newlines(f: BinaryIO) -> int:
    total = 0
    while chunk := f.read(_CHUNK):
        total += chunk.count(b"\n")
    return total


def _finish(ctx: ToolContext, path: Path, st: os.stat_result, sl: _Slice) -> ToolResult:
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


def number_lines(lines: list[str], start: int) -> str:
    """Each line as its 1-based number, a tab, the line (overlong lines cut); no padding, which costs tokens."""
    if not lines:
        return ""
    if start == 1 and lines[0].startswith("\ufeff"):
        lines = [lines[0][1:], *lines[1:]]  # a UTF-8 byte-order mark is not content
    if "\r" in "".join(lines) or max(map(len, lines)) > MAX_LINE_CHARS:
        lines = [_clean_line(line) for line in lines]
    end = start + len(lines)
    if end <= len(_PREFIXES):
        prefixes = _PREFIXES[start:end]
    else:
        prefixes = [f"{n}\t" for n in range(start, end)]
    # Joining precomputed prefixes is several times faster than formatting each line.
    return "\n".join(map(operator.add, prefixes, lines))


def _clean_line(line: str) -> str:
    if line.endswith("\r"):
        line = line[:-1]
    if len(line) > MAX_LINE_CHARS:
        line = line[:MAX_LINE_CHARS] + f"… [line cut at {MAX_LINE_CHARS} characters]"
    return line


_PREFIXES = [f"{n}\t" for n in range(DEFAULT_LIMIT + 2)]


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
            f"File unchanged since your last Read of it (at {when}, {ago}); the content shown "
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


async def _read_image(path: Path, size: int) -> ToolResult:
    encoded_size = (size + 2) // 3 * 4
    if encoded_size > MAX_IMAGE_BYTES:
        return ToolResult.error(
            f"{path} is {size / 1e6:.1f} MB ({encoded_size / 1e6:.1f} MB as base64), over the "
            "5 MB limit for an image. Resize or compress it first (e.g. with a Bash command)."
        )
    try:
        data = await asyncio.to_thread(path.read_bytes)
    except OSError as exc:
        return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
    media_type = _sniff_image(data)
    if media_type is None:
        if not data:
            return ToolResult.error(f"{path} is empty, not an image.")
        return ToolResult.error(f"{path} does not contain a PNG, JPEG, GIF or WebP image.")
    block = {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": media_type,
            "data": base64.b64encode(data).decode("ascii"),
        },
    }
    display = f"Read image ({size / 1024:.0f} KiB, {media_type})"
    return ToolResult(
        output=[block],
        display=display,
        meta={"path": str(path), "media_type": media_type, "bytes": size, "display": display},
    )


def _sniff_image(data: bytes) -> str | None:
    """The real format from the magic bytes: a mislabelled extension must not reach the API."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _binary_message(path: Path) -> str:
    hint = ""
    if path.suffix.lower() == ".pdf":
        hint = " For a PDF, extract its text through Bash (e.g. `pdftotext file.pdf -`)."
    return f"{path} is a binary file; Read only shows text files and images.{hint}"


def _too_large_message(path: Path, st: os.stat_result) -> str:
    size = _human_size(st.st_size)
    lines = ""
    if st.st_size <= COUNT_LINES_MAX_BYTES:
        try:
            with open(path, "rb") as f:
                lines = f" and {_count_newlines(f):,} lines"
        except OSError:
            pass
    return (
        f"{path} is too large to read at once ({size}{lines}; the limit is "
        f"{MAX_FULL_READ_BYTES // 1024} KiB). Read a part with offset and limit "
        "(e.g. offset=1, limit=500), or use Grep to find what you need."
    )


def _human_size(size: int) -> str:
    return f"{size / 1024:,.0f} KiB" if size < 1 << 20 else f"{size / 2**20:,.1f} MB"


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
    close = difflib.get_close_matches(name, names, n=limit, cutoff=0.6)
    return list(dict.fromkeys(close + sorted(same_stem)))[:limit]


def short_path(path: str, cwd: str | os.PathLike[str] | None = None) -> str:
    """A path as the user would write it: relative to `cwd` (default: the current directory)."""
    if os.path.isabs(path):
        try:
            rel = os.path.relpath(path, cwd)
        except ValueError:
            return path
        if not rel.startswith(".."):
            return rel
    return path
