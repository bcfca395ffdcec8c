from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.file_state import FileState, FileStateCache, normalize_path


def state(content: str = "x", **kw: object) -> FileState:
    return FileState(content=content, mtime=1.0, read_at=2.0, **kw)  # type: ignore[arg-type]


def test_lru_by_entry_count() -> None:
    cache = FileStateCache(max_entries=3)
    for name in ("/a", "/b", "/c"):
        cache.set(name, state())
    assert cache.get("/a") is not None  # refreshes /a: /b is now the oldest
    cache.set("/d", state())
    assert cache.paths() == ["/c", "/a", "/d"]
    assert "/b" not in cache and len(cache) == 3


def test_peek_does_not_refresh() -> None:
    cache = FileStateCache(max_entries=2)
    cache.set("/a", state())
    cache.set("/b", state())
    assert cache.peek("/a") is not None
    cache.set("/c", state())
    assert "/a" not in cache and "/b" in cache


def test_lru_by_total_size() -> None:
    cache = FileStateCache(max_bytes=10)
    cache.set("/a", state("aaaa"))
    cache.set("/b", state("bbbb"))
    assert cache.total_bytes == 8
    cache.set("/c", state("cccc"))
    assert cache.paths() == ["/b", "/c"] and cache.total_bytes == 8
    cache.set("/b", state("b"))  # replacing an entry updates the total
    assert cache.total_bytes == 5


def test_single_oversized_entry_is_kept() -> None:
    cache = FileStateCache(max_bytes=4)
    cache.set("/a", state("a"))
    cache.set("/big", state("x" * 100))
    assert cache.paths() == ["/big"] and cache.total_bytes == 100


def test_size_counts_utf8_bytes() -> None:
    assert state("é").size == 2
    assert state("").size == 1  # an empty file still takes a slot


def test_normalized_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cache = FileStateCache()
    cache.set("sub/../a.txt", state())
    assert cache.peek(tmp_path / "a.txt") is not None
    assert str(tmp_path / "a.txt") in cache
    assert cache.paths() == [str(tmp_path / "a.txt")]
    monkeypatch.setenv("HOME", str(tmp_path))
    assert normalize_path("~/a.txt") == str(tmp_path / "a.txt")
    assert 42 not in cache


def test_snapshot_is_a_detached_copy() -> None:
    cache = FileStateCache()
    cache.set("/a", state("one"))
    cache.set("/b", state("two"))
    cache.get("/a")
    snap = cache.snapshot()
    assert list(snap) == ["/b", "/a"]
    cache.mark_stale("/a")
    cache.set("/c", state())
    cache.clear()
    assert snap["/a"].stale is False and set(snap) == {"/a", "/b"}
    assert len(cache) == 0 and cache.total_bytes == 0


def test_mark_stale_once() -> None:
    cache = FileStateCache()
    cache.set("/a", state())
    assert cache.mark_stale("/a") is True
    assert cache.mark_stale("/a") is False
    assert cache.mark_stale("/missing") is False
    entry = cache.peek("/a")
    assert entry is not None and entry.stale


def test_delete_and_listeners() -> None:
    cache = FileStateCache()
    seen: list[str] = []
    cache.add_listener(seen.append)
    cache.set("/x/../a", state("abc"))
    assert seen == ["/a"]
    cache.delete("/a")
    cache.delete("/never")
    assert len(cache) == 0 and cache.total_bytes == 0


@pytest.mark.parametrize(
    ("kw", "full"),
    [
        ({}, True),
        ({"offset": 1}, True),
        ({"offset": 0}, True),
        ({"offset": 2}, False),
        ({"limit": 10}, False),
        ({"is_partial_view": True}, False),
    ],
)
def test_is_full_read(kw: dict[str, object], full: bool) -> None:
    assert state(**kw).is_full_read is full


def test_normalize_path_is_absolute() -> None:
    assert os.path.isabs(normalize_path("relative/file.py"))


def test_update_changes_an_entry_in_place_silently() -> None:
    """Microcompact's bookkeeping is not a read: no LRU move, no listener (no transcript record)."""
    cache = FileStateCache()
    heard: list[str] = []
    cache.add_listener(heard.append)
    cache.set("/a", state("aaaa"))
    cache.set("/b", state())
    heard.clear()
    updated = cache.update("/a", in_context=False, content="a")
    assert updated is not None and updated.in_context is False
    assert cache.paths() == ["/a", "/b"] and heard == []
    assert cache.peek("/a") == updated and cache.total_bytes == 2
    assert cache.update("/missing", in_context=False) is None


def test_merge_brings_back_a_snapshot_and_keeps_newer_reads() -> None:
    cache = FileStateCache()
    cache.set("/a", state("old a"))
    cache.set("/b", state("old b"))
    snap = cache.snapshot()
    cache.clear()
    cache.set("/b", FileState(content="new b", mtime=3.0, read_at=9.0))  # read again since
    cache.set("/c", state("c"))
    heard: list[str] = []
    cache.add_listener(heard.append)
    cache.merge(snap)
    assert cache.paths() == ["/a", "/b", "/c"]  # the snapshot's entries are the older ones
    assert cache.peek("/a").content == "old a"  # type: ignore[union-attr]
    assert cache.peek("/b").content == "new b"  # type: ignore[union-attr]
    assert heard == ["/a"]  # the watcher and the transcript hear of what came back
    assert cache.total_bytes == len("old a") + len("new b") + 1


def test_merge_prefers_the_snapshot_on_equal_read_times_and_evicts() -> None:
    """An entry re-added from the same read (compaction's restore) gives way to the original."""
    cache = FileStateCache(max_entries=2)
    snap = {"/a": state("original"), "/b": state("b"), "/c": state("c")}
    cache.set("/a", state("restored", is_partial_view=True))
    cache.merge(snap)
    assert cache.paths() == ["/b", "/c"] and len(cache) == 2
    cache = FileStateCache()
    cache.set("/a", state("restored", is_partial_view=True))
    cache.merge({"/a": state("original")})
    assert cache.peek("/a").content == "original"  # type: ignore[union-attr]


def test_summarized_marks_go_with_a_new_read_a_merge_or_a_clear() -> None:
    cache = FileStateCache()
    cache.set("/kept", state())
    # A path with an entry is not summarized.
    cache.mark_summarized({"/a": state(), "/b": state(), "/kept": state()})
    assert list(cache.summarized()) == [normalize_path("/a"), normalize_path("/b")]
    assert cache.was_summarized("/a") and not cache.was_summarized("/kept")
    cache.set("/a", state())  # read again
    assert not cache.was_summarized("/a") and cache.was_summarized("/b")
    cache.merge({normalize_path("/b"): state()})  # /undo-compact brings its read back
    assert cache.summarized() == {}
    cache.mark_summarized({"/c": state()})
    cache.clear()
    assert not cache.was_summarized("/c")


def test_a_mark_keeps_the_mtime_not_the_content_and_brings_back_a_partial_view() -> None:
    cache = FileStateCache()
    cache.mark_summarized({"/a": state("the whole file", offset=None)})
    assert cache.bring_back([normalize_path("/a"), normalize_path("/never")]) == [
        normalize_path("/a")
    ]
    back = cache.peek("/a")
    assert back is not None and back.mtime == 1.0 and back.content == ""
    assert back.is_partial_view and not back.is_full_read and not back.in_context
    assert not cache.was_summarized("/a")


def test_summarized_marks_are_bounded_oldest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tools.file_state.MAX_SUMMARIZED", 3)
    cache = FileStateCache()
    cache.mark_summarized({f"/m{i}": state() for i in range(5)})
    assert list(cache.summarized()) == [normalize_path(f"/m{i}") for i in (2, 3, 4)]
