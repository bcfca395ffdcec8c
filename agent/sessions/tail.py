"""Loading a transcript from its end: what the next request needs, not the whole file.

A long session's file is mostly conversation its compactions summarized long
ago; a resume needs only what follows the last compaction still in effect.
So the file is searched backwards, in blocks, for that ``compact_boundary``
line (a later ``compact_undo`` takes back the boundary before it, as brackets
pair), and only the records after it are replayed. Of the part before it,
only the small records the session still needs are picked out: one search
over the mapped file (nothing copied) finds the lines that open as those
records, and those are parsed (decoded at once, then one by one), the
messages around them never: the file reads (``file_state``: which files an
Edit may change, and which were summarized away) and the ``event`` and
``resume`` records (the skills invoked, the last calibration). That part's
conversation is read only on demand (``agent.sessions.earlier``).

The result is what ``load_session`` gives for the same file — the same
conversation, repairs, file reads and events — except the segments before
the boundary, which are not read (``unread_before`` says where they end; the
undo history reads them from the file when /undo-compact reaches them), and
unparseable lines before it, which are not counted. Where a record before the
boundary changes what follows it (a ``rewind`` drops reads recorded since its
message, which needs that message), and where the file has no header, the
whole file is loaded instead.
"""

from __future__ import annotations

import json
import mmap
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, Any, TypeAlias

from agent.sessions.transcript import LoadedSession, read_records, replay

Buffer: TypeAlias = bytes | mmap.mmap  # a line is looked at where it lies, read or mapped

BLOCK = 1 << 20  # bytes read at a time backwards
HEADER_MAX = 1 << 16  # a header is one short line
# How every record ccx writes opens: its type is known from a line's first bytes.
_OPENING = b'{"type":"'
_KIND_MAX = 64
# What json.loads runs for a line, less its per-call wrapping (the stubs do not name it).
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_JSON_SPACE = " \t\r\n"
# The records before the boundary a resume still needs, and one that makes it load everything.
KEPT_BEFORE = ("file_state", "event", "resume")
_WHOLE_FILE = "rewind"


@dataclass(frozen=True)
class Cut:
    """A ``compact_boundary`` line: where it starts and ends in the file, and its record."""

    start: int
    end: int
    record: dict[str, Any]


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _typed(data: Buffer, start: int, end: int, kinds: tuple[str, ...]) -> dict[str, Any] | None:
    """The record of the line ``data[start:end]`` when its type is one of ``kinds``. A line that
    opens as ccx writes records says its type in its first bytes, and is parsed only when that
    type is wanted; any other line (an older or hand-edited one) is parsed to know."""
    head = data[start : min(end, start + _KIND_MAX)]
    if head.startswith(_OPENING):
        quote = head.find(b'"', len(_OPENING))
        if quote > 0 and head[len(_OPENING) : quote].decode("ascii", "replace") not in kinds:
            return None
    record = _record(data[start:end])
    return record if record is not None and record.get("type") in kinds else None


def scan_backward(
    handle: IO[bytes], end: int, kinds: tuple[str, ...]
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """The records of ``kinds`` before byte ``end``, last first: (line start, line end, record).
    Reads backwards in blocks."""
    pos, rest = end, b""
    while pos > 0:
        step = min(BLOCK, pos)
        pos -= step
        handle.seek(pos)
        data = handle.read(step) + rest
        line_end = len(data)
        while line_end > 0:
            line_start = data.rfind(b"\n", 0, line_end - 1) + 1
            if line_start == 0 and pos > 0:
                break  # the line goes on in the block before
            record = _typed(data, line_start, line_end, kinds)
            if record is not None:
                yield pos + line_start, pos + line_end, record
            line_end = line_start
        rest = data[:line_end]


def scan_forward(
    handle: IO[bytes], start: int, end: int, kinds: tuple[str, ...]
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """The records of ``kinds`` in the lines from byte ``start`` (a line's start) up to ``end``,
    in file order: (line start, line end, record). The file is mapped, not read: one search
    finds the lines worth a look (those that open as a wanted record, or not as ccx writes
    records), and only those are copied out and parsed, the wanted ones together."""
    if end <= start:
        return
    view: Buffer
    try:
        view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # a file system that cannot map files: read it instead
        handle.seek(0)
        view = handle.read(end)
    try:
        end = min(end, len(view))
        # (line start, whether it opens as a wanted record); the first line is looked at whole
        found = [(start, False)]
        found += [(m.end(), m.lastindex == 1) for m in _openings(kinds).finditer(view, start, end)]
        lines: list[tuple[int, int, bool]] = []
        for line_start, wanted in found:
            if line_start >= end:
                break
            newline = view.find(b"\n", line_start, end)
            lines.append((line_start, end if newline < 0 else newline + 1, wanted))
        parsed = iter(_parse_lines([view[a:b] for a, b, wanted in lines if wanted]))
        for line_start, line_end, wanted in lines:
            if wanted:
                record = next(parsed)
                if record is not None and record.get("type") not in kinds:
                    record = None  # it opened as one (a duplicate "type" key says otherwise)
            else:
                record = _typed(view, line_start, line_end, kinds)
            if record is not None:
                yield line_start, line_end, record
    finally:
        if not isinstance(view, bytes):
            view.close()


def _parse_lines(lines: list[bytes]) -> list[dict[str, Any] | None]:
    """Each line's record, as ``json.loads`` gives it for the line alone (None for a line that
    does not parse to an object), at less cost: the lines are decoded together and the
    scanner runs once a line. A line a bad byte makes undecodable sends all to ``json.loads``."""
    text_lines = [line if line.endswith(b"\n") else line + b"\n" for line in lines]
    try:
        text = b"".join(text_lines).decode("utf-8", "surrogatepass")  # as json.loads decodes
    except UnicodeDecodeError:
        return [_record(line) for line in lines]
    records: list[dict[str, Any] | None] = []
    at = 0
    for _ in lines:
        newline = text.index("\n", at)  # each line ends in one, and holds no other
        try:
            value, stop = _SCAN(text, at)
        except (StopIteration, ValueError):
            value, stop = None, newline + 1
        # A value that goes on past its line, or text after it, is no record of this line.
        if stop > newline or text[stop:newline].strip(_JSON_SPACE):
            value = None
        records.append(value if isinstance(value, dict) else None)
        at = newline + 1
    return records


@cache
def _openings(kinds: tuple[str, ...]) -> re.Pattern[bytes]:
    """A newline followed by a line that opens as a record of ``kinds`` (group 1 then takes
    part in the match), or not as ccx opens records (such a line is parsed to know its type)."""
    names = b"|".join(re.escape(kind.encode()) for kind in kinds)
    return re.compile(
        rb"\n(?:(?="
        + re.escape(_OPENING)
        + rb"(?:"
        + names
        + rb")\")()|(?!"
        + re.escape(_OPENING)
        + rb"))"
    )


def live_boundary(handle: IO[bytes], end: int) -> Cut | None:
    """The last ``compact_boundary`` record before byte ``end`` that no ``compact_undo`` before
    ``end`` takes back; None when there is none (everything before ``end`` is one segment).
    Undos take back boundaries as closing brackets pair with opening ones."""
    pending = 0  # undos seen whose boundary is not found yet
    for line_start, line_end, record in scan_backward(
        handle, end, ("compact_boundary", "compact_undo")
    ):
        if record["type"] == "compact_undo":
            pending += 1
        elif pending:
            pending -= 1
        else:
            return Cut(line_start, line_end, record)
    return None


def load_tail(path: Path) -> LoadedSession | None:
    """The session as a resume needs it, parsing only what follows the last boundary in effect;
    None when it must be loaded whole (no boundary, no header, a rewind before the boundary).
    Not yet repaired (``agent.sessions.session.load_session`` repairs). OSError if unreadable."""
    with open(path, "rb") as handle:
        header_line = handle.readline(HEADER_MAX)
        header = _record(header_line)
        if header is None or header.get("type") != "session" or not header_line.endswith(b"\n"):
            return None
        handle.seek(0, 2)
        cut = live_boundary(handle, handle.tell())
        if cut is None or cut.start < len(header_line):
            return None
        kinds = (*KEPT_BEFORE, _WHOLE_FILE)
        before = [r for *_at, r in scan_forward(handle, len(header_line), cut.start, kinds)]
    if any(record.get("type") == _WHOLE_FILE for record in before):
        return None
    raw = read_records(path, start=cut.end)
    raw.layout.header_end = len(header_line)
    # Replayed as the whole file would be, less the messages before the boundary: the segment
    # they made stands empty in ``segments[0]``, unread.
    raw.records[:0] = [header, *before, cut.record]
    loaded = replay(path, raw)
    loaded.unread_before = cut.start
    return loaded
