from __future__ import annotations

import base64
import os
import time
import tracemalloc
from pathlib import Path

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot, bump_mtime
from tools.base import ToolContext, ToolResult
from tools.file_state import FileStateCache
from tools.read import ReadParams, ReadTool

READ = ReadTool()
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 20
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 20


def test_schema_snapshot() -> None:
    assert_schema_matches_snapshot(ReadTool)
    assert ReadTool.is_mutating is False
    assert "offset" in ReadTool.description()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("{not json", "not valid JSON"),
        ('["a"]', "must be a JSON object"),
        ({}, "file_path: Field required"),
        ({"file_path": 3}, "file_path: Input should be a valid string"),
        ({"file_path": "a", "offset": "ten"}, "offset: Input should be a valid integer"),
        ({"file_path": "a", "offset": -1}, "offset: Input should be greater than or equal to 0"),
        ({"file_path": "a", "limit": 0}, "limit: Input should be greater than or equal to 1"),
        ({"file_path": "a", "lines": 3}, "lines: Extra inputs are not permitted"),
    ],
)
def test_bad_input_is_a_clear_error(raw: object, expected: str) -> None:
    result = READ.parse(raw)
    assert isinstance(result, ToolResult) and result.is_error
    assert expected in result.output


def test_null_and_numeric_strings_are_accepted() -> None:
    params = READ.parse('{"file_path": "a.py", "offset": null, "limit": "20"}')
    assert isinstance(params, ReadParams)
    assert (params.offset, params.limit) == (None, 20)


def test_label() -> None:
    params = READ.parse({"file_path": "src/app.py", "offset": 10, "limit": 5})
    assert isinstance(params, ReadParams)
    assert READ.label(params) == "Read src/app.py (lines 10-14)"


async def test_numbered_lines_and_file_state(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "a.py"
    path.write_text("import os\n\nprint(os.sep)\n")
    result = await call(READ, file_path="a.py")
    assert not result.is_error
    assert result.output == "1\timport os\n2\t\n3\tprint(os.sep)"
    assert result.meta["lines_read"] == 3 and result.meta["total_lines"] == 3
    assert result.meta["display"] == "Read 3 lines"
    state = ctx.file_state.peek(path)
    assert state is not None
    assert state.content == path.read_text()
    assert state.mtime == path.stat().st_mtime
    assert state.is_full_read and not state.is_partial_view
    assert abs(state.read_at - time.time()) < 5


async def test_slice_with_offset_and_limit(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "n.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await call(READ, file_path=str(path), offset=4, limit=3)
    assert result.output.splitlines()[:3] == ["4\tline 4", "5\tline 5", "6\tline 6"]
    assert "lines 4-6 of 10" in result.output and "offset=7" in result.output
    state = ctx.file_state.peek(path)
    assert state is not None and state.is_partial_view and not state.is_full_read
    assert (state.offset, state.limit, state.content) == (4, 3, "line 4\nline 5\nline 6")


async def test_default_limit_is_2000_lines(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "long.txt"
    path.write_text("x\n" * 2500)
    result = await call(READ, file_path="long.txt")
    lines = result.output.splitlines()
    assert lines[1999] == "2000\tx"
    assert "of 2500" in result.output and "offset=2001" in result.output
    state = ctx.file_state.peek(path)
    assert state is not None and state.is_partial_view  # the model has not seen it all


async def test_limit_covering_the_whole_file_is_a_full_view(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "s.txt"
    path.write_text("a\nb\n")
    await call(READ, file_path="s.txt", offset=1, limit=50)
    state = ctx.file_state.peek(path)
    assert state is not None and state.is_full_read and state.content == "a\nb\n"


async def test_long_lines_are_cut(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "wide.txt").write_text("a" * 5000 + "\nshort\n")
    result = await call(READ, file_path="wide.txt")
    first, second = result.output.splitlines()
    assert first.startswith("1\t" + "a" * 2000 + "…") and "cut at 2000" in first
    assert "a" * 2001 not in first
    assert second == "2\tshort"


async def test_offset_past_the_end(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "f.txt").write_text("one\ntwo\n")
    result = await call(READ, file_path="f.txt", offset=9)
    assert result.is_error and "has 2 lines" in result.output


async def test_missing_file_suggests_close_names(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "config.yaml").write_text("a: 1\n")
    result = await call(READ, file_path="config.yml")
    assert result.is_error
    assert "does not exist" in result.output and str(ctx.cwd / "config.yaml") in result.output
    result = await call(READ, file_path="nowhere/x.txt")
    assert result.is_error and "does not exist either" in result.output


async def test_directory_points_to_glob(ctx: ToolContext, call: Call) -> None:
    result = await call(READ, file_path=".")
    assert result.is_error and "directory" in result.output and "Glob" in result.output


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("blob.dat", b"abc\x00def"),
        ("tool.exe", b"plain text really"),
        ("doc.docx", b"PK\x03\x04 zip"),
    ],
)
async def test_binary_files_are_refused(
    ctx: ToolContext, call: Call, name: str, data: bytes
) -> None:
    (ctx.cwd / name).write_bytes(data)
    result = await call(READ, file_path=name)
    assert result.is_error and "binary" in result.output
    assert ctx.file_state.peek(ctx.cwd / name) is None


async def test_empty_file(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "empty.txt").write_bytes(b"")
    result = await call(READ, file_path="empty.txt")
    assert not result.is_error and "exists but is empty" in result.output
    state = ctx.file_state.peek(ctx.cwd / "empty.txt")
    assert state is not None and state.content == "" and state.is_full_read


async def test_image_block(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "shot.png").write_bytes(PNG)
    result = await call(READ, file_path="shot.png")
    assert not result.is_error
    assert result.output == [
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(PNG).decode(),
            },
        }
    ]


async def test_image_type_comes_from_its_bytes(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "really-a-jpeg.png").write_bytes(JPEG)
    result = await call(READ, file_path="really-a-jpeg.png")
    assert isinstance(result.output, list)
    assert result.output[0]["source"]["media_type"] == "image/jpeg"
    (ctx.cwd / "fake.gif").write_text("not an image")
    result = await call(READ, file_path="fake.gif")
    assert result.is_error and "does not contain" in result.output


async def test_oversized_image_is_refused(ctx: ToolContext, call: Call) -> None:
    with open(ctx.cwd / "huge.png", "wb") as f:
        f.truncate(6 * 1024 * 1024)
    result = await call(READ, file_path="huge.png")
    assert result.is_error and "5 MB" in result.output


async def test_large_file_without_range_is_refused(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "big.log"
    path.write_text("0123456789abcdef\n" * 20_000)  # 340 KB
    result = await call(READ, file_path="big.log")
    assert result.is_error
    assert "offset and limit" in result.output and "Grep" in result.output
    assert "332 KiB" in result.output and "20,000 lines" in result.output
    result = await call(READ, file_path="big.log", offset=19_999)
    assert result.output.splitlines() == [
        "19999\t0123456789abcdef",
        "20000\t0123456789abcdef",
    ]


async def test_too_many_tokens_asks_for_a_smaller_limit(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "dense.txt").write_text(("y" * 1900 + "\n") * 100)  # 190 KB, ~48k tokens
    result = await call(READ, file_path="dense.txt")
    assert result.is_error and "smaller limit" in result.output and "25,000" in result.output
    result = await call(READ, file_path="dense.txt", limit=20)
    assert not result.is_error


async def test_crlf_and_undecodable_bytes(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "win.txt").write_bytes(b"one\r\ntwo \xff\xfe end\r\n")
    result = await call(READ, file_path="win.txt")
    assert result.output == "1\tone\n2\ttwo \ufffd\ufffd end"


# --- the unchanged-file stub ---


@pytest.fixture
def read_once(ctx: ToolContext) -> Path:
    path = ctx.cwd / "mod.py"
    path.write_text("x = 1\n")
    return path


async def test_unchanged_full_reread_gets_a_stub(
    read_once: Path, ctx: ToolContext, call: Call
) -> None:
    await call(READ, file_path="mod.py")
    result = await call(READ, file_path="mod.py")
    assert result.meta["unchanged"] is True
    assert result.output.startswith("File unchanged since your last Read of it")
    assert "x = 1" not in result.output
    result = await call(READ, file_path="mod.py", offset=1)  # offset 1 is still a full read
    assert result.meta.get("unchanged") is True


async def test_partial_reread_gets_content(read_once: Path, ctx: ToolContext, call: Call) -> None:
    await call(READ, file_path="mod.py")
    result = await call(READ, file_path="mod.py", limit=1)
    assert "x = 1" in result.output


async def test_after_a_partial_read_a_full_read_gets_content(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "two.py").write_text("a = 1\nb = 2\n")
    await call(READ, file_path="two.py", limit=1)
    result = await call(READ, file_path="two.py")
    assert "b = 2" in result.output and "unchanged" not in result.meta


@pytest.mark.parametrize("change", ["stale", "not_in_context", "mtime"])
async def test_no_stub_when_the_earlier_result_is_not_current(
    read_once: Path, ctx: ToolContext, call: Call, change: str
) -> None:
    await call(READ, file_path="mod.py")
    state = ctx.file_state.peek(read_once)
    assert state is not None
    if change == "stale":
        ctx.file_state.mark_stale(read_once)
    elif change == "not_in_context":
        state.in_context = False
    else:
        bump_mtime(read_once)
    result = await call(READ, file_path="mod.py")
    assert "x = 1" in result.output and "unchanged" not in result.meta
    refreshed = ctx.file_state.peek(read_once)
    assert refreshed is not None and not refreshed.stale and refreshed.in_context


# --- a 100 MB file ---

LINE_WIDTH = 64
LINES_PER_CHUNK = 16_384


def _huge_line(n: int) -> str:
    """Line n (1-based) of the huge file: its line number modulo the chunk, padded."""
    return f"row {(n - 1) % LINES_PER_CHUNK:08d} ".ljust(LINE_WIDTH - 1, ".")


@pytest.fixture(scope="module")
def huge_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("huge") / "huge.log"
    chunk = "".join(_huge_line(n) + "\n" for n in range(1, LINES_PER_CHUNK + 1)).encode()
    with open(path, "wb") as f:
        for _ in range(100):  # 100 x 1 MiB
            f.write(chunk)
    return path


async def test_100mb_file_slice_streams(huge_file: Path) -> None:
    ctx = ToolContext(cwd=huge_file.parent, file_state=FileStateCache())
    total = 100 * LINES_PER_CHUNK
    plain = await READ.run(ReadParams(file_path=str(huge_file)), ctx)
    assert plain.is_error and "100.0 MB" in plain.output and "offset and limit" in plain.output

    tracemalloc.start()
    try:
        result = await READ.run(
            ReadParams(file_path=str(huge_file), offset=1_000_000, limit=3), ctx
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"peak {peak} bytes: the file was not streamed"
    lines = result.output.splitlines()
    assert lines[:3] == [f"{n}\t{_huge_line(n)}" for n in range(1_000_000, 1_000_003)]
    assert f"of {total}" in result.output
    assert result.meta["total_lines"] == total

    tail = await READ.run(ReadParams(file_path=str(huge_file), offset=total - 1), ctx)
    assert tail.output.splitlines() == [f"{n}\t{_huge_line(n)}" for n in (total - 1, total)]
    state = ctx.file_state.peek(huge_file)
    assert state is not None and state.is_partial_view and state.offset == total - 1


async def test_big_file_slice_with_unterminated_last_line(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "big.txt"
    path.write_text("z" * 100 + "\n" + ("w" * 99 + "\n") * 3000 + "tail")
    result = await call(READ, file_path="big.txt", offset=3000, limit=5)
    assert result.meta["total_lines"] == 3002
    assert result.output.splitlines() == [
        f"3000\t{'w' * 99}",
        f"3001\t{'w' * 99}",
        "3002\ttail",
    ]
    huge_line = ctx.cwd / "oneline.txt"
    huge_line.write_text("q" * 400_000 + "\nend\n")
    result = await call(READ, file_path="oneline.txt", offset=1, limit=2)
    first, second = result.output.splitlines()
    assert len(first) < 2100 and "cut at 2000" in first and second == "2\tend"


# --- the 16 KiB file whose read time bench/speed_targets.py measures ---


def sixteen_kib_module(path: Path) -> Path:
    path.write_text(
        "".join(f"value_{n} = compute({n}, 'abcdefghij')\n" for n in range(400))[:16384]
    )
    return path


async def test_a_16_kib_module_reads_whole(tmp_path: Path) -> None:
    path = sixteen_kib_module(tmp_path / "f.py")
    ctx = ToolContext(cwd=tmp_path, file_state=FileStateCache())
    result = await READ.run(ReadParams(file_path=str(path)), ctx)
    assert not result.is_error
    lines = path.read_text().splitlines()
    assert result.output.splitlines()[-1].endswith("\t" + lines[-1])
    assert len(result.output.splitlines()) == len(lines)


def test_open_fds_are_not_leaked(tmp_path: Path) -> None:
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc")
    import asyncio

    ctx = ToolContext(cwd=tmp_path, file_state=FileStateCache())
    (tmp_path / "a.txt").write_text("a\n" * 10)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        asyncio.run(READ.run(ReadParams(file_path="a.txt", limit=2), ctx))
    assert len(os.listdir("/proc/self/fd")) <= before + 2


async def test_a_nul_byte_in_the_path_is_an_error_result(call: Call) -> None:
    result = await call(READ, file_path="src/a\0b.py")
    assert result.is_error and "NUL byte" in result.output
