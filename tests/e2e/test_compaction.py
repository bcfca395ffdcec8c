"""Compaction through the `ccx` command: /compact with instructions, /context, undo, auto, events."""

from __future__ import annotations

from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply


def summary_requests(ccx: Ccx) -> list:
    return [r for r in ccx.api.requests if SUMMARY_MARK in r.last_user_text()]


def test_compact_with_instructions_then_continue(ccx: Ccx) -> None:
    ccx.api.add(
        tool_reply(("Read", {"file_path": "src/app.py"})),
        tool_reply(("Read", {"file_path": "README.md"})),
        text_reply("RETRY_LIMIT is 3."),
    )
    first = ccx.run("-p", "what is the retry limit?", "--output-format", "json")
    assert first.returncode == 0, first.stderr

    ccx.api.add(
        text_reply("<analysis>notes</analysis><summary>RETRY_LIMIT = 3 in src/app.py.</summary>")
    )
    compact = ccx.run(
        "-c", "-p", "/compact keep every RETRY_LIMIT value", "--output-format", "json"
    )
    assert compact.returncode == 0, compact.stderr
    result = compact.json()
    assert result["result"].startswith("Compacted (manual):")
    assert "src/app.py" in result["result"]  # restored files are listed
    (record,) = result["compactions"]
    assert (
        record["trigger"] == "manual" and record["tokens_before"] > 0 and record["tokens_after"] > 0
    )
    assert record["method"] == "summary"
    (summary_request,) = summary_requests(ccx)
    assert "keep every RETRY_LIMIT value" in summary_request.last_user_text()
    assert result["num_turns"] == 0

    ccx.api.add(text_reply("Still 3."))
    after = ccx.run("-c", "-p", "and now?", "--output-format", "json")
    assert after.json()["result"] == "Still 3."
    text = ccx.api.requests[-1].all_text()
    assert (
        "RETRY_LIMIT = 3 in src/app.py." in text and "notes" not in text
    )  # the summary, analysis gone
    assert "RETRY_LIMIT = 3\n" in text.replace(
        "1\tRETRY_LIMIT = 3\n", "RETRY_LIMIT = 3\n"
    )  # file re-read
    assert "what is the retry limit?" in text  # the user's request verbatim
    assert ccx.api.errors == []

    records = ccx.transcript_records()
    boundary = [r for r in records if r["type"] == "compact_boundary"]
    assert len(boundary) == 1 and boundary[0]["instructions"] == "keep every RETRY_LIMIT value"
    assert boundary[0]["method"] == "summary"


def test_context_command_prints_the_breakdown(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Read", {"file_path": "src/app.py"})), text_reply("ok"))
    ccx.run("-p", "read it")
    run = ccx.run("-c", "-p", "/context")
    assert run.returncode == 0, run.stderr
    for label in (
        "System prompt",
        "Tools",
        "Messages",
        "Tool results: Read",
        "Free space",
        "Auto-compact buffer",
    ):
        assert label in run.stdout
    assert "src/app.py" in run.stdout  # what a compaction now would keep


def test_undo_compact_brings_the_conversation_back(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Read", {"file_path": "src/app.py"})), text_reply("first answer"))
    ccx.run("-p", "read it")
    ccx.api.add(text_reply("<summary>short</summary>"))
    ccx.run("-c", "-p", "/compact")
    undo = ccx.run("-c", "-p", "/undo-compact", "--output-format", "json")
    assert undo.returncode == 0 and "Restored" in undo.json()["result"]
    ccx.api.add(text_reply("back"))
    ccx.run("-c", "-p", "hello again")
    sent = ccx.api.requests[-1].messages
    assert sent[0]["content"][0]["text"] == "read it"
    assert not any("short" in str(m["content"]) for m in sent)
    assert ccx.api.errors == []


def test_auto_compaction_appears_in_stream_json(ccx: Ccx) -> None:
    body = "value = 1\n" * 1_500
    for index in range(8):
        (ccx.repo / f"big{index}.py").write_text(body)
    ccx.api.on(
        lambda r: SUMMARY_MARK in r.last_user_text(),
        lambda r: text_reply("<summary>read big files</summary>"),
    )
    ccx.api.add(
        *[tool_reply(("Read", {"file_path": f"big{i}.py"})) for i in range(8)], text_reply("done")
    )
    run = ccx.run(
        "-p", "read them all", "--output-format", "stream-json", "--autocompact", "30000",
        "--include-ccx-events",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    events = run.ccx_events()
    kinds = [e["type"] for e in events]
    assert "context" in kinds
    compactions = [e for e in events if e["type"] in ("compaction_finished", "microcompact")]
    assert compactions, kinds
    assert events[-1]["result"] == "done"
    states = [e["state"] for e in events if e["type"] == "context"]
    assert all(s["used"] <= 30_000 for s in states), [(s["used"], s["level"]) for s in states]
    assert all("percent_until_auto_compact" in s for s in states)
    assert ccx.api.errors == []
