"""FileStateCache: what the session has read, so edits can be checked and compaction can restore.

An LRU bounded both by entry count (100) and by total content size (25 MB),
keyed by the normalized absolute path. Edit/Write consult it to refuse changes
to files the model has not read or that changed on disk since; compaction
snapshots it, keeps the entries whose reads it keeps, re-reads the most recent
files afterwards, and marks the rest as summarized away (so a refused Edit can
say why).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

MAX_ENTRIES = 100
MAX_BYTES = 25 * 1024 * 1024
MAX_SUMMARIZED = 1_000  # paths remembered as summarized away, oldest forgotten first


def normalize_path(path: str | os.PathLike[str]) -> str:
    return os.path.normpath(os.path.abspath(os.path.expanduser(os.fspath(path))))


@dataclass
class FileState:
    content: str
    mtime: float  # the file's modification time when it was read or written
    read_at: float  # wall clock time of the read
    offset: int | None = None
    limit: int | None = None
    # The model saw a processed or partial view (a slice, or a memory file with
    # comments removed), so "unchanged since your last read" must not be claimed.
    is_partial_view: bool = False
    stale: bool = False
    # False once the read's output is no longer in the model's context (cleared by
    # microcompact or compaction): a re-read must then return the content again.
    in_context: bool = True

    @property
    def size(self) -> int:
        return max(1, len(self.content.encode("utf-8", "surrogatepass")))

    @property
    def is_full_read(self) -> bool:
        return not self.is_partial_view and self.offset in (None, 0, 1) and self.limit is None


class FileStateCache:
    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, FileState] = OrderedDict()
        self._bytes = 0
        self._listeners: list[Callable[[str], None]] = []
        # Paths read earlier whose reads a compaction summarized away (insertion ordered).
        self._summarized: dict[str, FileState] = {}

    def add_listener(self, listener: Callable[[str], None]) -> None:
        """Called with the normalized path whenever an entry is set (the file watcher uses this)."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[str], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def get(self, path: str | os.PathLike[str]) -> FileState | None:
        key = normalize_path(path)
        state = self._entries.get(key)
        if state is not None:
            self._entries.move_to_end(key)
        return state

    def peek(self, path: str | os.PathLike[str]) -> FileState | None:
        """Look without refreshing recency."""
        return self._entries.get(normalize_path(path))

    def set(self, path: str | os.PathLike[str], state: FileState) -> None:
        key = normalize_path(path)
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old.size
        self._entries[key] = state
        self._bytes += state.size
        self._summarized.pop(key, None)
        self._evict()
        for listener in self._listeners:
            listener(key)

    def delete(self, path: str | os.PathLike[str]) -> None:
        old = self._entries.pop(normalize_path(path), None)
        if old is not None:
            self._bytes -= old.size

    def update(self, path: str | os.PathLike[str], **changes: Any) -> FileState | None:
        """Change an entry's fields where it is: its recency stays and no listener hears of it.

        For bookkeeping that is not a read (microcompact marking a read as out of
        context), which must neither refresh the LRU nor be recorded as a read.
        """
        key = normalize_path(path)
        state = self._entries.get(key)
        if state is None:
            return None
        updated = replace(state, **changes)
        self._entries[key] = updated
        self._bytes += updated.size - state.size
        return updated

    def merge(self, entries: dict[str, FileState]) -> None:
        """Bring back a snapshot's entries (for /undo-compact), as older than those here now.

        An entry already here wins only when it was read after the snapshot's one;
        listeners hear of every entry taken from the snapshot.
        """
        taken = {
            key: replace(state)
            for key, state in entries.items()
            if (mine := self._entries.get(key)) is None or mine.read_at <= state.read_at
        }
        rest = [(key, state) for key, state in self._entries.items() if key not in taken]
        self._entries = OrderedDict([*taken.items(), *rest])
        for key in entries:  # read again in the conversation brought back
            self._summarized.pop(key, None)
        self._bytes = sum(state.size for state in self._entries.values())
        self._evict()
        for key in taken:
            if key in self._entries:
                for listener in self._listeners:
                    listener(key)

    def mark_stale(self, path: str | os.PathLike[str]) -> bool:
        key = normalize_path(path)
        state = self._entries.get(key)
        if state is None or state.stale:
            return False
        self._entries[key] = replace(state, stale=True)
        return True

    def __contains__(self, path: object) -> bool:
        return isinstance(path, (str, os.PathLike)) and normalize_path(path) in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def paths(self) -> list[str]:
        """Least recently used first."""
        return list(self._entries)

    def snapshot(self) -> dict[str, FileState]:
        """A copy, least recently used first, that later changes to the cache do not touch."""
        return {key: replace(state) for key, state in self._entries.items()}

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0
        self._summarized.clear()

    def mark_summarized(self, entries: Mapping[str, FileState]) -> None:
        """These files were read, but their reads are no longer in the conversation: an Edit
        must ask for a new Read and say why. A later ``set`` of a path takes its mark away.

        Each mark keeps its entry's mtime (not its content), so a conversation that brings
        the read back (``bring_back``) can trust it again as long as the file is unchanged.
        """
        for path, state in entries.items():
            key = normalize_path(path)
            if key in self._entries:
                continue
            self._summarized.pop(key, None)
            self._summarized[key] = replace(
                state, content="", is_partial_view=True, in_context=False
            )
        while len(self._summarized) > MAX_SUMMARIZED:
            del self._summarized[next(iter(self._summarized))]

    def was_summarized(self, path: str | os.PathLike[str]) -> bool:
        return normalize_path(path) in self._summarized

    def summarized(self) -> dict[str, FileState]:
        """The marks, oldest first (a copy)."""
        return dict(self._summarized)

    def bring_back(self, keys: Iterable[str]) -> list[str]:
        """Entries again for the marked ``keys`` (their reads are back in the conversation,
        e.g. after /undo-compact): as partial views, so only an unchanged mtime passes."""
        back = [key for key in keys if key in self._summarized and key not in self._entries]
        for key in back:
            self.set(key, self._summarized[key])
        return back

    def _evict(self) -> None:
        while self._entries and (
            len(self._entries) > self.max_entries or self._bytes > self.max_bytes
        ):
            if len(self._entries) == 1:
                break  # keep the newest entry even when it alone is over budget
            _, evicted = self._entries.popitem(last=False)
            self._bytes -= evicted.size
