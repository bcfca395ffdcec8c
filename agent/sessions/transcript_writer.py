"""Writing a transcript: one JSON record per line, one writer per file, no half-written lines.

The file is opened unbuffered in append mode and each record goes out in one
write(), so a crash can tear at most the last line. While a ccx has a session
open it holds an exclusive ``flock`` on its file: a second ccx that finds the
lock taken gets ``TranscriptBusy`` and must not write there (the session layer
forks instead). The OS drops the lock when the process dies, however it dies.

A write that fails (a full disk, a file-size limit) is undone: the file is cut
back to its length before the write, so no partial record stays behind; where
that is impossible the next record starts on a fresh line. A new file only
takes its name with its first record, so a failure leaves no empty file.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not on Windows: sessions there go unlocked
    fcntl = None  # type: ignore[assignment]  # the module or None: checked before each use

log = logging.getLogger(__name__)

# flock may be refused by file systems that do not support it (some network and FUSE ones).
_NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL, errno.ENOSYS}


class TranscriptBusy(OSError):
    """Another process holds the transcript's lock: it is writing this session now."""

    def __init__(self, path: Path) -> None:
        super().__init__(errno.EWOULDBLOCK, "in use by another ccx", str(path))


def encode_record(record: dict[str, Any]) -> bytes:
    """One record as one newline-terminated line of UTF-8 JSON."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: the ASCII form escapes them losslessly
        data = json.dumps(record, separators=(",", ":"), default=str).encode("ascii")
    return data + b"\n"


class TranscriptWriter:
    """Appends records to a JSONL file; thread-safe, every record flushed as written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: Any = None
        self._lock = threading.Lock()
        self.locked = False  # holds the file's flock (False where the file system has none)
        self._fresh_line = False  # a failed write may have left bytes that could not be cut
        self._unborn: Path | None = None  # a new file's name until its first record is in

    def open(self) -> int:
        """Open and lock the file now (not at the first write); returns its size.

        Raises TranscriptBusy when another process holds the lock, OSError when
        the file cannot be opened for appending.
        """
        with self._lock:
            if self._file is None:
                self._open()
            return os.fstat(self._file.fileno()).st_size

    def write(self, record: dict[str, Any]) -> None:
        self.write_bytes(encode_record(record))

    def write_bytes(self, data: bytes) -> None:
        """Append whole lines; on failure the file is left as it was, and OSError raised."""
        with self._lock:
            if self._file is None:
                self._open()
            fd = self._file.fileno()
            start = os.fstat(fd).st_size
            if self._fresh_line:
                data = b"\n" + data
            try:
                view = memoryview(data)
                while view:  # a regular file takes it in one call; loop only on a short write
                    written = self._file.write(view)
                    view = view[written:]
                if self._unborn is not None:
                    os.rename(self._unborn, self.path)
                    self._unborn = None
            except OSError:
                self._undo(fd, start)
                raise
            self._fresh_line = False

    def _undo(self, fd: int, start: int) -> None:
        """Cut off what a failed write left; else make sure the next record starts a line."""
        if self._unborn is not None:  # a new file that never got a record: leave nothing
            with contextlib.suppress(OSError):
                os.unlink(self._unborn)
            self._unborn = None
            self._file.close()
            self._file = None
            return
        try:
            if os.fstat(fd).st_size == start:
                return
            if self.locked:  # without the lock another writer's records could follow ours
                os.ftruncate(fd, start)
                return
        except OSError:
            pass
        self._fresh_line = True

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        unborn = None
        if not os.path.lexists(self.path):
            # A new file is written under another name, locked, and renamed once it holds a
            # record: no one finds it empty or unlocked, and a failed first write leaves
            # no empty file behind.
            unborn = self.path.with_name(f".{self.path.name}.new")
        handle = open(unborn or self.path, "ab", buffering=0)  # noqa: SIM115 - kept open
        try:
            self.locked = _try_lock(handle.fileno(), self.path)
            if handle.tell() > 0 and not _ends_with_newline(self.path):
                # End a torn last line, so the next record is not glued onto it.
                handle.write(b"\n")
        except BaseException:
            handle.close()
            raise
        self._file, self._unborn = handle, unborn

    def close(self) -> None:
        """Close the file, which also releases its lock (and drops a new file never written)."""
        with self._lock:
            if self._file is not None:
                if self._unborn is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(self._unborn)
                    self._unborn = None
                self._file.close()
                self._file = None
                self.locked = False


def _try_lock(fd: int, path: Path) -> bool:
    """Take the file's exclusive lock without waiting; TranscriptBusy if another holds it."""
    if fcntl is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        raise TranscriptBusy(path) from exc
    except OSError as exc:
        if exc.errno not in _NO_LOCKS:
            raise
        log.info("no lock on %s (%s): the file system does not support it", path, exc)
        return False
    return True


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"
