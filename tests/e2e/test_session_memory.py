"""Session memory through the `ccx` command: notes in the background, then a compaction that uses
them, named by its method in the json result, stream-json and the transcript."""

from __future__ import annotations

from compaction.notes import NotesStore
from compaction.notes_writer import NOTES_REQUEST_MARK
from compaction.summary import SUMMARY_REQUEST_MARK
from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply

NOTES = "1. Goal: read the big files.\n3. Files: big0.py to big19.py, all 'value = 1'."
TASK = "Read big0.py to big19.py, one by one. Do not edit anything."


def test_notes_stand_in_for_the_summary_and_every_output_names_the_method(ccx: Ccx) -> None:
    # Each request grows the context by a fraction of the keep ceiling (10K tokens at this
    # window), so notes written when compaction nears still cover enough when it comes.
    body = "value = 1\n" * 600
    for index in range(20):
        (ccx.repo / f"big{index}.py").write_text(body)
    ccx.api.on(
        lambda r: NOTES_REQUEST_MARK in r.last_user_text(),
        lambda r: text_reply(f"<analysis>x</analysis><summary>{NOTES}</summary>"),
    )
    ccx.api.on(
        lambda r: SUMMARY_REQUEST_MARK in r.last_user_text(),
        lambda r: text_reply("<summary>a full summary</summary>"),
    )
    # The model explains as it goes: text that clearing cannot take, so the context still
    # reaches the threshold once old reads are cleared (with folding off: folding would take
    # the old rounds' text with their cleared reads, and no compaction would be needed).
    ccx.env["CCX_FOLD_ROUNDS"] = "0"
    talk = "Reading the next file and noting what it holds. " * 60
    ccx.api.add(
        *[tool_reply(("Read", {"file_path": f"big{i}.py"}), text=talk) for i in range(20)],
        text_reply("done"),
    )
    # Only Read is offered: the window is sized for this workload, not for ccx's tool list.
    run = ccx.run("-p", TASK, "--output-format", "stream-json", "--autocompact", "40000",
                  "--tools", "Read")  # fmt: skip
    assert run.returncode == 0, run.stderr
    events = run.ccx_events()  # ccx's own events arrive as system/ccx_<type> lines
    result = events[-1]
    assert result["type"] == "result" and result["result"] == "done"
    methods = [c["method"] for c in result["compactions"]]
    assert "session_memory" in methods, (methods, result["context_events"])
    streamed = [e["record"]["method"] for e in events if e["type"] == "compaction_finished"]
    assert streamed == methods
    boundaries = [r for r in ccx.transcript_records() if r["type"] == "compact_boundary"]
    assert [b["method"] for b in boundaries] == methods
    notes_cost = result["cost_by_purpose"]["notes"]
    assert notes_cost["requests"] >= 1 and notes_cost["output_tokens"] > 0
    purposes = result["cost_by_purpose"].values()
    assert sum(p["requests"] for p in purposes) == len(ccx.api.requests)
    assert sum(p["output_tokens"] for p in purposes) == result["usage"]["output_tokens"]
    (transcript,) = ccx.transcripts()
    saved = NotesStore(transcript.with_suffix("")).load()
    assert saved is not None and saved.text == NOTES
    agent_requests = [
        r
        for r in ccx.api.requests
        if NOTES_REQUEST_MARK not in r.last_user_text()
        and SUMMARY_REQUEST_MARK not in r.last_user_text()
    ]
    # The notes stood in for a summary in what the agent then sent (a later full summary
    # may replace them), and the task stays verbatim to the end.
    assert any(NOTES in r.all_text() for r in agent_requests)
    assert TASK in agent_requests[-1].all_text()
    assert ccx.api.errors == []
