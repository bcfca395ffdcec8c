from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot, bump_mtime
from tools.base import ToolContext, ToolResult
from tools.edit import EditParams, EditTool, match_quote_style
from tools.file_state import FileState
from tools.read import ReadTool

READ, EDIT = ReadTool(), EditTool()

SOURCE = """\
def greet(name):
    message = "hello " + name
    print(message)
    return message


def main():
    greet("world")
"""


@pytest.fixture
async def source(ctx: ToolContext, call: Call) -> Path:
    path = ctx.cwd / "app.py"
    path.write_text(SOURCE)
    await call(READ, file_path="app.py")
    return path


def test_schema_snapshot() -> None:
    assert_schema_matches_snapshot(EditTool)
    assert EditTool.is_mutating is True


def test_bad_input() -> None:
    result = EDIT.parse({"file_path": "a", "old_string": "x"})
    assert isinstance(result, ToolResult) and "new_string: Field required" in result.output
    result = EDIT.parse(
        {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": "maybe"}
    )
    assert isinstance(result, ToolResult) and "replace_all" in result.output
    params = EDIT.parse({"file_path": "a.py", "old_string": "x", "new_string": "y"})
    assert isinstance(params, EditParams) and params.replace_all is False
    assert EDIT.label(params) == "Edit a.py"


async def test_unique_edit(source: Path, ctx: ToolContext, call: Call) -> None:
    result = await call(
        EDIT,
        file_path="app.py",
        old_string="    print(message)\n",
        new_string="    log(message)\n    print(message)\n",
    )
    assert not result.is_error
    assert source.read_text() == SOURCE.replace(
        "    print(message)\n", "    log(message)\n    print(message)\n"
    )
    lines = result.output.splitlines()
    assert lines[0] == f"Edited {source} (1 replacement). Lines 1-8 now read:"
    assert lines[1:4] == [
        "1\tdef greet(name):",
        '2\t    message = "hello " + name',
        "3\t    log(message)",
    ]
    assert result.meta["replacements"] == 1
    assert "+    log(message)" in result.meta["diff"]
    assert result.meta["display"] == "Edited app.py (+1 -0)"
    state = ctx.file_state.peek(source)
    assert state is not None and state.content == source.read_text()
    assert state.mtime == source.stat().st_mtime and state.is_full_read
    # A second edit works without reading again, and a later Read shows the new content.
    result = await call(EDIT, file_path="app.py", old_string="log(", new_string="debug(")
    assert not result.is_error
    result = await call(READ, file_path="app.py")
    assert "debug(message)" in result.output


async def test_snippet_is_a_window_around_the_change(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "many.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 101)))
    await call(READ, file_path="many.txt")
    result = await call(EDIT, file_path="many.txt", old_string="line 50\n", new_string="fifty\n")
    assert result.output.splitlines()[1:] == [
        "46\tline 46",
        "47\tline 47",
        "48\tline 48",
        "49\tline 49",
        "50\tfifty",
        "51\tline 51",
        "52\tline 52",
        "53\tline 53",
        "54\tline 54",
    ]


async def test_requires_prior_read(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "x.py"
    path.write_text("a = 1\n")
    result = await call(EDIT, file_path="x.py", old_string="a = 1", new_string="a = 2")
    assert result.is_error and "has not been read" in result.output


async def test_a_read_summarized_away_is_named_as_such(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "x.py"
    path.write_text("a = 1\n")
    # What a compaction leaves for a read it summarized away.
    ctx.file_state.mark_summarized({path: FileState("a = 1\n", path.stat().st_mtime, 0.0)})
    params = EditParams(file_path="x.py", old_string="a = 1", new_string="a = 2")
    for problem in (EDIT.precheck(params, ctx), await call(EDIT, **params.model_dump())):
        assert problem is not None and problem.is_error
        assert str(path) in problem.output and "summarized away" in problem.output
    assert path.read_text() == "a = 1\n"
    await call(READ, file_path="x.py")
    assert not (await call(EDIT, **params.model_dump())).is_error
    assert path.read_text() == "a = 2\n"


async def test_stale_after_external_change(source: Path, ctx: ToolContext, call: Call) -> None:
    source.write_text(SOURCE.replace("world", "there"))
    bump_mtime(source)
    result = await call(EDIT, file_path="app.py", old_string="hello", new_string="hi")
    assert (
        result.is_error and "modified on disk" in result.output and "Read it again" in result.output
    )
    assert "there" in source.read_text() and "hello" in source.read_text()
    await call(READ, file_path="app.py")
    result = await call(EDIT, file_path="app.py", old_string="hello", new_string="hi")
    assert not result.is_error


async def test_identical_strings(source: Path, call: Call) -> None:
    result = await call(EDIT, file_path="app.py", old_string="greet", new_string="greet")
    assert result.is_error and "identical" in result.output


async def test_not_found(source: Path, call: Call) -> None:
    result = await call(EDIT, file_path="app.py", old_string="goodbye", new_string="x")
    assert result.is_error and "was not found" in result.output
    assert source.read_text() == SOURCE


async def test_not_found_but_close_modulo_whitespace(source: Path, call: Call) -> None:
    result = await call(
        EDIT,
        file_path="app.py",
        old_string='  message  = "hello " + name\n\tprint(message)',
        new_string="x",
    )
    assert (
        result.is_error and "except for whitespace" in result.output and "line 2" in result.output
    )


async def test_line_number_prefixes_are_explained(source: Path, call: Call) -> None:
    result = await call(
        EDIT,
        file_path="app.py",
        old_string="3\t    print(message)\n     4\t    return message",
        new_string="x",
    )
    assert result.is_error and "line-number prefixes" in result.output


async def test_non_unique_needs_context_or_replace_all(source: Path, call: Call) -> None:
    result = await call(EDIT, file_path="app.py", old_string="message", new_string="msg")
    assert result.is_error
    assert "occurs 3 times" in result.output and "lines 2, 3, 4" in result.output
    assert "replace_all" in result.output
    assert source.read_text() == SOURCE
    result = await call(
        EDIT, file_path="app.py", old_string="message", new_string="msg", replace_all=True
    )
    assert not result.is_error and "3 replacements (the first shown)" in result.output
    assert "message" not in source.read_text() and source.read_text().count("msg") == 3


async def test_missing_file(ctx: ToolContext, call: Call) -> None:
    result = await call(EDIT, file_path="nope.py", old_string="a", new_string="b")
    assert result.is_error and "does not exist" in result.output and "Write" in result.output


async def test_empty_old_string_creates_a_new_file(ctx: ToolContext, call: Call) -> None:
    result = await call(EDIT, file_path="new/mod.py", old_string="", new_string="x = 1\n")
    path = ctx.cwd / "new" / "mod.py"
    assert not result.is_error and result.output == f"Created {path} (1 line)"
    assert path.read_text() == "x = 1\n"
    assert ctx.file_state.peek(path) is not None


async def test_empty_old_string_on_existing_content(source: Path, call: Call) -> None:
    result = await call(EDIT, file_path="app.py", old_string="", new_string="x")
    assert result.is_error and "already has content" in result.output


async def test_empty_old_string_fills_an_empty_file(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "e.txt").write_text("")
    await call(READ, file_path="e.txt")
    result = await call(EDIT, file_path="e.txt", old_string="", new_string="filled\n")
    assert not result.is_error and (ctx.cwd / "e.txt").read_text() == "filled\n"


async def test_crlf_file_stays_crlf(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "win.txt"
    path.write_bytes(b"first\r\nsecond\r\nthird\r\n")
    await call(READ, file_path="win.txt")
    result = await call(
        EDIT, file_path="win.txt", old_string="first\nsecond\n", new_string="one\ntwo\n2b\n"
    )
    assert not result.is_error
    assert path.read_bytes() == b"one\r\ntwo\r\n2b\r\nthird\r\n"
    assert "3\t2b" in result.output and "\r" not in result.output


async def test_mixed_line_endings_keep_each_line(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "mixed.txt"
    path.write_bytes(b"a\nb\r\nc\r\nd\n")
    await call(READ, file_path="mixed.txt")
    result = await call(EDIT, file_path="mixed.txt", old_string="b\nc", new_string="B\nC")
    assert not result.is_error
    assert path.read_bytes() == b"a\nB\r\nC\r\nd\n"


async def test_straight_quotes_match_curly_file(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "doc.md"
    path.write_text("She said \u201cit\u2019s fine\u201d today.\n")
    await call(READ, file_path="doc.md")
    result = await call(
        EDIT, file_path="doc.md", old_string='said "it\'s fine"', new_string='said "it\'s great"'
    )
    assert not result.is_error
    assert path.read_text() == "She said \u201cit\u2019s great\u201d today.\n"


async def test_curly_quotes_match_straight_file(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "code.py"
    path.write_text('x = "value"\n')
    await call(READ, file_path="code.py")
    result = await call(
        EDIT,
        file_path="code.py",
        old_string="x = \u201cvalue\u201d",
        new_string="x = \u201cother\u201d",
    )
    assert not result.is_error
    assert path.read_text() == 'x = "other"\n'


def test_quote_style_helper() -> None:
    assert (
        match_quote_style("\"a\" and 'b'", "\u201cq\u201d \u2018r\u2019")
        == "\u201ca\u201d and \u2018b\u2019"
    )
    assert match_quote_style("don't", "\u2018x\u2019") == "don\u2019t"
    assert match_quote_style("\u201ca\u201d", '"x"') == '"a"'
    assert match_quote_style('"a"', "no quotes") == '"a"'


async def test_failed_write_keeps_original(
    source: Path, ctx: ToolContext, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_replace(src: str, dst: str) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", broken_replace)
    result = await call(EDIT, file_path="app.py", old_string="hello", new_string="bye")
    assert result.is_error and "Input/output error" in result.output
    assert source.read_text() == SOURCE
    assert sorted(p.name for p in ctx.cwd.iterdir()) == ["app.py"]
    state = ctx.file_state.peek(source)
    assert state is not None and state.content == SOURCE


async def test_binary_and_directory(ctx: ToolContext, call: Call) -> None:
    (ctx.cwd / "b.bin").write_bytes(b"ab\x00cd")
    result = await call(EDIT, file_path="b.bin", old_string="ab", new_string="xy")
    assert result.is_error and "binary" in result.output
    (ctx.cwd / "d").mkdir()
    result = await call(EDIT, file_path="d", old_string="a", new_string="b")
    assert result.is_error and "directory" in result.output


async def test_undecodable_bytes_survive_an_edit(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "latin.txt"
    path.write_bytes(b"caf\xe9 = 1\nname = 'x'\n")
    await call(READ, file_path="latin.txt")
    result = await call(
        EDIT, file_path="latin.txt", old_string="name = 'x'", new_string="name = 'y'"
    )
    assert not result.is_error
    assert path.read_bytes() == b"caf\xe9 = 1\nname = 'y'\n"
    state = ctx.file_state.peek(path)
    assert state is not None and state.content == "caf\ufffd = 1\nname = 'y'\n"
    # The cache holds what Read would show, so the next edit sees the file as fresh.
    result = await call(EDIT, file_path="latin.txt", old_string="= 1", new_string="= 2")
    assert not result.is_error and path.read_bytes() == b"caf\xe9 = 2\nname = 'y'\n"


async def test_a_nul_byte_in_the_path_is_an_error_result(call: Call) -> None:
    result = await call(EDIT, file_path="a\0b.py", old_string="x", new_string="y")
    assert result.is_error and "NUL byte" in result.output
