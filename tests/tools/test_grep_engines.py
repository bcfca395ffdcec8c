"""Grep's engines underneath the tool: the pure-Python search's building blocks, and rg's process.

The tool's output, pinned for both engines, is in test_grep.py.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest

from tests.tools.conftest import Call
from tools import grep_python, grep_rg, rg_binary
from tools.grep import GrepTool
from tools.grep_python import GrepQuery, split_globs

# --- the pure-Python engine's building blocks ---


def test_split_globs() -> None:
    assert split_globs("*.py") == ("*.py",)
    assert split_globs("*.py,*.md  !vendor/**") == ("*.py", "*.md", "!vendor/**")
    assert split_globs("*.{ts,tsx},*.js") == ("*.{ts,tsx},*.js",)
    assert split_globs(None) == ()


def test_python_engine_respects_git_info_exclude_and_parent_ignores(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git" / "info").mkdir(parents=True)
    (repo / ".git" / "info" / "exclude").write_text("excluded.txt\n")
    (tmp_path / ".gitignore").write_text("*.txt\n")  # above the repository: does not apply
    (repo / "sub").mkdir()
    (repo / ".gitignore").write_text("sub/skip.md\n")
    for name in ("excluded.txt", "kept.txt", "sub/skip.md", "sub/keep.md"):
        (repo / name).write_text("hit\n")
    query = GrepQuery(pattern="hit", root=repo / "sub", cwd=repo)
    assert [Path(h.path).name for h in grep_python.search(query).files] == ["keep.md"]
    query = GrepQuery(pattern="hit", root=repo, cwd=repo)
    found = sorted(Path(h.path).name for h in grep_python.search(query).files)
    assert found == ["keep.md", "kept.txt"]


def test_python_engine_skips_symlinks_and_unreadable(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("hit\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    locked = tmp_path / "locked.txt"
    locked.write_text("hit\n")
    locked.chmod(0)
    try:
        query = GrepQuery(pattern="hit", root=tmp_path, cwd=tmp_path)
        names = sorted(Path(h.path).name for h in grep_python.search(query).files)
        expected = ["locked.txt", "real.txt"] if os.access(locked, os.R_OK) else ["real.txt"]
        assert names == expected
    finally:
        locked.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_python_engine_stops_when_cancelled(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"f{i}.txt").write_text("hit\n")
    cancel = threading.Event()
    cancel.set()
    query = GrepQuery(pattern="hit", root=tmp_path, cwd=tmp_path)
    assert grep_python.search(query, cancel).files == []


async def test_python_engine_timeout_is_an_error(
    grep_tree: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[threading.Event] = []

    def slow_search(query: GrepQuery, cancel: threading.Event) -> None:
        seen.append(cancel)
        cancel.wait(5)

    monkeypatch.setattr(grep_python, "search", slow_search)
    result = await call(GrepTool(engine="python", timeout_s=0.1), pattern="needle")
    assert result.is_error and "timed out" in result.output
    assert seen and seen[0].is_set()  # the worker thread was told to stop


# --- the rg process is never left behind ---


@pytest.fixture
def slow_rg(tmp_path: Path) -> tuple[str, Path]:
    """A fake `rg` that records its pid and hangs."""
    pid_file = tmp_path / "rg.pid"
    script = tmp_path / "fake-rg"
    script.write_text(
        f"#!{sys.executable}\nimport os, time\n"
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(30)\n"
    )
    script.chmod(0o755)
    return str(script), pid_file


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _pid_of(pid_file: Path) -> int:
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            return int(pid_file.read_text())
        await asyncio.sleep(0.01)
    raise AssertionError("the fake rg never started")


async def test_rg_is_killed_on_timeout(tmp_path: Path, slow_rg: tuple[str, Path]) -> None:
    rg, pid_file = slow_rg
    query = GrepQuery(pattern="x", root=tmp_path, cwd=tmp_path)
    with pytest.raises(TimeoutError):
        await grep_rg.search(query, rg, timeout=0.3)
    assert not _alive(await _pid_of(pid_file))


async def test_rg_is_killed_on_cancel(tmp_path: Path, slow_rg: tuple[str, Path]) -> None:
    rg, pid_file = slow_rg
    query = GrepQuery(pattern="x", root=tmp_path, cwd=tmp_path)
    task = asyncio.create_task(grep_rg.search(query, rg))
    pid = await _pid_of(pid_file)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _alive(pid)


async def test_tool_reports_rg_timeout(
    grep_tree: Path, call: Call, slow_rg: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rg_binary, "find_rg", lambda: slow_rg[0])
    result = await call(GrepTool(engine="rg", timeout_s=0.3), pattern="needle")
    assert result.is_error and "timed out after 0.3 s" in result.output


# --- the pure-Python engine streams: memory does not grow with a file's size ---


def test_python_engine_memory_stays_bounded_on_a_big_file(tmp_path: Path) -> None:
    line = b"2026-12-05T00:00:00Z INFO worker-3 GET /api/items status=200 took=12ms\n"
    with open(tmp_path / "big.log", "wb") as f:
        for i in range(20):
            f.write(line * 10_000)  # 0.7 MB
            f.write(b"ERROR needle %d\n" % i)
    size_mb = (tmp_path / "big.log").stat().st_size / 2**20
    assert size_mb > 13
    for mode in ("content", "count", "files_with_matches"):
        query = GrepQuery(pattern="needle", root=tmp_path, cwd=tmp_path, mode=mode, before=2)  # type: ignore[arg-type]
        tracemalloc.start()
        try:
            (hits,) = grep_python.search(query).files
            peak = tracemalloc.get_traced_memory()[1] / 2**20
        finally:
            tracemalloc.stop()
        assert peak < 6, (mode, peak)  # a few blocks of 1 MB, not the file's 14 MB
        assert hits.count == (1 if mode == "files_with_matches" else 20)
    assert hits.lines == []
    query = GrepQuery(pattern="needle 19", root=tmp_path, cwd=tmp_path, mode="content", before=1)
    (hits,) = grep_python.search(query).files
    assert [(n, is_match) for n, _, is_match in hits.lines] == [(200_019, False), (200_020, True)]


def test_python_engine_stops_collecting_at_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_python, "MAX_COLLECTED_LINES", 50)
    (tmp_path / "a.txt").write_text("hit\n" * 1000)
    (tmp_path / "b.txt").write_text("hit\n")
    query = GrepQuery(pattern="hit", root=tmp_path, cwd=tmp_path, mode="content")
    outcome = grep_python.search(query)
    assert outcome.truncated and [len(h.lines) for h in outcome.files] == [50]


def test_python_engine_overlong_lines_and_utf16(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_python, "BLOCK_BYTES", 1000)
    monkeypatch.setattr(grep_python, "MAX_LINE_BYTES", 5000)
    (tmp_path / "long.txt").write_bytes(b"x" * 20_000 + b" needle\nnext line needle\n")
    (tmp_path / "wide16.txt").write_bytes(
        "\ufeff".encode("utf-16-le") + ("a line\n" * 500 + "needle é\n").encode("utf-16-le")
    )
    query = GrepQuery(pattern="needle", root=tmp_path, cwd=tmp_path, mode="content")
    found = {Path(h.path).name: h for h in grep_python.search(query).files}
    # An overlong line is searched in pieces: the match is found on the right line.
    assert [(n, m) for n, _, m in found["long.txt"].lines] == [(1, True), (2, True)]
    assert found["long.txt"].lines[1][1] == "next line needle"
    assert found["wide16.txt"].lines == [(501, "needle é", True)]


def test_python_engine_binary_found_in_a_later_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_python, "BLOCK_BYTES", 64)
    (tmp_path / "late.bin").write_bytes(b"needle\n" * 100 + b"\0tail\n")
    query = GrepQuery(pattern="needle", root=tmp_path, cwd=tmp_path, mode="count")
    assert grep_python.search(query).files == []
