"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook the model has read."""

from __future__ import annotations

import os
import stat
from typing import Literal

from pydantic import Field

from tools.atomic_file import atomic_write
from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
from tools.change_lock import change_locked
from tools.notebook import EditMode, NotebookError, dump_notebook, edit, parse_notebook
from tools.paths import missing_file_message, short_path, unusable_path
from tools.write import freshness_problem, remember_written, unified_diff, unread_problem


class NotebookEditParams(ToolParams):
    notebook_path: str = Field(description="The .ipynb file's absolute path")
    cell_id: str | None = Field(
        default=None,
        description="The cell's id, as Read shows it",
    )
    new_source: str = Field(description="The cell's new source")
    cell_type: Literal["code", "markdown"] | None = Field(
        default=None,
        description="Required for insert; else keeps the cell's type",
    )
    edit_mode: EditMode = "replace"


class NotebookEditTool(Tool[NotebookEditParams]):
    name = "NotebookEdit"
    deferred = True  # loaded with ToolSearch when needed

    def label(self, params: NotebookEditParams, cwd: StrPath | None = None) -> str:
        where = f" {params.cell_id}" if params.cell_id else ""
        verb = {"replace": "Edit", "insert": "Insert into", "delete": "Delete from"}
        cell = "" if params.edit_mode == "insert" else f" (cell{where})"
        return f"{verb[params.edit_mode]} {one_line(short_path(params.notebook_path, cwd))}{cell}"

    def precheck(self, params: NotebookEditParams, ctx: ToolContext) -> ToolResult | None:
        return unread_problem(ctx, ctx.resolve(params.notebook_path))

    async def run(self, params: NotebookEditParams, ctx: ToolContext) -> ToolResult:
        return await change_locked(
            ctx.resolve(params.notebook_path), lambda: self._change(params, ctx)
        )

    async def _change(self, params: NotebookEditParams, ctx: ToolContext) -> ToolResult:
        path = ctx.resolve(params.notebook_path)
        if path.suffix.lower() != ".ipynb":
            return ToolResult.error(
                f"{path} is not a Jupyter notebook (.ipynb); change other files with Edit."
            )
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return ToolResult.error(missing_file_message(path, params.notebook_path, ctx))
        except (OSError, ValueError) as exc:
            return unusable_path(path, "edit", exc)
        if not stat.S_ISREG(st.st_mode):
            return ToolResult.error(f"{path} is not a regular file.")
        try:
            old_text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            return ToolResult.error(f"{path} is not UTF-8 text, so it is not a notebook.")
        except OSError as exc:
            return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
        problem = freshness_problem(ctx, path, st, old_text)
        if problem:
            return ToolResult.error(problem)

        try:
            notebook = parse_notebook(old_text)
            changed = edit(
                notebook, params.cell_id, params.new_source, params.edit_mode, params.cell_type
            )
        except NotebookError as exc:
            return ToolResult.error(f"{path} {exc}. Read it again to see its cells.")
        new_text = dump_notebook(notebook)
        try:
            atomic_write(path, new_text.encode("utf-8"))
        except OSError as exc:
            return ToolResult.error(f"Cannot write {path}: {exc.strerror or exc}")
        remember_written(ctx, path, new_text)

        done = {"replace": "Replaced", "insert": "Inserted", "delete": "Deleted"}[params.edit_mode]
        message = f"{done} cell {changed} in {path}."
        if params.edit_mode == "insert":
            message += f" Its id is {changed}."
        display = f"{done} cell {changed}"
        return ToolResult(
            output=message,
            display=display,
            meta={
                "path": str(path),
                "cell_id": changed,
                "diff": unified_diff(old_text, new_text, path, ctx.cwd),
                "display": display,
            },
        )
