"""Claude Code's flags that the Agent SDK passes, through the real `ccx` command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def tool_names(ccx: Ccx, index: int = 0) -> list[str]:
    return [tool["name"] for tool in ccx.api.requests[index].body.get("tools", [])]


def test_tools_sets_the_base_tool_set(ccx: Ccx) -> None:
    ccx.api.add(text_reply("ok"), text_reply("ok"))
    assert ccx.run("-p", "hi", "--tools", "Read,Grep").returncode == 0
    assert tool_names(ccx) == ["Read", "Grep"]
    assert ccx.run("-p", "hi", "--tools", "").returncode == 0
    assert tool_names(ccx, 1) == []


def test_betas_effort_and_thinking_reach_the_request(ccx: Ccx) -> None:
    ccx.api.add(text_reply("ok"), text_reply("ok"))
    run = ccx.run("-p", "hi", "--betas", "files-api-2025-04-14", "--effort", "high")
    assert run.returncode == 0, run.stderr
    request = ccx.api.requests[0]
    betas = request.headers["anthropic-beta"].split(",")
    assert "files-api-2025-04-14" in betas and "effort-2025-11-24" in betas
    assert request.body["output_config"] == {"effort": "high"}
    assert request.body["thinking"] == {"type": "adaptive", "display": "omitted"}
    # A model that thinks with a budget takes --max-thinking-tokens.
    run = ccx.run("-p", "hi", "--model", "claude-sonnet-4-5", "--max-thinking-tokens", "2048")
    assert run.returncode == 0, run.stderr
    request = ccx.api.requests[1]
    assert request.body["thinking"] == {
        "type": "enabled",
        "budget_tokens": 2048,
        "display": "omitted",
    }
    assert request.body["max_tokens"] == 32_000
    assert "interleaved-thinking-2025-05-14" in request.headers["anthropic-beta"]


def test_a_budget_under_the_apis_minimum_is_a_usage_error(ccx: Ccx) -> None:
    run = ccx.run("-p", "hi", "--max-thinking-tokens", "500")
    assert run.returncode == 2 and "at least 1024" in run.stderr
    assert ccx.api.requests == []


def test_an_unknown_model_is_refused_with_nothing_sent(ccx: Ccx) -> None:
    run = ccx.run("-p", "hi", "--model", "claude-bogus-9", "--output-format", "json")
    assert run.returncode == 1
    result = run.json()
    assert result["is_error"] and "Unknown model 'claude-bogus-9'" in result["result"]
    assert ccx.api.requests == []


def test_aliases_reach_the_api_as_full_ids(ccx: Ccx) -> None:
    for _ in range(3):
        ccx.api.add(text_reply("ok"))
    for alias in ("best", "opusplan", "sonnet[1m]"):
        run = ccx.run("-p", "hi", "--model", alias)
        assert run.returncode == 0, run.stderr
    models = [r.body["model"] for r in ccx.api.requests]
    assert models == ["claude-opus-5-5", "claude-sonnet-5-5", "claude-sonnet-5-5"]


@pytest.mark.refusal_expected  # the user's own --betas value: ccx passes it on as asked
def test_an_unknown_beta_is_refused_by_the_api_with_its_words(ccx: Ccx) -> None:
    run = ccx.run("-p", "hi", "--betas", "no-such-beta-2099-01-01", "--output-format", "json")
    assert run.returncode == 1
    result = run.json()
    assert result["is_error"] and "no-such-beta-2099-01-01" in result["result"]
    assert "anthropic-beta" in result["result"]


def test_json_schema_gives_structured_output(ccx: Ccx) -> None:
    ccx.api.add(
        tool_reply(("StructuredOutput", {"answer": 7})),  # wrong type: the model is told
        tool_reply(("StructuredOutput", {"answer": "seven"})),
    )
    run = ccx.run("-p", "count", "--output-format", "json", "--json-schema", json.dumps(SCHEMA))
    assert run.returncode == 0, run.stderr
    result = run.json()
    assert result["structured_output"] == {"answer": "seven"}
    assert json.loads(result["result"]) == {"answer": "seven"}
    assert len(ccx.api.requests) == 2  # the valid call ends the turn
    tool = next(t for t in ccx.api.requests[0].body["tools"] if t["name"] == "StructuredOutput")
    assert tool["input_schema"] == SCHEMA
    assert "does not match the required schema" in json.dumps(ccx.api.requests[1].messages[-1])


def test_json_schema_nudges_then_reports_the_missing_output(ccx: Ccx) -> None:
    ccx.api.add(*(text_reply("just prose") for _ in range(4)))
    run = ccx.run("-p", "count", "--output-format", "json", "--json-schema", json.dumps(SCHEMA))
    result = run.json()
    assert result["subtype"] == "error_max_structured_output_retries" and result["is_error"]
    assert len(ccx.api.requests) == 4
    assert "StructuredOutput" in ccx.api.requests[1].last_user_text()
    bad = ccx.run("-p", "x", "--json-schema", '{"type": "nonsense"}', "--output-format", "json")
    assert bad.returncode == 1 and "--json-schema" in bad.json()["result"]


def test_max_budget_usd_stops_with_claude_codes_subtype(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Bash", {"command": "echo one"})), text_reply("never sent"))
    run = ccx.run(
        "-p", "go", "--output-format", "json", "--max-budget-usd", "0.000001",
        "--allowedTools", "Bash(echo *)",
    )  # fmt: skip
    result = run.json()
    assert result["subtype"] == "error_max_budget_usd" and result["is_error"]
    assert run.returncode == 1 and len(ccx.api.requests) == 1
    assert result["total_cost_usd"] > 0.000001


def test_setting_sources_chooses_the_settings_files(ccx: Ccx) -> None:
    claude = ccx.repo / ".claude"
    claude.mkdir(exist_ok=True)
    (claude / "settings.json").write_text(json.dumps({"model": "claude-haiku-4-5"}))
    ccx.api.add(text_reply("ok"), text_reply("ok"))
    assert ccx.run("-p", "hi", "--setting-sources", "user,project").returncode == 0
    assert ccx.api.requests[0].body["model"] == "claude-haiku-4-5"
    assert ccx.run("-p", "hi", "--setting-sources=user").returncode == 0
    assert ccx.api.requests[1].body["model"] != "claude-haiku-4-5"
    bad = ccx.run("-p", "hi", "--setting-sources", "everywhere")
    assert bad.returncode == 2 and "everywhere" in bad.stderr


def test_unknown_and_unhonoured_flags_warn_and_the_run_goes_on(ccx: Ccx, tmp_path: Path) -> None:
    ccx.api.add(text_reply("ok"))
    run = ccx.run(
        "-p", "hi", "--some-future-flag", "--task-budget", "5", "--strict-mcp-config",
        "--agents", json.dumps({"reviewer": {"description": "Reviews", "prompt": "Review."}}),
    )  # fmt: skip
    assert run.returncode == 0 and run.stdout.strip() == "ok"
    assert "--some-future-flag" in run.stderr and "--task-budget" in run.stderr
    assert ccx.run("-p", "hi", "--agents", "[1]").returncode == 2


def test_add_dir_edits_follow_the_working_directory_rules(ccx: Ccx, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    target = extra / "notes.txt"
    ccx.api.add(
        tool_reply(("Write", {"file_path": str(target), "content": "x\n"})), text_reply("ok")
    )
    run = ccx.run(
        "-p", "write", "--permission-mode", "acceptEdits", "--add-dir", str(extra),
        "--output-format", "json",
    )  # fmt: skip
    assert run.json()["permission_denials"] == [] and target.read_text() == "x\n"
    other = tmp_path / "other.txt"
    ccx.api.add(
        tool_reply(("Write", {"file_path": str(other), "content": "x\n"})), text_reply("ok")
    )
    run = ccx.run(
        "-p", "write", "--permission-mode", "acceptEdits", "--add-dir", str(extra),
        "--output-format", "json",
    )  # fmt: skip
    assert run.json()["permission_denials"] and not other.exists()


def test_stream_json_has_raw_stream_events_and_hook_events(ccx: Ccx) -> None:
    claude = ccx.repo / ".claude"
    claude.mkdir(exist_ok=True)
    hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo checked"}]}
    (claude / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))
    ccx.api.add(tool_reply(("Bash", {"command": "echo hi"})), text_reply("done"))
    run = ccx.run(
        "-p", "go", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
        "--include-hook-events", "--allowedTools", "Bash(echo *)",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    events = run.events()
    raw = [e["event"]["type"] for e in events if e["type"] == "stream_event"]
    for kind in ("message_start", "content_block_start", "content_block_delta"):
        assert kind in raw
    assert raw.count("message_stop") == 2 and "message_delta" in raw
    started = [e for e in events if e.get("subtype") == "hook_started"]
    answered = [e for e in events if e.get("subtype") == "hook_response"]
    assert [e["hook_name"] for e in started] == ["PreToolUse:Bash"]
    assert answered[0]["hook_id"] == started[0]["hook_id"]
    assert answered[0]["stdout"] == "checked" and answered[0]["outcome"] == "success"
    assert answered[0]["exit_code"] == 0


def test_resume_session_at_continues_from_that_message_in_a_fork(ccx: Ccx) -> None:
    ccx.api.add(text_reply("A1"), text_reply("A2"), text_reply("A3"))
    lines = "".join(
        json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"
        for text in ("first question", "second question")
    )
    run = ccx.run("--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                  stdin=lines)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assistants = [e for e in run.events() if e["type"] == "assistant"]
    first_uuid, session_id = assistants[0]["uuid"], assistants[0]["session_id"]
    (original,) = ccx.transcripts()
    before = original.read_text()
    assert first_uuid in before  # the stream's uuid is the transcript's
    resumed = ccx.run("-p", "third", "-r", session_id, f"--resume-session-at={first_uuid}",
                      "--output-format", "json")  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    sent = json.dumps(ccx.api.requests[-1].messages)
    assert "first question" in sent and "A1" in sent and "second question" not in sent
    assert resumed.json()["session_id"] != session_id and original.read_text() == before
    missing = ccx.run("-p", "x", "-r", session_id, "--resume-session-at", "no-such-uuid")
    assert missing.returncode == 1 and "no-such-uuid" in missing.stderr + missing.stdout


def test_tools_and_strict_mcp_config_with_mcp_servers(ccx: Ccx) -> None:
    from tests.mcp.servers import stdio_entry

    (ccx.repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": stdio_entry()}}))
    settings = ccx.repo / ".claude" / "settings.local.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"enableAllProjectMcpServers": True}))
    dynamic = json.dumps({"mcpServers": {"calc": stdio_entry()}})
    # The project's server must be in the first request, its definitions whole.
    ccx.env |= {"CCX_MCP_PRINT_WAIT_MS": "60000", "ENABLE_TOOL_SEARCH": "false"}
    ccx.api.add(text_reply("ok"), text_reply("ok"))
    assert ccx.run("-p", "hi", "--tools", "Read", "--mcp-config", dynamic).returncode == 0
    names = tool_names(ccx)
    assert "Read" in names and "Bash" not in names  # MCP tools stay beside --tools' set
    assert "mcp__calc__add" in names and "mcp__proj__add" in names
    run = ccx.run("-p", "hi", "--strict-mcp-config", "--mcp-config", dynamic)
    assert run.returncode == 0, run.stderr
    names = tool_names(ccx, 1)
    assert "mcp__calc__add" in names and "mcp__proj__add" not in names and "Bash" in names


def test_stream_json_asks_for_the_thinking_text_a_text_run_does_not(ccx: Ccx) -> None:
    ccx.api.add(text_reply("ok"), text_reply("ok"), text_reply("ok"))
    assert ccx.run("-p", "hi", "--output-format", "stream-json", "--verbose").returncode == 0
    assert ccx.run("-p", "hi").returncode == 0
    assert ccx.run("-p", "hi", "--thinking-display", "summarized").returncode == 0
    displays = [r.body["thinking"]["display"] for r in ccx.api.requests]
    assert displays == ["summarized", "omitted", "summarized"]
