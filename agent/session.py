"""Sessions: writing the transcript as the conversation goes, loading it, resuming it.

Where transcripts live, and finding and listing them, is ``agent.session_store``
(its names are importable from here too); the file format, its replay and the
repair of interrupted tool calls are in ``agent.transcript``. The file of a new
session appears with its first record, so starting ccx and quitting leaves
nothing for ``-c`` to pick up.
"""

from __future__ import annotations

import logging
import os
import stat
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent import __version__
from agent.messages import Message
from agent.session_store import SessionError as SessionError
from agent.session_store import SessionInfo as SessionInfo
from agent.session_store import find_session as find_session
from agent.session_store import latest_session_path as latest_session_path
from agent.session_store import list_sessions as list_sessions
from agent.session_store import project_dir as project_dir
from agent.session_store import session_path_for as session_path_for
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
_MTIME_TOLERANCE_S = 1e-5  # st_mtime and st_mtime_ns / 1e9 may differ in the last bit


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
