"""The transcript file: append-only JSONL, one record per line, and how it replays.

Every record is one JSON object on one line (``agent.sessions.transcript_writer``
writes them, one writer per file), so a crash can tear at most the last line.
Record types (the ``type`` key):

- ``session``    first line: session_id, cwd, version, model, created_at, resumed_from,
  forked_from (the busy session this one was copied from), pid
- ``resume``     the session was reopened (-c / -r); later records continue it (at, cwd, pid)
- ``message``    one conversation message (``Message.to_record()`` merged in)
- ``file_state`` a file-state cache entry: path, mtime, offset, limit, partial, at
- ``compact_boundary`` compaction happened: the live conversation restarts
  empty and the post-compaction messages follow as new ``message`` records
- ``compact_undo`` the last boundary is undone: the conversation as it was
  before it becomes live again (what /undo-compact writes)
- ``rewind``     the live conversation goes back to before the message ``uuid`` names
  (the user took that prompt back); file reads recorded since that message's time
  are forgotten with it
- ``repair``     a patch applied to the live conversation (see below)
- ``event``      anything else worth keeping (compaction events and the like)

Unknown types are ignored, so newer files load in older builds.

Repair persistence: a repair is stored as a ``repair`` record holding the
list of edits (``ops``) that turned the loaded conversation into the
repaired one, each addressed by its position in the live list at that point
of the file and checked against the message's uuid: ``replace`` (index,
uuid, message), ``insert`` (index, message), ``delete`` (index, uuid). The
ops are applied in order during replay, so loading the file again yields the
repaired conversation and finds nothing left to repair. A patch costs a few
lines where a snapshot would copy the whole conversation; and if a patch no
longer matches (a hand-edited file) it is skipped as a whole and the repair
simply runs again.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent.core.messages import Message, ToolUseBlock
from agent.core.pairing import AnswerFix, answer_message, fix_answer
from agent.core.sendable import NO_CONTENT, RawBlock, sendable_content
from agent.core.thinking import without_unsendable
from tools.surrogates import escape_value

log = logging.getLogger(__name__)


@dataclass
class FileLayout:
    """Where the records read lie in the file, so a fork can copy exactly those."""

    size: int = 0  # bytes read
    header_end: int = 0  # the end of the first line when it is the ``session`` header, else 0
    records_end: int = 0  # the end of the last record read; a torn tail is past it
    unterminated: bool = False  # the last record read lacks its newline


@dataclass
class RawTranscript:
    records: list[dict[str, Any]]
    invalid_lines: int = 0  # unparseable lines anywhere, the torn tail included
    torn_tail: bool = False
    layout: FileLayout = field(default_factory=FileLayout)
    stopped_at: str | None = None  # ``until`` was found: nothing after it was read


def read_records(
    path: Path, until: str | None = None, start: int = 0, end: int | None = None
) -> RawTranscript:
    """Every parseable record (up to the one whose uuid is ``until``), from the line that
    begins at byte ``start`` to the one that begins at ``end``; bad lines are counted, never
    raised. OSError if unreadable."""
    raw = RawTranscript(records=[])
    layout = raw.layout
    layout.size = layout.records_end = start
    with open(path, "rb") as handle:
        handle.seek(start)
        for line in handle:
            if end is not None and layout.size >= end:
                break
            start, layout.size = layout.size, layout.size + len(line)
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            terminated = line.endswith(b"\n")
            if isinstance(record, dict):
                if start == 0 and record.get("type") == "session":
                    layout.header_end = layout.size
                raw.records.append(record)
                layout.records_end, layout.unterminated = layout.size, not terminated
                if until is not None and record.get("uuid") == until:
                    raw.stopped_at = until
                    break
                continue
            raw.invalid_lines += 1
            # A last line without its newline that does not parse is a torn write. One that
            # does parse lost only the newline, and the writer completes it on reopening.
            raw.torn_tail = not terminated
            if terminated:
                layout.records_end, layout.unterminated = layout.size, False
    return raw


# -- replay ------------------------------------------------------------------------------


@dataclass
class FileStateRecord:
    path: str
    mtime: float
    offset: int | None
    limit: int | None
    partial: bool
    at: float
    in_context: bool  # recorded in the live part of the transcript (after the last boundary)


@dataclass
class LoadedSession:
    path: Path
    header: dict[str, Any] | None
    messages: list[Message]  # the live conversation, repaired
    segments: list[list[Message]]  # the conversation before each live boundary, oldest first
    boundaries: list[dict[str, Any]]  # the compact_boundary records still in effect
    file_states: list[FileStateRecord]
    events: list[dict[str, Any]]
    repairs: list[str] = field(default_factory=list)
    repair_ops: list[dict[str, Any]] = field(default_factory=list, repr=False)
    invalid_lines: int = 0
    torn_tail: bool = False
    skipped_repair_records: int = 0
    resumes: int = 0
    writer_pid: int | None = None  # the process that last opened the file for writing
    layout: FileLayout = field(default_factory=FileLayout)
    # Loaded from the end (agent.sessions.tail): the conversation before the compact_boundary
    # line at this offset was not read, and ``segments[0]`` stands empty for it. 0: all read.
    unread_before: int = 0

    @property
    def session_id(self) -> str:
        header_id = (self.header or {}).get("session_id")
        return header_id if isinstance(header_id, str) and header_id else self.path.stem

    @property
    def model(self) -> str | None:
        return (self.header or {}).get("model")

    @property
    def last_boundary(self) -> dict[str, Any] | None:
        return self.boundaries[-1] if self.boundaries else None

    @property
    def before_last_boundary(self) -> list[Message] | None:
        """The conversation as it was before the last compaction (for /undo-compact)."""
        return self.segments[-1] if self.segments else None


def message_from_record(record: dict[str, Any]) -> Message | None:
    """A Message, or None when the record is not a well-formed one. What the API would refuse
    is left out as it loads (``agent.core.sendable``): block types ccx does not know, blank
    text; a message left with nothing says so in words."""
    try:
        message = Message.from_record(record)
    except (KeyError, TypeError, AttributeError):
        return None
    if message.role not in ("user", "assistant") or not isinstance(message.content, list):
        return None
    if not all(isinstance(block, dict) and _well_formed(block) for block in message.content):
        return None
    content, dropped = sendable_content(message.content, message.role)
    if content is not message.content:
        if dropped:
            log.info("left out of a loaded message: %s", ", ".join(dropped))
        message.content = content or [{"type": "text", "text": NO_CONTENT}]
    intact = without_unsendable(message.content)
    if intact is not message.content:
        # A thinking block without its signature (or data) would be refused in every later
        # request; it goes whole, never mended (agent/core/thinking.py).
        message.content = intact or [{"type": "text", "text": NO_CONTENT}]
    return message


def _well_formed(block: RawBlock) -> bool:
    """Tool blocks carry the ids that pair them; without them every later request would fail."""
    kind = block.get("type")
    if kind == "tool_use":
        return (
            isinstance(block.get("id"), str)
            and isinstance(block.get("name"), str)
            and isinstance(block.get("input", {}), dict)
        )
    if kind == "tool_result":
        return isinstance(block.get("tool_use_id"), str)
    return True


def file_state_from_record(record: dict[str, Any], in_context: bool) -> FileStateRecord | None:
    path, mtime = record.get("path"), record.get("mtime")
    if not isinstance(path, str) or not isinstance(mtime, int | float):
        return None
    offset, limit = record.get("offset"), record.get("limit")
    return FileStateRecord(
        path=path,
        mtime=float(mtime),
        offset=offset if isinstance(offset, int) else None,
        limit=limit if isinstance(limit, int) else None,
        partial=bool(record.get("partial")),
        at=float(record.get("at") or 0.0),
        in_context=in_context,
    )


def replay(path: Path, raw: RawTranscript) -> LoadedSession:
    """Rebuild the conversation the records describe (no repair yet)."""
    loaded = LoadedSession(
        path=path,
        header=None,
        messages=[],
        segments=[],
        boundaries=[],
        file_states=[],
        events=[],
        invalid_lines=raw.invalid_lines,
        torn_tail=raw.torn_tail,
        layout=raw.layout,
    )
    live: list[Message] = []
    # Each segment is tagged with an epoch, so a file read knows whether it was recorded in
    # the conversation that ends up live (undo brings an older epoch back).
    epoch, next_epoch = 0, 1
    epochs: list[int] = []
    file_states: list[tuple[dict[str, Any], int]] = []
    for record in raw.records:
        kind = record.get("type")
        if kind == "message":
            message = message_from_record(record)
            if message is None:
                loaded.invalid_lines += 1
            else:
                live.append(message)
        elif kind == "file_state":
            file_states.append((record, epoch))
        elif kind == "compact_boundary":
            loaded.segments.append(live)
            loaded.boundaries.append(record)
            epochs.append(epoch)
            live, epoch, next_epoch = [], next_epoch, next_epoch + 1
        elif kind == "compact_undo":
            if loaded.segments:
                live, epoch = loaded.segments.pop(), epochs.pop()
                loaded.boundaries.pop()
        elif kind == "rewind":
            index = _index_of(live, record.get("uuid"))
            if index is not None:
                since = live[index].timestamp
                live = live[:index]
                # reads made since that message went with it: the model never saw them
                file_states = [
                    (state, state_epoch)
                    for state, state_epoch in file_states
                    if state_epoch != epoch or _read_at(state) < since
                ]
        elif kind == "repair":
            patched = apply_repair_ops(live, record.get("ops"))
            if patched is None:
                loaded.skipped_repair_records += 1
            else:
                live = patched
        elif kind == "event":
            if isinstance(record.get("event"), dict):
                loaded.events.append(record["event"])
        elif kind == "resume":
            loaded.resumes += 1
            loaded.writer_pid = _pid(record, loaded.writer_pid)
        elif kind == "session" and loaded.header is None:
            loaded.header = record
            loaded.writer_pid = _pid(record, loaded.writer_pid)
    loaded.messages = live
    for record, record_epoch in file_states:
        state = file_state_from_record(record, in_context=record_epoch == epoch)
        if state is None:
            loaded.invalid_lines += 1
        else:
            loaded.file_states.append(state)
    return loaded


def _index_of(messages: list[Message], uuid: object) -> int | None:
    if not isinstance(uuid, str):
        return None
    return next((i for i, m in enumerate(messages) if m.uuid == uuid), None)


def _read_at(record: dict[str, Any]) -> float:
    at = record.get("at")
    return float(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0.0


def _pid(record: dict[str, Any], previous: int | None) -> int | None:
    pid = record.get("pid")
    return pid if isinstance(pid, int) and not isinstance(pid, bool) else previous


# -- repair ------------------------------------------------------------------------------


def escape_conversation(
    messages: list[Message],
) -> tuple[list[Message], list[str], list[dict[str, Any]]]:
    """Escape text that is not valid UTF-8 (a record written by an older build), as a repair.

    Returns the messages (the same objects where nothing changed), a note when
    anything was escaped, and a ``replace`` op per message changed.
    """
    out: list[Message] = []
    ops: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        content = escape_value(message.content)
        if content is not message.content:
            message = replace(message, content=content)
            record = message.to_record()
            ops.append({"op": "replace", "index": index, "uuid": message.uuid, "message": record})
        out.append(message)
    notes = [f"escaped text that is not valid UTF-8 in {len(ops)} message(s)"] if ops else []
    return out, notes, ops


def apply_repair_ops(messages: list[Message], ops: Any) -> list[Message] | None:
    """The messages with a repair record's ops applied, or None if the ops do not fit."""
    if not isinstance(ops, list):
        return None
    result = list(messages)
    for op in ops:
        if not isinstance(op, dict) or not isinstance(op.get("index"), int):
            return None
        index, action = op["index"], op.get("op")
        if action == "insert":
            message = message_from_record(op.get("message") or {})
            if message is None or not 0 <= index <= len(result):
                return None
            result.insert(index, message)
            continue
        if not 0 <= index < len(result) or result[index].uuid != op.get("uuid"):
            return None
        if action == "delete":
            del result[index]
        elif action == "replace":
            message = message_from_record(op.get("message") or {})
            if message is None:
                return None
            result[index] = message
        else:
            return None
    return result


def repair_conversation(
    messages: list[Message],
) -> tuple[list[Message], list[str], list[dict[str, Any]]]:
    """Make every tool_use answered by the next message and every tool_result answer one.

    The rule and its fixes are ``agent.core.pairing``'s; this records them as ops.
    Returns the repaired list (input messages are not mutated), a description
    of each repair, and the ops that reproduce it (see the module docstring).
    """
    out: list[Message] = []
    repairs: list[str] = []
    ops: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.role == "user":
            previous = out[-1] if out else None
            fix = fix_answer(previous, message)
            repairs.extend(_fix_notes(fix, previous, message))
            position = len(out)
            if fix.message is None:
                ops.append({"op": "delete", "index": position, "uuid": message.uuid})
                continue
            if fix.message is not message:
                record = fix.message.to_record()
                ops.append(
                    {"op": "replace", "index": position, "uuid": message.uuid, "message": record}
                )
            out.append(fix.message)
            continue
        out.append(message)
        uses = message.tool_uses()
        following = messages[index + 1] if index + 1 < len(messages) else None
        if uses and (following is None or following.role != "user"):
            answer = answer_message(
                message,
                # derived, so loading the same unrepaired file twice gives the same ids
                uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"ccx-interrupted:{message.uuid}")),
                timestamp=message.timestamp,
            )
            ops.append({"op": "insert", "index": len(out), "message": answer.to_record()})
            out.append(answer)
            repairs.append(_closed_note(uses, message))
    return out, repairs, ops


def _closed_note(uses: Sequence[ToolUseBlock], response: Message) -> str:
    names = ", ".join(use["name"] for use in uses)
    return (
        f"closed {len(uses)} unanswered tool call(s) ({names}) of response "
        f"{response.uuid[:8]} with an interrupted result"
    )


def _fix_notes(fix: AnswerFix, previous: Message | None, message: Message) -> list[str]:
    notes = []
    if fix.orphans:
        notes.append(
            f"dropped {fix.orphans} orphan tool result(s) from message {message.uuid[:8]}"
            + ("" if fix.message is not None else ", leaving it empty: message dropped")
        )
    if fix.missing:
        assert previous is not None
        notes.append(_closed_note(fix.missing, previous))
    if fix.message is not None and fix.message is not message and not fix.changed:
        notes.append(f"moved the tool results of message {message.uuid[:8]} before its text")
    return notes
