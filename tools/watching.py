"""FileWatcher: tell the model when a file it has read changes on disk behind its back.

watchdog watches the directories of the files in the FileStateCache (one
non-recursive watch per directory, added as the cache gains entries). Its
callbacks only record paths under a lock; the agent loop calls drain_notices()
on its own thread before each model call, which compares each recorded file's
mtime with the cache entry (so the tools' own writes, which update the entry,
do not count), marks changed entries stale and returns one notice per file.

Watches are added on a small worker thread so a Read never waits for them.
A session starts watching at its second drain (``start_at_second_drain``): the
first comes as its first request is built, which watching (watchdog's import,
inotify, two threads) need not delay.
Directories not (yet) watched are checked by stat at each drain, and so is
everything when the watcher was never started. If the inotify limits are hit,
the watcher falls back to watchdog's PollingObserver.
"""

from __future__ import annotations

import errno
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from tools.file_state import FileStateCache, normalize_path

if TYPE_CHECKING:  # watchdog is imported when watching starts: a -p run never needs it
    from watchdog.events import FileSystemEvent
    from watchdog.observers.api import BaseObserver, ObservedWatch

log = logging.getLogger(__name__)

# Never watched, nor anything below them: they churn (installs, git operations) and are
# rarely edited by hand. Files read there are still checked by stat at each drain.
UNWATCHED_DIR_NAMES = frozenset({".git", "node_modules", ".venv"})
_LIMIT_ERRNOS = frozenset({errno.ENOSPC, errno.EMFILE, errno.ENFILE})
Mode = Literal["off", "native", "polling"]


class FileWatcher:
    def __init__(
        self,
        cache: FileStateCache,
        debounce_s: float = 0.05,
        *,
        poll_interval_s: float = 1.0,
        native_observer: Callable[[], BaseObserver] | None = None,  # watchdog's Observer
    ) -> None:
        self.cache = cache
        self.debounce_s = debounce_s
        self.poll_interval_s = poll_interval_s
        self._native_observer = native_observer
        self.mode: Mode = "off"
        self._lock = threading.Lock()  # guards the four fields below
        self._tracked: dict[str, set[str]] = {}  # directory -> files of the cache in it
        self._changed: dict[str, float] = {}  # file -> monotonic time of its last event
        self._watched: set[str] = set()  # directories with a working watch
        self._running = False
        self._observer: BaseObserver | None = None
        self._watches: dict[str, ObservedWatch] = {}  # owned by the worker thread
        self._jobs: queue.SimpleQueue[tuple[str, str] | None] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._handler = _Handler(self._on_event)
        self._drains_to_start: int | None = None  # start_at_second_drain: drains left
        for path in cache.paths():
            self._on_cache_set(path)
        cache.add_listener(self._on_cache_set)

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        if self._worker is not None:
            return
        try:
            if self._native_observer is None:
                from watchdog.observers import Observer

                self._native_observer = Observer
            observer = self._native_observer()
            observer.start()
            self.mode = "native"
        except OSError as exc:
            log.info("native file watching unavailable (%s); polling instead", exc)
            observer = self._polling()
        self._observer = observer
        with self._lock:
            self._running = True
            directories = list(self._tracked)
        self._worker = threading.Thread(target=self._work, name="ccx-file-watcher", daemon=True)
        self._worker.start()
        for directory in directories:
            self._jobs.put(("watch", directory))

    def start_at_second_drain(self) -> None:
        """Start when ``drain_notices`` is called the second time. The first call comes as
        the session's first request is built; until the start every tracked file is
        checked by stat at each drain, as when watching is off."""
        if self._worker is None:
            self._drains_to_start = 2

    def stop(self) -> None:
        self._drains_to_start = None
        worker = self._worker
        if worker is None:
            return
        self._jobs.put(None)
        worker.join(timeout=5)
        self._worker = None
        with self._lock:
            self._running = False
            self._watched.clear()
        if self._observer is not None:
            self._stop_observer(self._observer)
            self._observer = None
        self._watches.clear()
        self.mode = "off"

    # --- the agent loop's side -----------------------------------------------------------

    def drain_notices(self) -> list[str]:
        """Notices for files changed or deleted on disk since they were read; marks them stale."""
        if self._drains_to_start is not None:
            self._drains_to_start -= 1
            if self._drains_to_start == 0:
                self._drains_to_start = None
                self.start()
        now = time.monotonic()
        with self._lock:
            ready = [p for p, t in self._changed.items() if now - t >= self.debounce_s]
            for path in ready:
                del self._changed[path]
            unwatched = [
                path
                for directory, paths in self._tracked.items()
                if not self._running or directory not in self._watched
                for path in paths
            ]
        notices = []
        for path in sorted(set(ready).union(unwatched)):
            notice = self._check(path)
            if notice:
                notices.append(notice)
        return notices

    def _check(self, path: str) -> str | None:
        entry = self.cache.peek(path)
        if entry is None:
            self._forget(path)  # evicted or cleared: no longer the model's concern
            return None
        if entry.stale:
            return None
        try:
            mtime = os.stat(path).st_mtime
        except FileNotFoundError:
            self.cache.mark_stale(path)
            return (
                f"Note: {path} was deleted after you last read it (by the user or another program)."
            )
        except OSError:
            return None
        if mtime == entry.mtime:
            return None
        self.cache.mark_stale(path)
        return (
            f"Note: {path} was changed on disk after you last read it (by the user or another "
            "program). Read it again before editing it."
        )

    def _on_cache_set(self, path: str) -> None:
        """Cache listener, on the tools' thread: must stay cheap (it runs inside every Read)."""
        directory = os.path.dirname(path)
        with self._lock:
            paths = self._tracked.get(directory)
            if paths is not None:
                paths.add(path)
                return
            self._tracked[directory] = {path}
            running = self._running
        if running and not _excluded(directory):
            self._jobs.put(("watch", directory))

    def _forget(self, path: str) -> None:
        directory = os.path.dirname(path)
        with self._lock:
            paths = self._tracked.get(directory)
            if paths is None:
                return
            paths.discard(path)
            if paths:
                return
            del self._tracked[directory]
            self._watched.discard(directory)
            running = self._running
        if running:
            self._jobs.put(("unwatch", directory))

    # --- watchdog's side -----------------------------------------------------------------

    def _on_event(self, event: FileSystemEvent) -> None:
        now = time.monotonic()
        paths = [event.src_path, getattr(event, "dest_path", "")]
        with self._lock:
            for raw in paths:
                if not raw:
                    continue
                path = normalize_path(os.fsdecode(raw))
                if event.is_directory:
                    for file in self._tracked.get(path, ()):  # a watched directory went away
                        self._changed[file] = now
                elif path in self._tracked.get(os.path.dirname(path), ()):
                    self._changed[path] = now

    # --- the worker thread ---------------------------------------------------------------

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            action, directory = job
            try:
                if action == "watch":
                    self._watch(directory)
                else:
                    self._unwatch(directory)
            except Exception:  # a watcher problem must never take the session down
                log.exception("file watcher: %s %s failed", action, directory)

    def _watch(self, directory: str) -> None:
        with self._lock:
            if directory not in self._tracked or directory in self._watches:
                return
        observer = self._observer
        assert observer is not None
        try:
            watch = observer.schedule(
                self._handler,  # type: ignore[arg-type]  # watchdog only calls its dispatch
                directory,
                recursive=False,
                event_filter=_events(),
            )
        except OSError as exc:
            if exc.errno in _LIMIT_ERRNOS and self.mode == "native":
                log.info("inotify limit reached (%s); switching to polling", exc)
                self._switch_to_polling()
                self._watch(directory)
            return  # e.g. the directory is gone: drain_notices checks its files by stat
        self._watches[directory] = watch
        with self._lock:
            self._watched.add(directory)
            # A change between the read and this watch produced no event: check once by stat.
            for path in self._tracked.get(directory, ()):
                self._changed.setdefault(path, 0.0)

    def _unwatch(self, directory: str) -> None:
        watch = self._watches.pop(directory, None)
        if watch is not None and self._observer is not None:
            try:
                self._observer.unschedule(watch)
            except (KeyError, OSError):
                pass

    def _switch_to_polling(self) -> None:
        old = self._observer
        with self._lock:
            self._watched.clear()
        directories = list(self._watches)
        self._watches.clear()
        self._observer = self._polling()
        if old is not None:
            self._stop_observer(old)
        for directory in directories:
            self._watch(directory)

    def _polling(self) -> BaseObserver:
        from watchdog.observers.polling import PollingObserver

        observer = PollingObserver(timeout=self.poll_interval_s)
        observer.start()
        self.mode = "polling"
        return observer

    @staticmethod
    def _stop_observer(observer: BaseObserver) -> None:
        try:
            observer.stop()
            if observer.is_alive():
                observer.join(timeout=5)
        except Exception:
            log.exception("file watcher: stopping the observer failed")


class _Handler:
    """What watchdog calls with each event (its handlers' one method, ``dispatch``)."""

    def __init__(self, callback: Callable[[FileSystemEvent], None]) -> None:
        self._callback = callback

    def dispatch(self, event: FileSystemEvent) -> None:
        self._callback(event)


def _events() -> list[type[FileSystemEvent]]:
    from watchdog.events import (
        DirDeletedEvent,
        DirMovedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
    )

    return [
        FileCreatedEvent,
        FileModifiedEvent,
        FileDeletedEvent,
        FileMovedEvent,
        DirDeletedEvent,
        DirMovedEvent,
    ]


def _excluded(directory: str) -> bool:
    return not UNWATCHED_DIR_NAMES.isdisjoint(directory.split(os.sep))
