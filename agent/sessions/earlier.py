"""The conversation a session's compactions summarized, read back from its transcript on demand.

A resume reads only what follows the last compaction in effect
(``agent.sessions.tail``); what came before stays in the file, one segment per
compaction. A front end asks for them one at a time, newest first, as the user
scrolls up (``earlier_segment``), and searches the whole file for a text
(``search_transcript``), streaming it a line at a time: neither holds more of
the file than a segment, or a line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from agent.core.messages import Message
from agent.sessions.tail import Cut, live_boundary, scan_forward
from agent.sessions.transcript import message_from_record, read_records, replay

SNIPPET_CHARS = 120


@dataclass(frozen=True)
class EarlierSegment:
    """The conversation one compaction summarized, as it stood just before it."""

    messages: list[Message]  # less the messages the compaction kept: they follow it
    compaction: dict[str, Any]  # the ``compact_boundary`` record that ended it
    before: int | None  # ``earlier_segment(path, before)`` gives the one before it; None: none


def earlier_segment(path: Path, before: int | None = None) -> EarlierSegment | None:
    """The segment ended by the last compaction in effect before byte ``before`` (None: the end
    of the file, so the one before the live conversation); None when there is none. OSError
    if unreadable."""
    with open(path, "rb") as handle:
        end = handle.seek(0, 2) if before is None else before
        cut = live_boundary(handle, end)
        if cut is None:
            return None
        previous = live_boundary(handle, cut.start)
        kept = _put_in_place(handle, cut)
    start = previous.end if previous is not None else 0
    messages = replay(path, read_records(path, start=start, end=cut.start)).messages
    return EarlierSegment(
        [m for m in messages if m.uuid not in kept],
        cut.record,
        previous.end if previous is not None else None,
    )


def _put_in_place(handle: IO[bytes], cut: Cut) -> set[str]:
    """The uuids of the messages the compaction put in place (its summary and what it kept)."""
    count = cut.record.get("replaced_count")
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return set()
    uuids: set[str] = set()
    end = handle.seek(0, 2)
    for _start, _end, record in scan_forward(handle, cut.end, end, ("message",)):
        if isinstance(record.get("uuid"), str):
            uuids.add(record["uuid"])
        if len(uuids) >= count:
            break
    return uuids


# -- search ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A message that holds the text searched for."""

    uuid: str
    role: str
    kind: str
    timestamp: float
    snippet: str  # the text around the first match, on one line
    compactions_since: int  # compactions recorded after it (0: the conversation now)


def search_transcript(path: Path, text: str, limit: int = 50) -> tuple[list[Found], int]:
    """The messages of the transcript that hold ``text`` (case-insensitive), the latest
    ``limit`` of them oldest first, and how many there are. A message a compaction kept is
    found once, where it was written last. Streams the file; OSError if unreadable."""
    needle = text.casefold()
    if not needle:
        return [], 0
    quick = _line_pattern(text)
    found: dict[str, tuple[int, Found]] = {}  # uuid -> (boundaries before it, found)
    boundaries = 0
    with open(path, "rb") as handle:
        for line in handle:
            if b'"compact_boundary"' in line and (record := _json(line)) is not None:
                boundaries += record.get("type") == "compact_boundary"
            if quick is not None and not quick.search(line):
                continue
            record = _json(line)
            message = message_from_record(record) if record is not None else None
            if record is None or record.get("type") != "message" or message is None:
                continue
            where = searchable(message).casefold().find(needle)
            if where < 0:
                continue
            found.pop(message.uuid, None)  # the later copy stands
            found[message.uuid] = (boundaries, _found(message, where))
    hits = list(found.values())
    shown = [replace(hit, compactions_since=boundaries - seen) for seen, hit in hits[-limit:]]
    return shown, len(hits)


def searchable(message: Message) -> str:
    """The text of a message a search looks in: its text, tool inputs and tool results."""
    parts: list[str] = []
    for block in message.content:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            parts.append(json.dumps(block.get("input", {}), ensure_ascii=False))
        elif kind == "tool_result":
            content = block.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(parts)


def _found(message: Message, where: int) -> Found:
    text = searchable(message)
    start = max(0, where - SNIPPET_CHARS // 3)
    snippet = " ".join(text[start : start + SNIPPET_CHARS].split())
    if start > 0:
        snippet = "…" + snippet
    if start + SNIPPET_CHARS < len(text):
        snippet += "…"
    return Found(message.uuid, message.role, message.kind, message.timestamp, snippet, 0)


def _line_pattern(text: str) -> re.Pattern[bytes] | None:
    """A quick test of a raw line for ``text`` as the transcript writes it (JSON-escaped), or
    None when there is none that cannot miss (non-ASCII text: case folding is not bytewise)."""
    escaped = json.dumps(text)[1:-1]
    if not text.isascii() or escaped != text:
        return None
    return re.compile(re.escape(text.encode()), re.IGNORECASE)


def _json(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None
