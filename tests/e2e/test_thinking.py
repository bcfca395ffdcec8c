"""A session that thinks, through the `ccx` command: stream-json, /compact, undo and resume.

Every request the fake API received is checked against the API's thinking
rules (tests/thinking_rules.py): nothing ccx sends would be refused.
"""

from __future__ import annotations

import json

from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from tests.e2e.conftest import Ccx
from tests.thinking_rules import thinking_count, violations
from tui.fake_api import Reply

BUDGET = "30000"  # above a summary's 20,000 output tokens: the summary needs room above it


def thought(step: int) -> dict:
    return {"type": "thinking", "thinking": f"Step {step}: what does the file say? " * 20}


def read(step: int, path: str) -> Reply:
    use = {"type": "tool_use", "name": "Read", "input": {"file_path": path}}
    return Reply(content=[thought(step), {"type": "text", "text": f"Reading {path}."}, use])


def answer(step: int, text: str) -> Reply:
    return Reply(content=[thought(step), {"type": "text", "text": text}])


def test_a_thinking_session_through_stream_json_compact_undo_and_resume(ccx: Ccx) -> None:
    # a model that thinks with a budget (the 5.x models think adaptively, without one)
    thinking = ("--model", "claude-sonnet-4-5", "--max-thinking-tokens", BUDGET)
    ccx.api.add(read(1, "src/app.py"), read(2, "README.md"), answer(3, "RETRY_LIMIT is 3."))
    first = ccx.run(
        "-p", "what is the retry limit?", "--output-format", "stream-json", "--verbose", *thinking
    )
    assert first.returncode == 0, first.stderr
    assistants = [e["message"] for e in first.events() if e["type"] == "assistant"]
    thoughts = [m for m in assistants if m["content"][0]["type"] == "thinking"]
    assert len(thoughts) == 3 and all(len(m["content"]) == 1 for m in thoughts)
    assert all(m["content"][0]["signature"] for m in thoughts)
    assert [m["id"] for m in thoughts] == [m["id"] for m in assistants[1::2]]

    ccx.api.add(Reply(content=[{"type": "text", "text": "<summary>RETRY_LIMIT = 3.</summary>"}]))
    compact = ccx.run("-c", "-p", "/compact", "--output-format", "json", *thinking)
    assert compact.returncode == 0, compact.stderr
    (summary,) = [r for r in ccx.api.requests if SUMMARY_MARK in r.last_user_text()]
    assert summary.body["max_tokens"] > int(BUDGET)

    undo = ccx.run("-c", "-p", "/undo-compact", "--output-format", "json", *thinking)
    assert undo.returncode == 0 and "Restored" in undo.json()["result"]

    ccx.api.add(read(4, "src/app.py"), answer(5, "Still 3."))
    resumed = ccx.run("-c", "-p", "check again", "--output-format", "json", *thinking)
    assert resumed.json()["result"] == "Still 3."
    last = ccx.api.requests[-1]
    assert last.body["thinking"]["budget_tokens"] == int(BUDGET)
    assert thinking_count(last.body) >= 1
    assert ccx.api.errors == []
    assert violations(ccx.api.requests) == []


def test_a_subagent_that_thinks_keeps_the_rules_and_reports_only_its_text(ccx: Ccx) -> None:
    from tests.e2e.subagent_helpers import agent_call, first_user_text, tool_results

    readme = str(ccx.repo / "README.md")
    brief = "BRIEF-T: summarize README.md"
    mine = lambda r: "BRIEF-T" in first_user_text(r)  # noqa: E731
    ccx.api.on(lambda r: mine(r) and len(r.messages) == 1, read(10, readme))
    ccx.api.on(lambda r: mine(r) and len(r.messages) == 3, read(11, readme))
    ccx.api.on(lambda r: mine(r) and len(r.messages) > 3, answer(12, "A sample project."))
    call = agent_call(brief)
    ccx.api.add(
        Reply(content=[thought(1), {"type": "tool_use", "name": call[0], "input": call[1]}]),
        answer(2, "It is a sample project."),
    )
    run = ccx.run(
        "-p", "delegate", "--output-format", "json",
        "--model", "claude-sonnet-4-5", "--max-thinking-tokens", BUDGET,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "It is a sample project."
    (result,) = tool_results(ccx.api.requests[-1])
    assert "A sample project." in json.dumps(result) and "Step 12" not in json.dumps(result)
    assert ccx.api.errors == [] and violations(ccx.api.requests) == []
