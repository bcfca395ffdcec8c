"""`ccx -p` end to end: tools on real files, output formats, sessions, permissions."""

from __future__ import annotations

import json

from tests.e2e.conftest import Ccx
from tui.fake_api import Drop, Fault, text_reply, tool_reply


def test_multi_step_tool_session(ccx: Ccx) -> None:
    app = str(ccx.repo / "src" / "app.py")
    ccx.api.add(
        tool_reply(
            ("Read", {"file_path": app}), ("Grep", {"pattern": "RETRY_LIMIT", "path": "src"})
        ),
        tool_reply(("Bash", {"command": "ls src && echo listed"})),
        tool_reply(
            (
                "Edit",
                {
                    "file_path": app,
                    "old_string": "RETRY_LIMIT = 3",
                    "new_string": "RETRY_LIMIT = 5",
                },
            )
        ),
        text_reply("Raised the retry limit to 5."),
    )
    run = ccx.run(
        "-p",
        "raise the retry limit",
        "--output-format",
        "json",
        "--allowedTools",
        "Bash(ls *)",
        "Edit",
    )

    assert run.returncode == 0, run.stderr
    result = run.json()
    assert result["type"] == "result" and result["subtype"] == "success" and not result["is_error"]
    assert result["result"] == "Raised the retry limit to 5."
    assert result["num_turns"] == 4
    assert set(result["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    }
    assert result["usage"]["cache_read_input_tokens"] > 0, (
        "the prefix should be read from the cache"
    )
    assert result["total_cost_usd"] > 0 and result["duration_ms"] > 0 and result["session_id"]
    assert (ccx.repo / "src" / "app.py").read_text().startswith("RETRY_LIMIT = 5")
    assert ccx.api.errors == []
    second, third, fourth = ccx.api.requests[1:4]
    assert "RETRY_LIMIT = 3" in second.all_text()  # the Read result went back to the model
    assert "listed" in third.all_text()  # the Bash output too
    assert "RETRY_LIMIT = 5" in fourth.all_text()  # and the edit's snippet


def test_text_output_and_prompt_from_stdin(ccx: Ccx) -> None:
    ccx.api.add(text_reply("It is a sample project."))
    run = ccx.run("-p", stdin="what is this repo?")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "It is a sample project.\n"
    assert ccx.api.requests[0].last_user_text() == "what is this repo?"


def test_stream_json_speaks_claude_codes_schema(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Glob", {"pattern": "**/*.py"})), text_reply("One module."))
    run = ccx.run("-p", "list modules", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0, run.stderr
    events = run.events()
    init = events[0]
    assert (init["type"], init["subtype"]) == ("system", "init")
    assert "Glob" in init["tools"] and init["permissionMode"] == "default"
    assert init["cwd"] == str(ccx.repo) and "compact" in init["slash_commands"]
    assistants = [e for e in events if e["type"] == "assistant"]
    first = assistants[0]["message"]
    assert first["model"] and first["id"].startswith("msg_") and first["role"] == "assistant"
    assert first["stop_reason"] == "tool_use" and "output_tokens" in first["usage"]
    tool_use = first["content"][0]
    (user,) = [e for e in events if e["type"] == "user"]
    (block,) = user["message"]["content"]
    assert block["type"] == "tool_result" and block["tool_use_id"] == tool_use["id"]
    assert "app.py" in str(block["content"])
    assert all(e["session_id"] == init["session_id"] for e in events)
    result = events[-1]
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["result"] == "One module." and result["stop_reason"] == "end_turn"
    assert not any(e["type"] == "stream_event" for e in events)  # only with partial messages
    # ccx's own per-request lines (an SDK program would print them as noise) only when asked
    chatty = ("ccx_request_started", "ccx_usage", "ccx_context", "ccx_tool_started")
    assert not any(e.get("subtype") in chatty for e in events)
    ccx.api.add(tool_reply(("Glob", {"pattern": "**/*.py"})), text_reply("One module."))
    asked = ccx.run("-p", "list", "--output-format", "stream-json", "--include-ccx-events")
    started = [e for e in asked.events() if e.get("subtype") == "ccx_tool_started"]
    assert started[0]["name"] == "Glob"  # ccx's own events, under a prefix of their own
    assert {e.get("subtype") for e in asked.events()} >= set(chatty)


def test_continue_and_resume_keep_the_conversation(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Read", {"file_path": "src/app.py"})), text_reply("Read it."))
    first = ccx.run("-p", "read app.py", "--output-format", "json")
    session_id = first.json()["session_id"]

    # Edit without a new Read: the resumed session rebuilt its file-state cache.
    ccx.api.add(
        tool_reply(("Edit", {"file_path": "src/app.py", "old_string": "= 3", "new_string": "= 4"})),
        text_reply("Edited."),
    )
    second = ccx.run("-c", "-p", "now edit it", "--output-format", "json", "--allowedTools", "Edit")
    assert second.json()["session_id"] == session_id
    assert "RETRY_LIMIT = 4" in (ccx.repo / "src" / "app.py").read_text()
    request = ccx.api.requests[2]
    assert request.messages[0]["content"][0]["text"] == "read app.py"
    assert len(request.messages) == 5  # prompt, Read, result, answer, new prompt

    ccx.api.add(text_reply("Third."))
    third = ccx.run("-r", session_id, "-p", "and again", "--output-format", "json")
    assert third.json()["session_id"] == session_id
    assert len(ccx.api.requests[-1].messages) == 9
    assert ccx.api.errors == []
    assert len(ccx.transcripts()) == 1


def test_copy_answers_with_the_last_reply(ccx: Ccx) -> None:
    ccx.api.add(text_reply("First line.\nSecond line."))
    ccx.run("-p", "say two lines")
    copied = ccx.run("-c", "-p", "/copy")
    assert copied.returncode == 0
    assert copied.stdout.strip() == "First line.\nSecond line."  # the reply itself, no escapes
    assert "\x1b" not in copied.stdout
    empty = ccx.run("-p", "/copy")
    assert empty.returncode == 1 and "no reply to copy" in empty.stdout + empty.stderr
    assert len(ccx.api.requests) == 1  # /copy never asks the model


def test_unknown_resume_id_is_a_clear_error(ccx: Ccx) -> None:
    run = ccx.run("-r", "no-such-session", "-p", "hi", "--output-format", "json")
    assert run.returncode == 1
    assert "no-such-session" in run.json()["result"]
    assert "Traceback" not in run.stderr


def test_headless_denies_what_it_cannot_ask(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Bash", {"command": "touch hacked"})), text_reply("Could not run it."))
    run = ccx.run("-p", "touch a file", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    result = run.json()
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]
    assert not (ccx.repo / "hacked").exists()
    (block,) = [
        b for b in ccx.api.requests[1].messages[-1]["content"] if b["type"] == "tool_result"
    ]
    assert block["is_error"] is True
    assert "denied" in block["content"] and "--allowedTools" in block["content"]


def test_disallowed_tools_and_plan_mode(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Read", {"file_path": "README.md"})), text_reply("No."))
    run = ccx.run("-p", "read", "--output-format", "json", "--disallowedTools", "Read(./README.md)")
    assert run.returncode == 0
    (block,) = ccx.api.requests[1].messages[-1]["content"][:1]
    assert block["is_error"] and "denied" in block["content"]

    ccx.api.add(
        tool_reply(("Write", {"file_path": "new.txt", "content": "x"})), text_reply("Planned.")
    )
    run = ccx.run("-p", "write", "--output-format", "json", "--permission-mode", "plan")
    assert run.returncode == 0
    assert not (ccx.repo / "new.txt").exists()
    assert "plan" in ccx.api.requests[-1].messages[-1]["content"][0]["content"].lower()


def test_max_turns_stops_with_a_clear_subtype(ccx: Ccx) -> None:
    ccx.api.add(*[tool_reply(("Glob", {"pattern": "*"})) for _ in range(3)])
    run = ccx.run("-p", "loop", "--output-format", "json", "--max-turns", "2")
    assert run.returncode == 1
    result = run.json()
    assert result["subtype"] == "error_max_turns" and result["num_turns"] == 2
    records = ccx.transcript_records()
    last = [r for r in records if r["type"] == "message"][-1]
    assert last["message"]["content"][0]["type"] == "tool_result"  # every tool_use answered


def test_malformed_tool_input_gets_an_error_result(ccx: Ccx) -> None:
    ccx.api.add(
        tool_reply(("Read", '{"file_path": "src/app.py"')),  # truncated JSON
        tool_reply(("Read", {"file_path": 42})),  # wrong type
        tool_reply(("Frobnicate", {})),  # no such tool
        text_reply("Gave up."),
    )
    run = ccx.run("-p", "go", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    results = [r.messages[-1]["content"][0] for r in ccx.api.requests[1:4]]
    assert all(block["is_error"] for block in results)
    assert "not valid JSON" in results[0]["content"]
    assert "file_path" in results[1]["content"]
    assert "Frobnicate" in results[2]["content"]
    assert ccx.api.errors == []


def test_version_is_fast_path(ccx: Ccx) -> None:
    run = ccx.run("--version")
    assert run.returncode == 0 and "ccx" in run.stdout


def test_transcript_is_json_lines_with_every_message(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Read", {"file_path": "README.md"})), text_reply("Done."))
    ccx.run("-p", "read the readme")
    records = ccx.transcript_records()
    assert records[0]["type"] == "session"
    kinds = [r["kind"] for r in records if r["type"] == "message"]
    assert kinds == ["prompt", "response", "tool_result", "response"]
    assert any(r["type"] == "file_state" and r["path"].endswith("README.md") for r in records)
    assert json.dumps(records)  # every line parsed


def test_stream_json_says_when_streamed_text_is_discarded(ccx: Ccx) -> None:
    ccx.api.add(Drop(after_events=4), text_reply("The whole answer."))
    run = ccx.run(
        "-p", "hi", "--output-format", "stream-json", "--include-partial-messages", timeout=30
    )
    assert run.returncode == 0, run.stderr
    kinds = [event["type"] for event in run.ccx_events()]
    discarded = kinds.index("response_discarded")
    assert kinds.index("stream_event") < discarded < kinds.index("api_retry")
    assert run.events()[-1]["result"] == "The whole answer."


def test_an_api_error_is_said_once(ccx: Ccx) -> None:
    """-p with text output: a refused request is one line on stderr (it was two: the error
    event and the result), and the exit code says it failed; json keeps its error event."""
    ccx.api.add(Fault(status=400, message="prompt is bad"))
    run = ccx.run("-p", "hello")
    assert run.returncode == 1
    assert run.stderr.count("prompt is bad") == 1, run.stderr
    assert run.stdout == ""
