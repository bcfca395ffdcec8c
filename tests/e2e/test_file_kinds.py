"""PDFs and notebooks through `ccx -p`: what Read and NotebookEdit send passes the API's rules."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Ccx
from tests.tools.test_read_pdf import make_pdf
from tui.fake_api import text_reply, tool_reply


def last_result(messages: list[dict[str, Any]]) -> dict[str, Any]:
    (block,) = [b for b in messages[-1]["content"] if b["type"] == "tool_result"]
    return block


def test_pdf_pages_reach_the_model_as_a_document(ccx: Ccx) -> None:
    (ccx.repo / "manual.pdf").write_bytes(make_pdf([f"Chapter {n}" for n in range(1, 15)]))
    ccx.api.add(
        tool_reply(("Read", {"file_path": "manual.pdf"})),
        tool_reply(("Read", {"file_path": "manual.pdf", "pages": "12-13"})),
        text_reply("Chapter 12 covers it."),
    )
    run = ccx.run("-p", "what does chapter 12 say?", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Chapter 12 covers it."
    refused, answered = (last_result(r.messages) for r in ccx.api.requests[1:3])
    assert refused["is_error"] and "14 pages" in json.dumps(refused["content"])
    note, document = answered["content"]
    assert "pages 12-13 of 14" in note["text"]
    assert document["source"]["media_type"] == "application/pdf"
    assert ccx.api.errors == []


def test_notebook_read_and_edit(ccx: Ccx) -> None:
    notebook = {
        "cells": [
            {"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "source": "1+1"}
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = ccx.repo / "calc.ipynb"
    path.write_text(json.dumps(notebook))
    ccx.api.add(
        tool_reply(("Read", {"file_path": "calc.ipynb"})),
        tool_reply(
            ("NotebookEdit", {"notebook_path": str(path), "cell_id": "c1", "new_source": "2+2"})
        ),
        text_reply("Changed."),
    )
    run = ccx.run("-p", "change the sum", "--permission-mode", "acceptEdits")
    assert run.returncode == 0, run.stderr
    assert json.loads(path.read_text())["cells"][0]["source"] == "2+2"
    assert '<cell id="c1">1+1</cell id="c1">' in ccx.api.requests[1].all_text()
    assert ccx.api.errors == []
