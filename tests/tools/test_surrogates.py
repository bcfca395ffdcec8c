"""Text that is not UTF-8: one escaping rule, and file tools that still reach such files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.tools.conftest import Call
from tools.base import ToolContext
from tools.edit import EditTool
from tools.glob import GlobTool
from tools.grep import GrepTool
from tools.read import ReadTool
from tools.surrogates import (
    REPLACEMENT,
    escape_text,
    escape_value,
    existing_name,
    is_encodable,
    unescape_name,
)

BAD_NAME = b"bad\xff\xfe.txt"  # not UTF-8: Python sees it as "bad\udcff\udcfe.txt"
SHOWN = "bad\\xff\\xfe.txt"  # how ccx shows it: backslash, x, two hex digits per byte


@pytest.fixture
def bad_file(ctx: ToolContext) -> Path:
    path = Path(os.fsdecode(os.path.join(os.fsencode(ctx.cwd), BAD_NAME)))
    path.write_text("the needle is here\n")
    return path


def encodes(value: object) -> bool:
    return is_encodable(json.dumps(value, ensure_ascii=False))


def test_bytes_of_names_become_visible_escapes_and_other_lone_surrogates_fffd() -> None:
    assert escape_text(os.fsdecode(BAD_NAME)) == SHOWN
    assert escape_text("a\ud800b") == f"a{REPLACEMENT}b"  # a high surrogate alone
    assert escape_text("a\udc41b") == f"a{REPLACEMENT}b"  # a low one that is no byte's
    assert escape_text("\ud83d\ude00") == "\U0001f600"  # a pair is the character it encodes
    assert escape_text("end\ud83d") == f"end{REPLACEMENT}"


def test_valid_text_comes_back_as_the_same_object() -> None:
    text = "naïve café — 日本語 😀"
    assert escape_text(text) is text
    value = {"a": [text, {"b": 1, "c": None}], "d": True}
    assert escape_value(value) is value


def test_escape_value_copies_only_what_changed() -> None:
    clean = {"type": "text", "text": "fine"}
    value = [clean, {"type": "tool_use", "input": {"command": "echo \udcff", "n": 1}}]
    escaped = escape_value(value)
    assert escaped is not value and escaped[0] is clean
    assert escaped[1] == {"type": "tool_use", "input": {"command": "echo \\xff", "n": 1}}
    assert value[1]["input"]["command"] == "echo \udcff"  # the original is not changed
    assert encodes(escaped) and not encodes(value)
    assert escape_value({"\udcff": 1}) == {"\\xff": 1}


def test_an_escaped_name_finds_its_file_but_a_real_name_wins(tmp_path: Path) -> None:
    assert unescape_name(SHOWN) == os.fsdecode(BAD_NAME)
    assert unescape_name("plain.txt") is None and unescape_name("a\\x41") is None  # ASCII stays
    bad = os.fsdecode(os.path.join(os.fsencode(tmp_path), BAD_NAME))
    shown = str(tmp_path / SHOWN)
    assert existing_name(shown) == shown  # nothing there yet
    Path(bad).write_text("x")
    assert existing_name(shown) == bad
    Path(shown).write_text("a file really named with backslashes")
    assert existing_name(shown) == shown


async def test_glob_lists_the_file_in_escaped_form(call: Call, bad_file: Path) -> None:
    result = await call(GlobTool(), pattern="*.txt")
    assert not result.is_error
    assert result.output == str(bad_file.parent / SHOWN)
    assert encodes(result.output)


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
async def test_grep_finds_the_file_and_prints_it_escaped(
    call: Call, bad_file: Path, mode: str
) -> None:
    result = await call(GrepTool(engine="python"), pattern="needle", output_mode=mode)
    assert not result.is_error and SHOWN in result.output and encodes(result.output)
    assert os.fsdecode(BAD_NAME) not in result.output


async def test_grep_searches_a_path_given_in_escaped_form(call: Call, bad_file: Path) -> None:
    result = await call(
        GrepTool(engine="python"), pattern="needle", path=SHOWN, output_mode="content"
    )
    assert not result.is_error and "the needle is here" in result.output


async def test_read_opens_the_file_from_its_escaped_name(
    call: Call, ctx: ToolContext, bad_file: Path
) -> None:
    result = await call(ReadTool(), file_path=SHOWN)
    assert not result.is_error, result.output
    assert result.output == "1\tthe needle is here"
    assert ctx.file_state.peek(bad_file) is not None  # the real file is what was read


async def test_read_of_an_escaped_name_with_no_file_says_it_is_not_utf8(
    call: Call, bad_file: Path
) -> None:
    result = await call(ReadTool(), file_path="gone\\xff.txt")
    assert result.is_error
    assert "does not exist" in result.output and "not UTF-8" in result.output
    assert encodes(result.output)


async def test_edit_after_read_reaches_the_same_file_by_its_escaped_name(
    call: Call, bad_file: Path
) -> None:
    assert not (await call(ReadTool(), file_path=SHOWN)).is_error
    result = await call(EditTool(), file_path=SHOWN, old_string="needle", new_string="pin")
    assert not result.is_error, result.output
    assert bad_file.read_text() == "the pin is here\n"
    assert not (bad_file.parent / SHOWN).exists(), "no new file named with the escapes"
