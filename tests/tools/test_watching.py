from __future__ import annotations

import errno
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from watchdog.observers import Observer

from tests.tools.conftest import Call
from tests.tools.helpers import bump_mtime
from tools.base import ToolContext
from tools.edit import EditTool
from tools.file_state import FileState, FileStateCache, normalize_path
from tools.read import ReadTool
from tools.watching import FileWatcher

READ, EDIT = ReadTool(), EditTool()


def remember(cache: FileStateCache, path: Path) -> None:
    cache.set(path, FileState(path.read_text(), path.stat().st_mtime, time.time()))


def poll(
    watcher: FileWatcher, until: Callable[[list[str]], bool], timeout: float = 5.0
) -> list[str]:
    """Drain repeatedly, collecting notices, until `until(all notices)` holds or time runs out."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen += watcher.drain_notices()
        if until(seen):
            return seen
        time.sleep(0.02)
    return seen


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def mentions(path: Path) -> Callable[[list[str]], bool]:
    return lambda notices: any(str(path) in n for n in notices)


@pytest.fixture
def watcher(ctx: ToolContext) -> Iterator[FileWatcher]:
    w = FileWatcher(ctx.file_state, debounce_s=0.05)
    w.start()
    yield w
    w.stop()


def watched(w: FileWatcher, directory: Path) -> bool:
    return normalize_path(directory) in w._watched


# --- without a running observer: stat only ---


def test_not_started_still_checks_by_stat(tmp_path: Path) -> None:
    cache = FileStateCache()
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    watcher = FileWatcher(cache)
    assert watcher.mode == "off"
    remember(cache, path)
    assert watcher.drain_notices() == []
    path.write_text("two\n")
    bump_mtime(path)
    assert watcher.drain_notices() == [
        f"Note: {path} was changed on disk after you last read it (by the user or another "
        "program). Read it again before editing it."
    ]
    state = cache.peek(path)
    assert state is not None and state.stale
    assert watcher.drain_notices() == []  # said once


def test_deleted_file_notice(tmp_path: Path) -> None:
    cache = FileStateCache()
    path = tmp_path / "gone.txt"
    path.write_text("x\n")
    watcher = FileWatcher(cache)
    remember(cache, path)
    path.unlink()
    notices = watcher.drain_notices()
    assert len(notices) == 1 and "was deleted" in notices[0] and str(path) in notices[0]


def test_entries_already_in_the_cache_are_tracked(tmp_path: Path) -> None:
    cache = FileStateCache()
    path = tmp_path / "early.txt"
    path.write_text("x\n")
    remember(cache, path)
    watcher = FileWatcher(cache)
    bump_mtime(path)
    assert len(watcher.drain_notices()) == 1


def test_evicted_entries_are_forgotten(tmp_path: Path) -> None:
    cache = FileStateCache(max_entries=1)
    watcher = FileWatcher(cache)
    first, second = tmp_path / "1.txt", tmp_path / "2.txt"
    first.write_text("1")
    second.write_text("2")
    remember(cache, first)
    remember(cache, second)  # evicts the first
    bump_mtime(first)
    assert watcher.drain_notices() == []
    assert normalize_path(first) not in watcher._tracked.get(normalize_path(tmp_path), set())


def test_stop_without_start_is_harmless(tmp_path: Path) -> None:
    watcher = FileWatcher(FileStateCache())
    watcher.stop()
    assert watcher.drain_notices() == []


def test_a_session_starts_watching_at_its_second_drain(tmp_path: Path) -> None:
    """The first drain comes as the first request is built: nothing starts then, and a change
    is still caught by stat; the second starts the observer, which then watches."""
    before = set(threading.enumerate())
    cache = FileStateCache()
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    remember(cache, path)
    watcher = FileWatcher(cache, debounce_s=0.0)
    watcher.start_at_second_drain()
    try:
        bump_mtime(path)
        assert len(watcher.drain_notices()) == 1  # by stat
        assert watcher.mode == "off" and set(threading.enumerate()) <= before
        remember(cache, path)
        assert watcher.drain_notices() == []
        assert watcher.mode == "native"
        assert wait_for(lambda: watched(watcher, tmp_path))
        path.write_text("two\n")
        bump_mtime(path)
        assert mentions(path)(poll(watcher, mentions(path)))
    finally:
        watcher.stop()
    assert wait_for(lambda: set(threading.enumerate()) <= before, timeout=3)


def test_stopped_before_its_second_drain_it_never_starts(tmp_path: Path) -> None:
    watcher = FileWatcher(FileStateCache())
    watcher.start_at_second_drain()
    watcher.drain_notices()
    watcher.stop()
    watcher.drain_notices()
    assert watcher.mode == "off"


# --- the native observer ---


async def test_external_change_is_noticed(
    ctx: ToolContext, call: Call, watcher: FileWatcher
) -> None:
    assert watcher.mode == "native"
    path = ctx.cwd / "app.py"
    path.write_text("x = 1\n")
    await call(READ, file_path="app.py")
    assert wait_for(lambda: watched(watcher, ctx.cwd))
    watcher.drain_notices()  # the one-off stat check after the watch started
    with open(path, "a") as f:  # an external edit, with a real (not faked) mtime
        f.write("y = 2\n")
    notices = poll(watcher, mentions(path))
    assert notices == [
        f"Note: {path} was changed on disk after you last read it (by the user or another "
        "program). Read it again before editing it."
    ]
    result = await call(EDIT, file_path="app.py", old_string="x = 1", new_string="x = 3")
    assert result.is_error and "Read it again" in result.output


async def test_own_edit_is_not_a_notice(ctx: ToolContext, call: Call, watcher: FileWatcher) -> None:
    mine, theirs = ctx.cwd / "mine.py", ctx.cwd / "theirs.py"
    mine.write_text("a = 1\n")
    theirs.write_text("b = 1\n")
    await call(READ, file_path="mine.py")
    await call(READ, file_path="theirs.py")
    assert wait_for(lambda: watched(watcher, ctx.cwd))
    result = await call(EDIT, file_path="mine.py", old_string="a = 1", new_string="a = 2")
    assert not result.is_error
    theirs.write_text("b = 2\n")  # events arrive in order: once this is seen, so was the edit
    notices = poll(watcher, mentions(theirs))
    assert mentions(theirs)(notices)
    assert not mentions(mine)(notices)
    state = ctx.file_state.peek(mine)
    assert state is not None and not state.stale


async def test_rapid_writes_give_one_notice(
    ctx: ToolContext, call: Call, watcher: FileWatcher
) -> None:
    path = ctx.cwd / "busy.txt"
    path.write_text("0\n")
    await call(READ, file_path="busy.txt")
    assert wait_for(lambda: watched(watcher, ctx.cwd))
    watcher.drain_notices()
    for i in range(1, 6):
        path.write_text(f"{i}\n")
    notices = poll(watcher, mentions(path))
    # Keep draining a little longer: the later events must not produce a second notice.
    notices += poll(watcher, lambda n: False, timeout=0.3)
    assert len([n for n in notices if str(path) in n]) == 1


async def test_deletion_is_noticed(ctx: ToolContext, call: Call, watcher: FileWatcher) -> None:
    path = ctx.cwd / "tmp.txt"
    path.write_text("x\n")
    await call(READ, file_path="tmp.txt")
    assert wait_for(lambda: watched(watcher, ctx.cwd))
    watcher.drain_notices()
    path.unlink()
    notices = poll(watcher, mentions(path))
    assert len(notices) == 1 and "deleted" in notices[0]


def test_change_before_the_watch_started_is_caught(tmp_path: Path) -> None:
    cache = FileStateCache()
    path = tmp_path / "early.txt"
    path.write_text("x\n")
    remember(cache, path)
    bump_mtime(path)  # changed while nothing watched yet
    watcher = FileWatcher(cache)
    watcher.start()
    try:
        assert wait_for(lambda: watched(watcher, tmp_path))
        assert len(poll(watcher, mentions(path))) == 1
    finally:
        watcher.stop()


class SpyObserver:
    """Wraps the native observer and records every schedule call."""

    calls: list[tuple[str, bool]]

    def __init__(self) -> None:
        self.inner = Observer()
        self.calls = []

    def schedule(self, handler: Any, path: str, *, recursive: bool = False, **kw: Any) -> Any:
        self.calls.append((path, recursive))
        return self.inner.schedule(handler, path, recursive=recursive, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_only_directories_of_read_files_are_watched(tmp_path: Path) -> None:
    spy = SpyObserver()
    cache = FileStateCache()
    watcher = FileWatcher(cache, native_observer=lambda: spy)  # type: ignore[arg-type,return-value]
    watcher.start()
    try:
        for rel in ("src/a.py", "src/b.py", "docs/x.md", "node_modules/pkg/i.js", ".git/config"):
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x\n")
            remember(cache, path)
        assert wait_for(lambda: len(watcher._watched) == 2)
        assert sorted(spy.calls) == [
            (str(tmp_path / "docs"), False),
            (str(tmp_path / "src"), False),
        ]
        # Files in unwatched directories are still checked, by stat.
        bump_mtime(tmp_path / "node_modules/pkg/i.js")
        notices = watcher.drain_notices()
        assert any("node_modules/pkg/i.js" in n for n in notices)
    finally:
        watcher.stop()


# --- falling back to polling ---


class NoInotifyObserver(SpyObserver):
    """A native observer whose every watch hits the inotify watch limit."""

    def schedule(self, handler: Any, path: str, *, recursive: bool = False, **kw: Any) -> Any:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")


def test_falls_back_to_polling_when_inotify_is_exhausted(tmp_path: Path) -> None:
    cache = FileStateCache()
    watcher = FileWatcher(
        cache,
        poll_interval_s=0.05,
        native_observer=lambda: NoInotifyObserver(),  # type: ignore[arg-type,return-value]
    )
    watcher.start()
    try:
        path = tmp_path / "p.txt"
        path.write_text("1\n")
        remember(cache, path)
        assert wait_for(lambda: watcher.mode == "polling" and watched(watcher, tmp_path))
        watcher.drain_notices()
        path.write_text("2\n")
        bump_mtime(path)
        assert len(poll(watcher, mentions(path))) == 1
    finally:
        watcher.stop()


def test_falls_back_to_polling_when_the_observer_cannot_start(tmp_path: Path) -> None:
    class Broken:
        def start(self) -> None:
            raise OSError(errno.EMFILE, "too many inotify instances")

    watcher = FileWatcher(FileStateCache(), native_observer=Broken)  # type: ignore[arg-type]
    watcher.start()
    try:
        assert watcher.mode == "polling"
    finally:
        watcher.stop()


def test_stop_leaves_no_threads(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    cache = FileStateCache()
    watcher = FileWatcher(cache)
    watcher.start()
    for i in range(3):
        directory = tmp_path / f"d{i}"
        directory.mkdir()
        (directory / "f.txt").write_text("x")
        remember(cache, directory / "f.txt")
    assert wait_for(lambda: len(watcher._watched) == 3)
    watcher.stop()
    assert watcher.mode == "off"
    assert wait_for(lambda: set(threading.enumerate()) <= before, timeout=3)
    watcher.start()  # can be started again
    watcher.stop()
