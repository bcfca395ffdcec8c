"""The API's context editing in place of microcompact, through the `ccx` command."""

from __future__ import annotations

import json

import pytest

from agent.core.request import CLEAR_THINKING
from compaction.server_editing import BETA, plan_server_edit
from compaction.thresholds import ContextLimits
from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply

WINDOW = 120_000  # T = 83,000, C = 42,932: ~40 reads of ~2,100 tokens cross T with C clearable


def test_a_long_reading_session_is_cleared_by_the_api_not_by_ccx(ccx: Ccx) -> None:
    paths = []
    for index in range(42):
        paths.append(ccx.repo / f"mod_{index:02d}.py")
        paths[-1].write_text(f"FACT_{index} = {index}\n" + "value = 1\n" * 600)
    ccx.api.add(*[tool_reply(("Read", {"file_path": str(path)})) for path in paths])
    ccx.api.add(tool_reply(("Read", {"file_path": str(paths[0])})), text_reply("done"))
    ccx.env["CCX_SERVER_CONTEXT_EDITING"] = "1"
    # The replies are scripted in order, so a session-notes side call would take one of them;
    # this test is about the API's clearing, so it runs without session memory.
    ccx.env["CCX_SESSION_MEMORY"] = "0"

    run = ccx.run(
        "-p",
        "read every module",
        "--output-format",
        "stream-json",
        "--autocompact",
        str(WINDOW),
        "--include-ccx-events",
    )

    assert run.returncode == 0, run.stderr
    events = run.ccx_events()
    result = events[-1]
    assert result["result"] == "done" and not result["is_error"]
    requests = ccx.api.requests
    assert len(requests) == 44 and ccx.api.errors == []  # every request valid, none refused
    expected = plan_server_edit(
        ContextLimits(WINDOW, 64_000),
        auto_enabled=True,
        tool_names=[tool["name"] for tool in requests[0].body["tools"]],
    )
    assert {"Skill", "ExitPlanMode"} <= set(expected.exclude_tools)
    assert "Read" not in expected.exclude_tools
    for request in requests:
        assert BETA in request.headers["anthropic-beta"].split(",")
        # After the edit that keeps thinking blocks (thinking is on by default).
        assert request.body["context_management"] == {"edits": [CLEAR_THINKING, expected.to_api()]}

    # The API cleared the oldest reads once the request passed the trigger ...
    edited = [r for r in requests if r.applied_edits]
    assert edited and all(r.context_editing.original_tokens > expected.trigger for r in edited)
    first_read = requests[1].messages[1]["content"][0]["id"]
    assert edited[0].cleared_tool_use_ids[0] == first_read
    # ... ccx cleared nothing itself, said what the API did, and never had to compact.
    clearing = [e for e in events if e["type"] == "microcompact"]
    assert clearing and all(e["reason"] == "server" for e in clearing)
    assert not any("[Cleared to save context" in r.all_text() for r in requests)
    assert clearing[-1]["cleared"] == edited[-1].applied_edits[0]["cleared_tool_uses"]
    assert result["context_events"] == [
        {k: e[k] for k in ("type", "reason", "cleared", "tokens_freed")} for e in clearing
    ]
    assert result["compactions"] == []

    # The meter before each request shows what the API then counted, cleared or not.
    meters = [e["state"]["used"] for e in events if e["type"] == "context"]
    assert len(meters) == len(requests)
    first_edited = requests.index(edited[0])
    for used, request in list(zip(meters, requests, strict=True))[first_edited + 1 :]:
        assert used == pytest.approx(request.estimated_tokens, rel=0.05)
        assert used < request.context_editing.original_tokens - expected.clear_at_least / 2

    # The API had cleared the first read, so reading the file again returns its text.
    reread = requests[-1].messages[-1]["content"][0]["content"]
    assert "FACT_0 = 0" in reread


def test_the_settings_key_turns_it_on(ccx: Ccx) -> None:
    (ccx.repo / ".claude").mkdir()
    settings = {"serverContextEditing": True}
    (ccx.repo / ".claude" / "settings.json").write_text(json.dumps(settings))
    ccx.api.add(text_reply("hi"))
    run = ccx.run("-p", "hello")
    assert run.returncode == 0, run.stderr
    (request,) = [r for r in ccx.api.requests if r.path == "/v1/messages"]
    edits = [edit["type"] for edit in request.body["context_management"]["edits"]]
    assert edits == ["clear_thinking_20251015", "clear_tool_uses_20250919"]
    assert BETA in request.headers["anthropic-beta"]
