"""Jupyter notebooks (.ipynb): how Read shows one, and how NotebookEdit changes one cell.

A notebook is JSON; the model sees its cells, each tagged with the id NotebookEdit
takes (`<cell id="...">`), followed by the text of its outputs. A cell without an id
(notebooks older than nbformat 4.5) is called ``cell-N`` by its position. Changes keep
the file as Jupyter writes it: one-space indentation, keys in order, a final newline.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any, Literal

MAX_OUTPUT_CHARS = 10_000  # per cell: a loop that printed a megabyte is not worth the context
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_POSITIONAL_ID = re.compile(r"cell-(\d+)")

EditMode = Literal["replace", "insert", "delete"]


class NotebookError(ValueError):
    """The text is not a notebook ccx can work with; the message says why."""


@dataclass
class Notebook:
    data: dict[str, Any]

    @property
    def cells(self) -> list[dict[str, Any]]:
        cells: list[dict[str, Any]] = self.data["cells"]
        return cells

    @property
    def keeps_ids(self) -> bool:
        """Cells carry ids from nbformat 4.5 on."""
        major = self.data.get("nbformat", 4)
        minor = self.data.get("nbformat_minor", 0)
        return isinstance(major, int) and isinstance(minor, int) and (major, minor) >= (4, 5)


def parse_notebook(text: str) -> Notebook:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"is not valid notebook JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("is not a Jupyter notebook (no list of cells)")
    if not all(isinstance(cell, dict) for cell in data["cells"]):
        raise NotebookError("has a cell that is not a JSON object")
    return Notebook(data)


def dump_notebook(notebook: Notebook) -> str:
    return json.dumps(notebook.data, indent=1, ensure_ascii=False) + "\n"


def cell_id(cell: dict[str, Any], index: int) -> str:
    given = cell.get("id")
    return given if isinstance(given, str) and given else f"cell-{index}"


def find_cell(notebook: Notebook, wanted: str) -> int | None:
    """The index of the cell called ``wanted`` (its id, or ``cell-N`` for one without)."""
    for index, cell in enumerate(notebook.cells):
        if cell_id(cell, index) == wanted:
            return index
    match = _POSITIONAL_ID.fullmatch(wanted)
    if match and int(match.group(1)) < len(notebook.cells):
        return int(match.group(1))
    return None


def render(notebook: Notebook) -> str:
    """The notebook as the model reads it: every cell's source, then its outputs' text."""
    language = _language(notebook.data)
    parts = []
    for index, cell in enumerate(notebook.cells):
        ident = cell_id(cell, index)
        kind = cell.get("cell_type", "code")
        head = f'<cell id="{ident}">'
        if kind != "code":
            head += f"<cell_type>{kind}</cell_type>"
        elif language not in ("python", ""):
            head += f"<language>{language}</language>"
        block = f'{head}{source_text(cell)}</cell id="{ident}">'
        outputs = _outputs_text(cell)
        if outputs:
            block += "\n" + outputs
        parts.append(block)
    return "\n".join(parts)


def source_text(cell: dict[str, Any]) -> str:
    return _joined(cell.get("source", ""))


def edit(
    notebook: Notebook, target: str | None, new_source: str, mode: EditMode, cell_type: str | None
) -> str:
    """Apply one change in place; the changed cell's id. NotebookError when it cannot apply."""
    cells = notebook.cells
    index: int | None = None
    if target is not None:
        index = find_cell(notebook, target)
        if index is None:
            raise NotebookError(f'has no cell with id "{target}"')
    elif mode != "insert":
        raise NotebookError(f"needs a cell_id to {mode} a cell")

    if mode == "delete":
        assert index is not None
        del cells[index]
        return target or ""
    if mode == "insert":
        if cell_type is None:
            raise NotebookError("needs a cell_type (code or markdown) to insert a cell")
        cell: dict[str, Any] = {"cell_type": cell_type, "metadata": {}, "source": new_source}
        if cell_type == "code":
            cell.update(execution_count=None, outputs=[])
        position = 0 if index is None else index + 1
        if notebook.keeps_ids:
            cell["id"] = _fresh_id(notebook)
        cells.insert(position, cell)
        return cell_id(cell, position)

    assert index is not None
    cell = cells[index]
    cell["source"] = new_source
    if cell_type is not None and cell_type != cell.get("cell_type"):
        cell["cell_type"] = cell_type
    if cell.get("cell_type") == "code":
        # The old outputs belonged to the old source.
        cell["execution_count"] = None
        cell["outputs"] = []
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    return cell_id(cell, index)


def _fresh_id(notebook: Notebook) -> str:
    taken = {cell.get("id") for cell in notebook.cells}
    while True:
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate


def _language(data: dict[str, Any]) -> str:
    metadata = data.get("metadata")
    info = metadata.get("language_info") if isinstance(metadata, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name.lower() if isinstance(name, str) else "python"


def _joined(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return value if isinstance(value, str) else ""


def _outputs_text(cell: dict[str, Any]) -> str:
    outputs = cell.get("outputs")
    if not isinstance(outputs, list):
        return ""
    texts = [text for output in outputs if isinstance(output, dict) for text in [_output(output)]]
    joined = "\n".join(text for text in texts if text)
    if len(joined) > MAX_OUTPUT_CHARS:
        cut = len(joined) - MAX_OUTPUT_CHARS
        joined = joined[:MAX_OUTPUT_CHARS] + f"\n… ({cut:,} more characters of output not shown)"
    return joined


def _output(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return _joined(output.get("text", ""))
    if kind == "error":
        trace = "\n".join(str(line) for line in output.get("traceback") or [])
        head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return _ANSI.sub("", f"{head}\n{trace}" if trace else head)
    if kind in ("execute_result", "display_data"):
        data = output.get("data")
        if not isinstance(data, dict):
            return ""
        if "text/plain" in data:
            return _joined(data["text/plain"])
        images = [key for key in data if key.startswith("image/")]
        if images:
            return f"[{images[0]} output not shown]"
    return ""
