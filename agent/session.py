"""Sessions: where transcripts live, writing them as the conversation goes, resuming them.

A session is ``<config>/projects/<cwd, non-alphanumerics as '-'>/<id>.jsonl``
plus a folder ``<id>/`` beside it for tool outputs saved out of the context.
The file format, its replay and the repair of interrupted tool calls are in
``agent.transcript``. The file of a new session appears with its first record,
so starting ccx and quitting leaves nothing for ``-c`` to pick up.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import stat
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent import __version__
from agent.locations import config_dir
from agent.messages import Message
from agent.transcript import (
    FileStateRecord,
    LoadedSession,
    TranscriptWriter,
    read_records,
    repair_conversation,
    replay,
)
from tools.file_state import FileState, FileStateCache

log = logging.getLogger(__name__)

MAX_REBUILD_BYTES = 5 * 1024 * 1024
_MAX_DIR_NAME = 200  # file systems refuse names over 255 bytes
_MTIME_TOLERANCE_S = 1e-5  # st_mtime and st_mtime_ns / 1e9 may differ in the last bit


class SessionError(Exception):
    """A session file that is missing or cannot be read."""


# -- locations ---------------------------------------------------------------------------


def _config_root(override: Path | None) -> Path:
    return Path(override) if override is not None else config_dir()


def project_dir(cwd: str | os.PathLike[str], config_dir: Path | None = None) -> Path:
    absolute = os.path.abspath(os.fspath(cwd))
    name = re.sub(r"[^A-Za-z0-9]", "-", absolute)
    if len(name) > _MAX_DIR_NAME:
        digest = hashlib.sha256(absolute.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        name = f"{name[:_MAX_DIR_NAME]}-{digest}"
    return _config_root(config_dir) / "projects" / name


def _valid_id(session_id: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", session_id))


def _session_files(directory: Path) -> list[Path]:
    try:
        return [p for p in directory.glob("*.jsonl") if p.is_file()]
    except OSError:
        return []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def latest_session_path(cwd: str | os.PathLike[str], config_dir: Path | None = None) -> Path | None:
    files = _session_files(project_dir(cwd, config_dir))
    return max(files, key=_mtime) if files else None


def find_session(
    session_id: str, cwd: str | os.PathLike[str], config_dir: Path | None = None
) -> Path | None:
    """The session's file: the cwd's project first, then every project; else a unique prefix."""
    session_id = session_id.strip()
    if not _valid_id(session_id):
        return None
    here = project_dir(cwd, config_dir)
    candidate = here / f"{session_id}.jsonl"
    if candidate.is_file():
        return candidate
    projects = _config_root(config_dir) / "projects"
    try:
        directories = sorted(p for p in projects.iterdir() if p.is_dir())
    except OSError:
        directories = []
    for directory in directories:
        candidate = directory / f"{session_id}.jsonl"
        if candidate.is_file():
            return candidate
    if len(session_id) >= 4:
        matches = [p for p in _session_files(here) if p.stem.startswith(session_id)]
        if len(matches) == 1:
            return matches[0]
    return None


def session_path_for(
    resume: str | None, continue_session: bool, cwd: str | os.PathLike[str]
) -> Path | None:
    """The transcript ``-r ID`` or ``-c`` names; None for a new session.

    SessionError when ``resume`` names no session; ``-c`` with no earlier
    session in ``cwd`` is None.
    """
    if resume:
        path = find_session(resume, cwd)
        if path is None:
            raise SessionError(f"No session with id {resume!r} was found")
        return path
    return latest_session_path(cwd) if continue_session else None


# -- loading -----------------------------------------------------------------------------


def load_session(path: str | os.PathLike[str]) -> LoadedSession:
    """Read a transcript and repair it in memory; SessionError only if it cannot be read."""
    path = Path(path)
    try:
        raw = read_records(path)
    except OSError as exc:
        raise SessionError(f"cannot read session file {path}: {exc.strerror or exc}") from exc
    loaded = replay(path, raw)
    loaded.messages, loaded.repairs, loaded.repair_ops = repair_conversation(loaded.messages)
    return loaded


def rebuild_file_state(loaded: LoadedSession, cache: FileStateCache) -> int:
    """Refill the cache from the transcript's file reads, checked against the disk now.

    A file changed since it was read is marked stale (Edit then asks for a
    re-read); deleted, binary or over-large files are left out. Returns the
    number of entries restored.
    """
    latest: dict[str, FileStateRecord] = {}
    for record in loaded.file_states:  # the last read of a path wins and sets its recency
        latest.pop(record.path, None)
        latest[record.path] = record
    restored = 0
    for record in latest.values():
        content, disk_mtime = _read_text(record.path)
        if content is None:
            continue
        stale = abs(disk_mtime - record.mtime) > _MTIME_TOLERANCE_S
        state = FileState(
            content=content,
            mtime=record.mtime,
            read_at=record.at,
            offset=record.offset,
            limit=record.limit,
            is_partial_view=record.partial,
            stale=stale,
            in_context=record.in_context,
        )
        cache.set(record.path, state)
        restored += 1
    return restored


def _read_text(path: str) -> tuple[str | None, float]:
    try:
        info = os.stat(path)
        # Only regular files: opening a FIFO left at a read path would block.
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_REBUILD_BYTES:
            return None, 0.0
        with open(path, "rb") as handle:
            data = handle.read(MAX_REBUILD_BYTES + 1)
    except OSError:
        return None, 0.0
    if len(data) > MAX_REBUILD_BYTES:
        return None, 0.0
    if b"\0" in data[:8192]:
        return None, 0.0
    return data.decode("utf-8", errors="replace"), info.st_mtime


# -- the live session --------------------------------------------------------------------


class Session:
    """The transcript being written: every message and file read, appended as it happens."""

    def __init__(self, path: Path, session_id: str, header: dict[str, Any] | None = None) -> None:
        self._path = path
        self._id = session_id
        self._pending_header = header
        self._writer = TranscriptWriter(path)
        # (mtime, offset, limit, partial, read_at) last written per path: a cache.set that
        # only echoes a known read (rebuild_file_state, an in_context flip) writes nothing.
        self._written_reads: dict[str, tuple[Any, ...]] = {}
        self.write_error: OSError | None = None
        # Told once, on the first failed write, so the front end can say the file is incomplete.
        self.on_write_error: Callable[[str], None] | None = None

    @classmethod
    def create(
        cls,
        cwd: str | os.PathLike[str],
        model: str,
        config_dir: Path | None = None,
        resumed_from: str | None = None,
    ) -> Session:
        session_id = str(uuid.uuid4())
        path = project_dir(cwd, config_dir) / f"{session_id}.jsonl"
        header = {
            "type": "session",
            "session_id": session_id,
            "cwd": os.path.abspath(os.fspath(cwd)),
            "version": __version__,
            "model": model,
            "created_at": time.time(),
            "resumed_from": resumed_from,
        }
        return cls(path, session_id, header)

    @classmethod
    def open_existing(
        cls,
        path_or_id: str | os.PathLike[str],
        cwd: str | os.PathLike[str],
        config_dir: Path | None = None,
        loaded: LoadedSession | None = None,
    ) -> tuple[Session, LoadedSession]:
        """Load a session by path or id and continue it in the same file.

        ``loaded`` is the file's content when the caller has read it already
        (the TUI does, to draw the history sooner). Writes a resume record and,
        when loading repaired the conversation, the repair record, so the file
        replays to exactly what is returned.
        """
        path = _locate(path_or_id, cwd, config_dir)
        if loaded is None:
            loaded = load_session(path)
        session = cls(path, path.stem)
        for record in loaded.file_states:
            session._written_reads[record.path] = _read_signature(
                record.mtime, record.offset, record.limit, record.partial, record.at
            )
        session.append_record({"type": "resume", "at": time.time(), "cwd": os.fspath(cwd)})
        if loaded.repair_ops:
            session.append_record(
                {
                    "type": "repair",
                    "at": time.time(),
                    "repairs": loaded.repairs,
                    "ops": loaded.repair_ops,
                }
            )
        return session, loaded

    @property
    def id(self) -> str:
        return self._id

    @property
    def path(self) -> Path:
        return self._path

    @property
    def folder(self) -> Path:
        """Where tools save outputs too large for the context (created by whoever writes)."""
        return self._path.with_suffix("")

    def append_message(self, message: Message) -> None:
        self.append_record({"type": "message", **message.to_record()})

    def append_record(self, record: dict[str, Any]) -> None:
        """Append any record; it must carry a "type". Write failures are kept, not raised."""
        if "type" not in record:
            raise ValueError("a transcript record needs a 'type'")
        if record["type"] == "compact_boundary":
            self._written_reads.clear()  # reads restored after compaction must be recorded anew
        try:
            if self._pending_header is not None:
                self._writer.write(self._pending_header)
                self._pending_header = None
            self._writer.write(record)
        except OSError as exc:
            # Losing a line beats crashing the session; on_write_error lets the user know.
            first = self.write_error is None
            self.write_error = exc
            log.warning("could not write to session file %s: %s", self._path, exc)
            if first and self.on_write_error is not None:
                self.on_write_error(f"{self._path}: {exc.strerror or exc}")

    def attach_file_state(self, cache: FileStateCache) -> None:
        """Record every entry the cache gains, so a resumed session knows what it read."""
        self._file_listener = lambda key: self._record_read(cache, key)
        cache.add_listener(self._file_listener)

    def detach_file_state(self, cache: FileStateCache) -> None:
        listener = getattr(self, "_file_listener", None)
        if listener is not None:
            cache.remove_listener(listener)

    def _record_read(self, cache: FileStateCache, key: str) -> None:
        state = cache.peek(key)
        if state is None:
            return
        signature = _read_signature(
            state.mtime, state.offset, state.limit, state.is_partial_view, state.read_at
        )
        if self._written_reads.get(key) == signature:
            return
        self._written_reads[key] = signature
        self.append_record(
            {
                "type": "file_state",
                "path": key,
                "mtime": state.mtime,
                "offset": state.offset,
                "limit": state.limit,
                "partial": state.is_partial_view,
                "at": state.read_at,
            }
        )

    def close(self) -> None:
        self._writer.close()


def _read_signature(
    mtime: float, offset: int | None, limit: int | None, partial: bool, at: float
) -> tuple[Any, ...]:
    return (float(mtime), offset, limit, bool(partial), float(at))


def _locate(
    path_or_id: str | os.PathLike[str], cwd: str | os.PathLike[str], config_dir: Path | None
) -> Path:
    text = os.fspath(path_or_id)
    if isinstance(path_or_id, os.PathLike) or os.sep in text or text.endswith(".jsonl"):
        path = Path(text).expanduser()
        if not path.is_file():
            raise SessionError(f"no session file at {path}")
        return path
    found = find_session(text, cwd, config_dir)
    if found is None:
        raise SessionError(f"no session {text!r} found for {os.fspath(cwd)} or any other project")
    return found


# -- listing -----------------------------------------------------------------------------

_HEAD_BYTES = 256 * 1024
_HEAD_LINES = 64
_EXACT_COUNT_BYTES = 1024 * 1024
_MESSAGE_MARK = b'{"type":"message"'
_PROMPT_WIDTH = 80


@dataclass
class SessionInfo:
    id: str
    path: Path
    modified: float
    size: int
    message_count: int  # message records written (an estimate for very large files)
    first_prompt: str
    count_estimated: bool = False


def list_sessions(cwd: str | os.PathLike[str], config_dir: Path | None = None) -> list[SessionInfo]:
    """The cwd's sessions, newest first, from each file's head only."""
    infos = []
    for path in _session_files(project_dir(cwd, config_dir)):
        info = _session_info(path)
        if info is not None:
            infos.append(info)
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def _session_info(path: Path) -> SessionInfo | None:
    try:
        stat = path.stat()
        with open(path, "rb") as handle:
            if stat.st_size <= _EXACT_COUNT_BYTES:
                data = handle.read()
                count, estimated = data.count(_MESSAGE_MARK), False
            else:
                data = handle.read(_HEAD_BYTES)
                head_count = data.count(_MESSAGE_MARK)
                count, estimated = round(head_count * stat.st_size / max(1, len(data))), True
    except OSError:
        return None
    session_id, prompt = path.stem, ""
    for line in data[:_HEAD_BYTES].split(b"\n")[:_HEAD_LINES]:
        record = _parse_head_line(line)
        if record is None:
            continue
        if record.get("type") == "session" and isinstance(record.get("session_id"), str):
            session_id = record["session_id"]
        elif record.get("type") == "message" and not prompt:
            prompt = _prompt_text(record)
        if prompt:
            break
    return SessionInfo(session_id, path, stat.st_mtime, stat.st_size, count, prompt, estimated)


_TEXT_START = re.compile(rb'"text":"((?:[^"\\]|\\.){0,400})')


def _parse_head_line(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        # A line longer than the head (a huge pasted prompt): take its text's beginning.
        if not line.startswith(_MESSAGE_MARK) or b'"kind":"prompt"' not in line:
            return None
        match = _TEXT_START.search(line)
        if match is None:
            return None
        try:
            text = json.loads(b'"' + match.group(1) + b'"')
        except ValueError:
            return None
        return {"type": "message", "kind": "prompt", "message": {"role": "user", "content": text}}
    return record if isinstance(record, dict) else None


def _prompt_text(record: dict[str, Any]) -> str:
    body = record.get("message")
    if not isinstance(body, dict) or body.get("role") != "user":
        return ""
    if record.get("kind", "prompt") != "prompt":
        return ""
    content = body.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    else:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= _PROMPT_WIDTH else text[: _PROMPT_WIDTH - 1] + "…"
