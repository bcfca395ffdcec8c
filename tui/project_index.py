"""The project's files and directories for ``@`` completion, listed off the UI thread.

The list is built on a worker thread the first time completion asks for it (``rg --files`` when ripgrep is on the
PATH, else the pure-Python walk Grep uses; both honour .gitignore, .ignore and
.rgignore, skip hidden files, and leave out the directories ccx never walks
unasked: node_modules, .venv and the like). Every parent directory of a listed
file is listed too, with a trailing ``/``.

While the app runs, a watchdog observer on the project rebuilds the list shortly
after files are created, deleted or moved (edits change no name, so they are
not watched for). Without a watch (turned off, or the system's watch limit
reached) a list older than ``STALE_S`` is rebuilt when completion asks for it,
and the old one answers meanwhile. Matching is ``tui.path_match``'s.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from tools.glob import SKIP_DIRS
from tui.path_match import PathMatcher

log = logging.getLogger(__name__)

REBUILD_AFTER_S = 0.5  # after the last change to the names: a checkout changes thousands
STALE_S = 10.0  # without a watch, a list this old is rebuilt when asked for


def list_project_files(root: Path) -> list[str]:
    """The project's files, relative to ``root`` with ``/`` between names, ignored ones left
    out: tools.file_listing's listing (ripgrep's, else the pure-Python walk)."""
    from tools.file_listing import list_files

    return list(list_files(root))


def with_directories(files: list[str]) -> list[str]:
    """The files, leaving out those under a directory ccx never walks unasked, and every
    directory above them (``dir/``)."""
    kept: list[str] = []
    directories: set[str] = set()
    for name in files:
        parts = name.split("/")
        if SKIP_DIRS.intersection(parts[:-1]):
            continue
        kept.append(name)
        for depth in range(len(parts) - 1, 0, -1):
            directory = "/".join(parts[:depth]) + "/"
            if directory in directories:
                break
            directories.add(directory)
    return kept + sorted(directories)


class ProjectIndex:
    """The project's paths, built and rebuilt on worker threads; ``matcher`` is None until
    the first list is ready. ``on_change`` is called (on a worker thread) after each build."""

    def __init__(
        self,
        root: Path,
        *,
        watch: bool = True,
        on_change: Callable[[], None] | None = None,
        list_files: Callable[[Path], list[str]] = list_project_files,
    ) -> None:
        self.root = root
        self.watch = watch
        self.on_change = on_change
        self.list_files = list_files
        self.matcher: PathMatcher | None = None
        self.built_at = float("-inf")
        self.build_seconds = 0.0
        self._lock = threading.Lock()  # guards the fields below
        self._building = False
        self._again = False  # a change came in while building: build once more
        self._timer: threading.Timer | None = None
        self._observer: Any = None
        self._stopped = False
        self._started = False

    def start(self) -> None:
        """Build the list in the background (with ``watch``, watching first)."""
        self._started = True
        self._build_soon(0.0)

    def match(self, query: str, limit: int = 30) -> list[str] | None:
        """The best paths for ``query``; None while the first list is being built (the first
        call starts it: a session that never completes a path never lists the files)."""
        if not self._started:
            self.start()
        matcher = self.matcher
        stale = time.monotonic() - self.built_at > STALE_S
        if matcher is not None and self._observer is None and stale:
            self._build_soon(0.0)  # no watch: a stale list is rebuilt, the old one answers
        return matcher.match(query, limit) if matcher is not None else None

    def changed(self) -> None:
        """Names under the root changed: rebuild once they settle."""
        self._build_soon(REBUILD_AFTER_S)

    def move(self, root: Path) -> None:
        """List ``root`` from now on (the session moved into a worktree, or back)."""
        with self._lock:
            if self._stopped or root == self.root:
                return
            self.root, self.matcher = root, None
            observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
        if self._started:
            self._build_soon(0.0)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            if self._timer is not None:
                self._timer.cancel()
            observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()

    def _build_soon(self, delay: float) -> None:
        with self._lock:
            if self._stopped:
                return
            if self._building:
                self._again = True
                return
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(delay, self._build)
            self._timer.daemon = True
            self._timer.name = "ccx-file-index"
            self._timer.start()

    def _build(self) -> None:
        with self._lock:
            if self._stopped or self._building:
                return
            self._building, self._again = True, False
        if self.watch and self._observer is None:
            self._start_watching()  # first: a name that changes while listing is not missed
        started = time.monotonic()
        try:
            matcher = PathMatcher(with_directories(self.list_files(self.root)))
        except Exception as error:  # a listing that fails leaves the last list in place
            log.warning("listing the project's files failed: %r", error)
            matcher = None
        with self._lock:
            self._building = False
            again = self._again
            if matcher is not None:
                self.matcher = matcher
                self.built_at = time.monotonic()
                self.build_seconds = self.built_at - started
        if self.on_change is not None and matcher is not None:
            self.on_change()
        if again:
            self._build_soon(REBUILD_AFTER_S)

    def _start_watching(self) -> None:
        from watchdog.observers import Observer

        handler = _NameChanges(self.changed)
        observer = Observer()
        try:
            observer.schedule(handler, str(self.root), recursive=True)
            observer.daemon = True
            observer.start()
        except OSError as error:  # the inotify limits: rebuilt when stale instead
            log.info("not watching %s for @ completion: %s", self.root, error)
            self.watch = False
            return
        with self._lock:
            if self._stopped:
                observer.stop()
                return
            self._observer = observer


class _NameChanges(FileSystemEventHandler):
    """A file or directory created, deleted or moved (not under .git or another directory
    never walked)."""

    def __init__(self, changed: Callable[[], None]) -> None:
        super().__init__()
        self.changed = changed

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in ("created", "deleted", "moved"):
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        for path in paths:
            if path and not SKIP_DIRS.intersection(os.fsdecode(path).split(os.sep)):
                self.changed()
                return
