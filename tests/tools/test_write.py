from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot, bump_mtime
from tools import atomic_file
from tools.base import ToolContext, ToolResult
from tools.read import ReadTool
from tools.write import WriteParams, WriteTool

READ, WRITE = ReadTool(), WriteTool()


def test_schema_snapshot() -> None:
    assert_schema_matches_snapshot(WriteTool)
    assert WriteTool.is_mutating is True


def test_bad_input() -> None:
    assert isinstance(WRITE.parse({"file_path": "a"}), ToolResult)
    result = WRITE.parse({"file_path": "a", "content": ["x"]})
    assert (
        isinstance(result, ToolResult)
        and "content: Input should be a valid string" in result.output
    )
    params = WRITE.parse('{"file_path": "src/a.py", "content": ""}')
    assert isinstance(params, WriteParams)
    assert WRITE.label(params) == "Write src/a.py"


async def test_creates_file_and_parents(ctx: ToolContext, call: Call) -> None:
    result = await call(WRITE, file_path="pkg/sub/new.py", content="a = 1\nb = 2\n")
    path = ctx.cwd / "pkg" / "sub" / "new.py"
    assert not result.is_error
    assert result.output == f"Created {path} (2 lines)"
    assert path.read_text() == "a = 1\nb = 2\n"
    assert result.meta["created"] is True
    assert "+a = 1" in result.meta["diff"] and "b/pkg/sub/new.py" in result.meta["diff"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~atomic_file._UMASK
    state = ctx.file_state.peek(path)
    assert state is not None and state.content == "a = 1\nb = 2\n"
    assert state.mtime == path.stat().st_mtime and state.is_full_read


async def test_overwrite_requires_a_prior_read(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "keep.txt"
    path.write_text("original\n")
    result = await call(WRITE, file_path="keep.txt", content="new\n")
    assert result.is_error and "has not been read" in result.output
    assert path.read_text() == "original\n"


async def test_overwrite_after_read(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("one\ntwo\n")
    await call(READ, file_path="f.txt")
    result = await call(WRITE, file_path="f.txt", content="one\nTWO\nthree\n")
    assert result.output == f"Updated {path} (3 lines)"
    assert path.read_text() == "one\nTWO\nthree\n"
    assert "-two\n+TWO\n+three" in result.meta["diff"]
    # A second write needs no new Read: the cache holds what was written.
    result = await call(WRITE, file_path="f.txt", content="final\n")
    assert not result.is_error and path.read_text() == "final\n"


async def test_written_file_is_shown_on_next_read(ctx: ToolContext, call: Call) -> None:
    await call(WRITE, file_path="n.txt", content="hello\n")
    result = await call(READ, file_path="n.txt")
    assert result.output == "1\thello"


async def test_refused_when_changed_on_disk_since_read(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("v1\n")
    await call(READ, file_path="f.txt")
    path.write_text("v2 by the user\n")
    bump_mtime(path)
    result = await call(WRITE, file_path="f.txt", content="v3\n")
    assert (
        result.is_error and "modified on disk" in result.output and "Read it again" in result.output
    )
    assert path.read_text() == "v2 by the user\n"
    await call(READ, file_path="f.txt")
    result = await call(WRITE, file_path="f.txt", content="v3\n")
    assert not result.is_error and path.read_text() == "v3\n"


async def test_touched_but_identical_file_is_fine(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("same\n")
    await call(READ, file_path="f.txt")
    bump_mtime(path)
    result = await call(WRITE, file_path="f.txt", content="new\n")
    assert not result.is_error


async def test_partial_read_and_newer_mtime_is_refused(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("a\nb\nc\n")
    await call(READ, file_path="f.txt", limit=1)
    bump_mtime(path)  # content unknown beyond the slice: any change of mtime counts
    result = await call(WRITE, file_path="f.txt", content="x\n")
    assert result.is_error and "modified on disk" in result.output


async def test_stale_mark_with_changed_content_is_refused(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("a\n")
    await call(READ, file_path="f.txt")
    ctx.file_state.mark_stale(path)
    st = path.stat()
    path.write_text("b\n")
    os.utime(path, (st.st_atime, st.st_mtime))  # same mtime: only the stale flag tells
    result = await call(WRITE, file_path="f.txt", content="c\n")
    assert result.is_error


async def test_failed_write_leaves_original_and_no_temp(
    ctx: ToolContext, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("precious\n")
    await call(READ, file_path="f.txt")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    result = await call(WRITE, file_path="f.txt", content="x" * 10_000)
    assert result.is_error and "No space left" in result.output
    assert path.read_text() == "precious\n"
    assert sorted(p.name for p in ctx.cwd.iterdir()) == ["f.txt"]


async def test_interrupted_write_cleans_up(
    ctx: ToolContext, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = ctx.cwd / "f.txt"
    path.write_text("precious\n")
    await call(READ, file_path="f.txt")

    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        await call(WRITE, file_path="f.txt", content="new\n")
    assert path.read_text() == "precious\n"
    assert sorted(p.name for p in ctx.cwd.iterdir()) == ["f.txt"]


async def test_keeps_file_mode(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "run.sh"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o750)
    await call(READ, file_path="run.sh")
    await call(WRITE, file_path="run.sh", content="#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o750


async def test_keeps_crlf_line_endings(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "win.txt"
    path.write_bytes(b"a\r\nb\r\n")
    await call(READ, file_path="win.txt")
    await call(WRITE, file_path="win.txt", content="a\nb\nc\n")
    assert path.read_bytes() == b"a\r\nb\r\nc\r\n"


async def test_writes_through_a_symlink(ctx: ToolContext, call: Call) -> None:
    target = ctx.cwd / "real.txt"
    target.write_text("old\n")
    link = ctx.cwd / "link.txt"
    link.symlink_to(target)
    await call(READ, file_path="link.txt")
    result = await call(WRITE, file_path="link.txt", content="new\n")
    assert not result.is_error
    assert link.is_symlink() and target.read_text() == "new\n"


async def test_directory_and_bad_parent(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "d").mkdir()
    result = await call(WRITE, file_path="d", content="x")
    assert result.is_error and "is a directory" in result.output
    (ctx.cwd / "plain").write_text("file\n")
    result = await call(WRITE, file_path="plain/child.txt", content="x")
    assert result.is_error and "Cannot write" in result.output


def test_atomic_write_helper_replaces_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "a.bin"
    path.write_bytes(b"1" * 100)
    atomic_file.atomic_write(path, b"2")
    assert path.read_bytes() == b"2"
    assert os.listdir(tmp_path) == ["a.bin"]


async def test_a_nul_byte_in_the_path_is_an_error_result(ctx: ToolContext, call: Call) -> None:
    result = await call(WRITE, file_path="a\0b.py", content="x")
    assert result.is_error and "NUL byte" in result.output
    assert list(ctx.cwd.iterdir()) == []
