"""Read of a Jupyter notebook shows its cells; NotebookEdit replaces, inserts and deletes one."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot, bump_mtime
from tools.base import ToolContext, ToolResult
from tools.notebook_edit import NotebookEditParams, NotebookEditTool
from tools.read import ReadTool

READ, NB = ReadTool(), NotebookEditTool()


def _notebook(minor: int = 5) -> dict[str, Any]:
    cells: list[dict[str, Any]] = [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "Text"]},
        {
            "cell_type": "code",
            "execution_count": 3,
            "id": "calc",
            "metadata": {},
            "outputs": [
                {"name": "stdout", "output_type": "stream", "text": ["hello\n"]},
                {
                    "data": {"text/plain": ["42"], "image/png": "iVBOR"},
                    "execution_count": 3,
                    "metadata": {},
                    "output_type": "execute_result",
                },
            ],
            "source": ["print('hello')\n", "42"],
        },
        {
            "cell_type": "code",
            "execution_count": 4,
            "metadata": {},
            "outputs": [
                {
                    "ename": "ValueError",
                    "evalue": "bad",
                    "output_type": "error",
                    "traceback": ["\x1b[0;31mTraceback\x1b[0m", "ValueError: bad"],
                }
            ],
            "source": "raise ValueError('bad')",
        },
    ]
    if minor < 5:
        for cell in cells:
            cell.pop("id", None)
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": minor}


@pytest.fixture
async def notebook(ctx: ToolContext, call: Call) -> Path:
    path = ctx.cwd / "analysis.ipynb"
    path.write_text(json.dumps(_notebook(), indent=1) + "\n")
    result = await call(READ, file_path="analysis.ipynb")
    assert not result.is_error, result.output
    return path


def _cells(path: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(path.read_text())["cells"]
    return cells


def test_schema_snapshot() -> None:
    assert_schema_matches_snapshot(NotebookEditTool)
    assert NotebookEditTool.is_mutating is True


def test_parse_and_label() -> None:
    params = NB.parse({"notebook_path": "/w/a.ipynb", "new_source": "x"})
    assert isinstance(params, NotebookEditParams) and params.edit_mode == "replace"
    bad = NB.parse({"notebook_path": "a.ipynb", "new_source": "x", "edit_mode": "move"})
    assert isinstance(bad, ToolResult) and "edit_mode" in bad.output
    bad = NB.parse({"notebook_path": "a.ipynb", "new_source": "x", "cell_type": "raw"})
    assert isinstance(bad, ToolResult) and "cell_type" in bad.output
    params = NB.parse({"notebook_path": "/w/a.ipynb", "new_source": "", "cell_id": "c1"})
    assert isinstance(params, NotebookEditParams)
    assert NB.label(params, "/w") == "Edit a.ipynb (cell c1)"


async def test_read_shows_cells_with_ids_and_outputs(notebook: Path, call: Call) -> None:
    notebook.touch()
    bump_mtime(notebook)  # not the unchanged stub: read afresh
    result = await call(READ, file_path=str(notebook))
    text = result.output
    assert '<cell id="intro"><cell_type>markdown</cell_type># Title\nText</cell id="intro">' in text
    assert '<cell id="calc">print(\'hello\')\n42</cell id="calc">\nhello\n\n42' in text
    # a cell without an id is named by its place; ANSI colours are gone from tracebacks
    assert '<cell id="cell-2">raise ValueError' in text
    assert "ValueError: bad\nTraceback\nValueError: bad" in text
    assert "\x1b" not in text and "iVBOR" not in text
    assert result.display == "Read 3 cells"


async def test_replace_clears_outputs_and_keeps_format(
    notebook: Path, ctx: ToolContext, call: Call
) -> None:
    result = await call(NB, notebook_path=str(notebook), cell_id="calc", new_source="print(1)")
    assert not result.is_error, result.output
    cells = _cells(notebook)
    assert cells[1]["source"] == "print(1)"
    assert cells[1]["outputs"] == [] and cells[1]["execution_count"] is None
    assert cells[0]["source"] == ["# Title\n", "Text"]  # the others untouched
    text = notebook.read_text()
    assert text.endswith("}\n") and '\n "cells": [' in text  # Jupyter's one-space indent
    assert "calc" in result.output and result.meta["diff"]
    # the tool's own write counts as read: a second change needs no new Read
    again = await call(NB, notebook_path=str(notebook), cell_id="calc", new_source="print(2)")
    assert not again.is_error, again.output


async def test_replace_by_position_and_change_type(notebook: Path, call: Call) -> None:
    result = await call(
        NB, notebook_path=str(notebook), cell_id="cell-2", new_source="Notes", cell_type="markdown"
    )
    assert not result.is_error, result.output
    cell = _cells(notebook)[2]
    assert cell["cell_type"] == "markdown" and "outputs" not in cell


async def test_insert_after_a_cell_and_first(notebook: Path, call: Call) -> None:
    result = await call(
        NB,
        notebook_path=str(notebook),
        cell_id="intro",
        new_source="x = 1",
        cell_type="code",
        edit_mode="insert",
    )
    assert not result.is_error, result.output
    cells = _cells(notebook)
    new_id = result.meta["cell_id"]
    assert cells[1]["id"] == new_id and cells[1]["source"] == "x = 1"
    assert new_id in result.output and len({c.get("id") for c in cells}) == len(cells)
    first = await call(
        NB,
        notebook_path=str(notebook),
        new_source="# Top",
        cell_type="markdown",
        edit_mode="insert",
    )
    assert not first.is_error and _cells(notebook)[0]["source"] == "# Top"


async def test_insert_needs_cell_type(notebook: Path, call: Call) -> None:
    before = notebook.read_bytes()
    result = await call(NB, notebook_path=str(notebook), new_source="x", edit_mode="insert")
    assert result.is_error and "cell_type" in result.output
    assert notebook.read_bytes() == before


async def test_delete_and_unknown_cell(notebook: Path, call: Call) -> None:
    result = await call(
        NB, notebook_path=str(notebook), cell_id="calc", new_source="", edit_mode="delete"
    )
    assert not result.is_error and [c.get("id") for c in _cells(notebook)] == ["intro", None]
    before = notebook.read_bytes()
    missing = await call(NB, notebook_path=str(notebook), cell_id="nope", new_source="x")
    assert missing.is_error and '"nope"' in missing.output
    assert notebook.read_bytes() == before


async def test_old_notebook_without_ids_gets_none(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "old.ipynb"
    path.write_text(json.dumps(_notebook(minor=4)))
    await call(READ, file_path=str(path))
    result = await call(
        NB, notebook_path=str(path), new_source="y", cell_type="code", edit_mode="insert"
    )
    assert not result.is_error
    cells = _cells(path)
    assert "id" not in cells[0] and result.meta["cell_id"] == "cell-0"


async def test_refuses_unread_changed_and_non_notebooks(
    ctx: ToolContext, notebook: Path, call: Call
) -> None:
    unread = ctx.cwd / "other.ipynb"
    unread.write_text(json.dumps(_notebook()))
    params = NB.parse({"notebook_path": str(unread), "cell_id": "calc", "new_source": "x"})
    assert isinstance(params, NotebookEditParams)
    early = NB.precheck(params, ctx)
    assert early is not None and "has not been read" in early.output

    data = json.loads(notebook.read_text())
    data["cells"][0]["source"] = "changed by the user"
    notebook.write_text(json.dumps(data))
    bump_mtime(notebook)
    stale = await call(NB, notebook_path=str(notebook), cell_id="calc", new_source="x")
    assert stale.is_error and "modified on disk" in stale.output
    assert json.loads(notebook.read_text())["cells"][0]["source"] == "changed by the user"

    text_file = ctx.cwd / "notes.txt"
    text_file.write_text("hi")
    wrong = await call(NB, notebook_path=str(text_file), new_source="x")
    assert wrong.is_error and "not a Jupyter notebook" in wrong.output


async def test_broken_notebooks_get_clear_errors(ctx: ToolContext, call: Call) -> None:
    torn = ctx.cwd / "torn.ipynb"
    torn.write_text('{"cells": [')
    result = await call(READ, file_path=str(torn))
    assert result.is_error and "not valid notebook JSON" in result.output
    # its JSON is still readable by lines
    raw = await call(READ, file_path=str(torn), offset=1, limit=5)
    assert not raw.is_error and '{"cells": [' in raw.output

    binary = ctx.cwd / "bin.ipynb"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    result = await call(READ, file_path=str(binary))
    assert result.is_error and "notebook" in result.output

    not_nb = ctx.cwd / "list.ipynb"
    not_nb.write_text("[1, 2]")
    result = await call(READ, file_path=str(not_nb))
    assert result.is_error and "no list of cells" in result.output


async def test_huge_outputs_are_cut(ctx: ToolContext, call: Call) -> None:
    path = ctx.cwd / "loud.ipynb"
    data = _notebook()
    data["cells"][1]["outputs"] = [
        {"name": "stdout", "output_type": "stream", "text": "line\n" * 20_000}
    ]
    path.write_text(json.dumps(data))
    result = await call(READ, file_path=str(path))
    assert not result.is_error and "more characters of output not shown" in result.output
    assert len(result.output) < 20_000
    assert os.path.getsize(path) > 100_000
