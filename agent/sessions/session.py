"""Sessions: writing the transcript as the conversation goes, loading it, resuming it.

Where transcripts live, and finding and listing them, is ``agent.sessions.store``
(its names are importable from here too); the file format, its replay and the
repair of interrupted tool calls are in ``agent.sessions.transcript``. The file of a new
session appears with its first record, so starting ccx and quitting leaves
nothing for ``-c`` to pick up.

One writer per session: a ccx holds its transcript's lock while the session is
open. A second ccx asked to continue that session (``-c``, ``-r ID``) does not
wait and never writes into it: it continues in a new session whose transcript
starts with a copy of the busy one's records, its header naming it in
``forked_from``. Both conversations then go on, each in its own file, and
neither loses or rewrites a record of the other.
"""

from __future__ import annotations

import logging
import os
import stat
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent import __version__
from agent.core.messages import Message
from agent.sessions.foreign import foreign_session_reason
from agent.sessions.store import SessionError as SessionError
from agent.sessions.store import SessionInfo as SessionInfo
from agent.sessions.store import find_session as find_session
from agent.sessions.store import latest_session_path as latest_session_path
from agent.sessions.store import list_sessions as list_sessions
from agent.sessions.store import project_dir as project_dir
from agent.sessions.store import session_path_for as session_path_for
from agent.sessions.tail import load_tail
from agent.sessions.transcript import (
    FileStateRecord,
    LoadedSession,
    escape_conversation,
    read_records,
    repair_conversation,
    replay,
)
from agent.sessions.transcript_writer import TranscriptBusy, TranscriptWriter, encode_record
from tools.file_state import FileState, FileStateCache
from tools.surrogates import escape_text

log = logging.getLogger(__name__)

MAX_REBUILD_BYTES = 5 * 1024 * 1024
_MTIME_TOLERANCE_S = 1e-5  # st_mtime and st_mtime_ns / 1e9 may differ in the last bit


# -- loading -----------------------------------------------------------------------------


def load_session(path: str | os.PathLike[str], until: str | None = None) -> LoadedSession:
    """Read a transcript (up to the message ``until``) and repair it in memory; SessionError
    if it cannot be read, or has no message ``until``."""
    path = Path(path)
    try:
        raw = read_records(path, until)
    except OSError as exc:
        raise SessionError(f"cannot read session file {path}: {exc.strerror or exc}") from exc
    if until is not None and raw.stopped_at is None:
        raise SessionError(f"the session has no message {until}")
    return _repaired(replay(path, raw))


def load_for_resume(path: str | os.PathLike[str]) -> LoadedSession:
    """What a resume needs of a transcript, repaired: read from its end, only what follows
    the last compaction in effect, where that gives the same session (``agent.sessions.tail``);
    else the whole file. SessionError if it cannot be read."""
    path = Path(path)
    try:
        loaded = load_tail(path)
    except OSError as exc:
        raise SessionError(f"cannot read session file {path}: {exc.strerror or exc}") from exc
    return load_session(path) if loaded is None else _repaired(loaded)


def _repaired(loaded: LoadedSession) -> LoadedSession:
    # Records an older build wrote with text that is not UTF-8 would fail every request.
    messages, escaped, escape_ops = escape_conversation(loaded.messages)
    loaded.segments = [escape_conversation(segment)[0] for segment in loaded.segments]
    loaded.messages, repairs, repair_ops = repair_conversation(messages)
    loaded.repairs, loaded.repair_ops = escaped + repairs, escape_ops + repair_ops
    return loaded


def rebuild_file_state(loaded: LoadedSession, cache: FileStateCache) -> int:
    """Refill the cache from the transcript's file reads, checked against the disk now.

    A file changed since it was read is marked stale (Edit then asks for a
    re-read); deleted, binary or over-large files are left out. Returns the
    number of entries restored.

    Only the newest reads that fit the cache's entry limit are read from disk:
    the cache evicts its oldest entries first, so older ones would not stay.
    """
    latest: dict[str, FileStateRecord] = {}
    for record in loaded.file_states:  # the last read of a path wins and sets its recency
        latest.pop(record.path, None)
        latest[record.path] = record
    states: list[tuple[str, FileState]] = []
    for record in reversed(latest.values()):
        if len(states) >= cache.max_entries:
            break
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
        states.append((record.path, state))
    for path, state in reversed(states):  # oldest first: the newest ends most recent
        cache.set(path, state)
    return len(states)


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

TRANSCRIPT_FAILED_RESULT = (
    "This tool call was not run: the session transcript could not be written, so the turn "
    "was stopped."
)


class TranscriptWriteError(Exception):
    """The transcript cannot be written: the turn stops; what was written stays resumable."""

    def __init__(self, message: str, error: OSError | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.error = error

    @classmethod
    def of(cls, session: Session) -> TranscriptWriteError:
        return cls(transcript_failure_text(session), session.write_error)


def transcript_failure_text(session: Session, turn_stopped: bool = True) -> str:
    """The error a turn (or a headless run) ends with: what failed, and how to go on."""
    what = (
        f"The turn was stopped because the session transcript {session.path} could not be "
        if turn_stopped
        else f"The session transcript {session.path} could not all be "
    )
    return escape_text(
        f"{what}written ({_reason(session)}). The session up to that point is saved: fix the "
        f"cause (e.g. free disk space) and resume it with `ccx -r {session.id}`."
    )


def transcript_write_notice(session: Session) -> str:
    """The one notice, at the first failed write: what failed."""
    return escape_text(
        f"Could not write the session transcript {session.path} ({_reason(session)})."
    )


def _reason(session: Session) -> str:
    error = session.write_error or session.first_write_error
    return (error.strerror or str(error)) if error is not None else "unknown error"


class Session:
    """The transcript being written: every message and file read, appended as it happens.

    The file is locked from its first write until ``close()`` (see
    ``agent.sessions.transcript_writer``). A record that cannot be written is kept, in
    order, and written before the next one once the file takes writes again,
    so the file never skips a record.
    """

    def __init__(self, path: Path, session_id: str, header: dict[str, Any] | None = None) -> None:
        self._path = path
        self._id = session_id
        self._writer = TranscriptWriter(path)
        self._unwritten: deque[dict[str, Any] | bytes] = deque([header] if header else [])
        # (mtime, offset, limit, partial, read_at) last written per path: a cache.set that
        # only echoes a known read (rebuild_file_state, an in_context flip) writes nothing.
        self._written_reads: dict[str, tuple[Any, ...]] = {}
        self.write_error: OSError | None = None  # the write failing now; None once one succeeds
        self.first_write_error: OSError | None = None  # kept: the run must not end as a success
        # Told once, on the first failed write, so the front end can say so.
        self.on_write_error: Callable[[str], None] | None = None
        # Set when this session was forked because the one asked for was in use.
        self.forked_from: str | None = None
        self.busy_pid: int | None = None

    @classmethod
    def create(
        cls,
        cwd: str | os.PathLike[str],
        model: str,
        config_dir: Path | None = None,
        resumed_from: str | None = None,
        forked_from: str | None = None,
        folder: Path | None = None,
        session_id: str | None = None,
    ) -> Session:
        """A new session in the cwd's project folder (or ``folder``); its file appears with
        its first record. ``session_id``: the id to use (--session-id), a new UUID if None."""
        session_id = session_id or str(uuid.uuid4())
        path = (folder or project_dir(cwd, config_dir)) / f"{session_id}.jsonl"
        header: dict[str, Any] = {
            "type": "session",
            "session_id": session_id,
            "cwd": os.path.abspath(os.fspath(cwd)),
            "version": __version__,
            "model": model,
            "created_at": time.time(),
            "resumed_from": resumed_from,
            "pid": os.getpid(),
        }
        if forked_from is not None:
            header["forked_from"] = forked_from
        return cls(path, session_id, header)

    @classmethod
    def open_existing(
        cls,
        path_or_id: str | os.PathLike[str],
        cwd: str | os.PathLike[str],
        config_dir: Path | None = None,
        loaded: LoadedSession | None = None,
        model: str | None = None,
        fork: bool = False,
        until: str | None = None,
    ) -> tuple[Session, LoadedSession]:
        """Load a session by path or id and continue it in the same file, locked.

        ``loaded`` is the file's content when the caller has read it already
        (``load_for_resume``; the TUI does, to draw the history sooner). Writes a resume
        record and, when loading repaired the conversation, the repair record, so the file
        replays to exactly what is returned. When another ccx holds the file, or with
        ``fork`` (--fork-session), continues instead in a fork of it (``forked_from`` is then
        set). ``until`` (--resume-session-at) forks the history up to that message.
        """
        path = _locate(path_or_id, cwd, config_dir)
        if (reason := foreign_session_reason(path)) is not None:
            raise SessionError(reason)  # before anything is written to it
        if fork or until is not None:
            return cls._fork(path, cwd, model or "", config_dir, until)
        if loaded is None:
            loaded = load_for_resume(path)
        session = cls(path, path.stem)
        try:
            size: int | None = session._writer.open()
        except TranscriptBusy:
            session.close()
            return cls._fork(path, cwd, model or loaded.model or "", config_dir)
        except OSError:
            size = None  # the first write reports it
        if size is not None and size != loaded.layout.size:
            loaded = load_for_resume(path)  # written since it was read; no one else can now
        session._continue(loaded, {"type": "resume", "at": time.time(), "cwd": os.fspath(cwd)})
        return session, loaded

    @classmethod
    def _fork(
        cls,
        source: Path,
        cwd: str | os.PathLike[str],
        model: str,
        config_dir: Path | None,
        until: str | None = None,
    ) -> tuple[Session, LoadedSession]:
        """A new session beside ``source`` whose file starts with a copy of its records (up
        to the message ``until``)."""
        loaded = load_session(source, until)  # as it stands now, not as when first read
        layout = loaded.layout
        try:
            with open(source, "rb") as handle:
                handle.seek(layout.header_end)
                copied = handle.read(layout.records_end - layout.header_end)
        except OSError as exc:
            raise SessionError(f"cannot read session file {source}: {exc.strerror or exc}") from exc
        if layout.unterminated:
            copied += b"\n"
        fork = cls.create(
            cwd, model, config_dir, forked_from=loaded.session_id, folder=source.parent
        )
        fork.forked_from, fork.busy_pid = loaded.session_id, loaded.writer_pid
        header = fork._unwritten[0]
        if copied:
            fork._unwritten.append(copied)
        assert isinstance(header, dict)
        forked = replace(loaded, path=fork.path, header=header)
        fork._continue(forked, None)
        return fork, forked

    def _continue(self, loaded: LoadedSession, opening: dict[str, Any] | None) -> None:
        """Take over what the file already records; write the opening and repair records."""
        for record in loaded.file_states:
            self._written_reads[record.path] = _read_signature(
                record.mtime, record.offset, record.limit, record.partial, record.at
            )
        if opening is not None:
            self.append_record({**opening, "pid": os.getpid()})
        if loaded.repair_ops:
            self.append_record(
                {
                    "type": "repair",
                    "at": time.time(),
                    "repairs": loaded.repairs,
                    "ops": loaded.repair_ops,
                }
            )
        self._flush()

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
        """Append any record; it must carry a "type". Write failures are kept, not raised:
        ``write_error`` says the file is failing now."""
        if "type" not in record:
            raise ValueError("a transcript record needs a 'type'")
        if record["type"] == "compact_boundary":
            self._written_reads.clear()  # reads restored after compaction must be recorded anew
        self._unwritten.append(record)
        self._flush()

    def _flush(self) -> None:
        while self._unwritten:
            item = self._unwritten[0]
            try:
                self._writer.write_bytes(item if isinstance(item, bytes) else encode_record(item))
            except OSError as exc:
                self._write_failed(exc)
                return
            self._unwritten.popleft()
        if self.write_error is not None:
            log.info("the session file %s takes writes again", self._path)
            self.write_error = None

    def _write_failed(self, exc: OSError) -> None:
        self.write_error = exc
        if self.first_write_error is not None:
            return  # told once; the turn's error says the rest
        self.first_write_error = exc
        detail = f"{self._path}: {exc.strerror or exc}"
        log.info("could not write to session file %s", detail)  # the front end says it
        if self.on_write_error is not None:
            self.on_write_error(detail)

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
        """Write what is still unwritten if the file takes it now; release the file's lock."""
        self._flush()
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
