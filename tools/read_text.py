"""Read's text files: a slice of lines, numbered, without holding a big file in memory.

A small file is read whole in one go (the common case must cost well under a
millisecond); a slice of a big file is streamed, counting the lines it skips,
so a 100 MB log never sits in memory. A NUL byte near the start, or a known
binary extension, means the file is not text.
"""

from __future__ import annotations

import operator
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from tools.base import ToolResult

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_FULL_READ_BYTES = 256 * 1024
BINARY_SNIFF_BYTES = 8192
COUNT_LINES_MAX_BYTES = 32 * 1024 * 1024  # above this a size error does not count lines
_CHUNK = 1 << 20
# Enough bytes for MAX_LINE_CHARS characters of up to 4 bytes each.
_LINE_CAP_BYTES = MAX_LINE_CHARS * 4 + 4

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


@dataclass(slots=True)
class TextSlice:
    """The selected lines of a file, plus what the caller needs to describe them."""

    lines: list[str]  # without their line terminators
    start: int
    total: int
    full_text: str | None  # the whole file's text, when it was read in full


def read_small(path: Path, start: int, limit: int) -> TextSlice | ToolResult:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return ToolResult.error(binary_message(path))
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start another
    selected = lines[start - 1 : start - 1 + limit]
    return TextSlice(selected, start, len(lines), text)


def read_slice(path: Path, start: int, limit: int) -> TextSlice | ToolResult:
    """Stream lines start..start+limit-1 of a big file, counting the rest without keeping it."""
    try:
        with open(path, "rb") as f:
            if b"\0" in f.read(BINARY_SNIFF_BYTES):
                return ToolResult.error(binary_message(path))
            f.seek(0)
            newlines = _skip_lines(f, start - 1)
            lines: list[str] = []
            while len(lines) < limit:
                raw, terminated = _read_capped_line(f)
                if not raw and not terminated:
                    break
                lines.append(raw.decode("utf-8", errors="replace"))
                newlines += terminated
            newlines += count_newlines(f)
            size = f.tell()
            f.seek(max(size - 1, 0))
            ends_open = size > 0 and f.read(1) != b"\n"
    except OSError as exc:
        return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
    return TextSlice(lines, start, newlines + ends_open, None)


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


def count_newlines(f: BinaryIO) -> int:
    total = 0
    while chunk := f.read(_CHUNK):
        total += chunk.count(b"\n")
    return total


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


def binary_message(path: Path) -> str:
    return f"{path} is a binary file; Read shows text, images, PDFs and notebooks."


def too_large_message(path: Path, st: os.stat_result) -> str:
    size = _human_size(st.st_size)
    lines = ""
    if st.st_size <= COUNT_LINES_MAX_BYTES:
        try:
            with open(path, "rb") as f:
                lines = f" and {count_newlines(f):,} lines"
        except OSError:
            pass
    return (
        f"{path} is too large to read at once ({size}{lines}; the limit is "
        f"{MAX_FULL_READ_BYTES // 1024} KiB). Read a part with offset and limit "
        "(e.g. offset=1, limit=500), or use Grep to find what you need."
    )


def _human_size(size: int) -> str:
    return f"{size / 1024:,.0f} KiB" if size < 1 << 20 else f"{size / 2**20:,.1f} MB"
