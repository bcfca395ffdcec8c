"""Claude Code's headless flags and stream-json input, run through the real `ccx` command."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply

SID = "5a0c1c2e-1111-4222-8333-944445555666"


def user_line(text: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"


def test_system_prompt_flags_settings_and_session_id(ccx: Ccx, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "notes.txt").write_text("outside note\n")
    ccx.api.add(tool_reply(("Read", {"file_path": str(extra / "notes.txt")})), text_reply("ok"))
    settings = json.dumps({"model": "claude-haiku-4-5"})
    run = ccx.run(
        "-p", "hi", "--output-format", "json", "--verbose",
        "--system-prompt", "You are a test double.", "--append-system-prompt", "Say ok.",
        "--add-dir", str(extra), "--settings", settings, "--session-id", SID,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = run.json()
    assert result["session_id"] == SID and ccx.transcripts()[0].stem == SID
    assert ccx.api.requests[0].body["model"] == "claude-haiku-4-5"  # --settings applies
    system = ccx.api.requests[0].system_text()
    assert system.startswith("You are a test double.") and system.rstrip().endswith("Say ok.")
    assert "Working directory" in system  # the environment and memory stay
    assert result["permission_denials"] == []  # --add-dir: reading there needs no approval
    assert "outside note" in json.dumps(ccx.api.requests[1].messages[-1])
    prompt_file = tmp_path / "prompt.md"
    prompt_file.write_text("From a file.")
    ccx.api.add(text_reply("ok"))
    assert ccx.run("-p", "hi", "--system-prompt-file", str(prompt_file)).returncode == 0
    assert ccx.api.requests[-1].system_text().startswith("From a file.")
    missing = ccx.run("-p", "hi", "--system-prompt-file", str(tmp_path / "none.md"))
    assert missing.returncode == 2
    bad = ccx.run("-p", "hi", "--settings", "{not json")
    assert bad.returncode == 1 and "--settings" in bad.stderr + bad.stdout


def test_fork_session_continues_in_a_new_session_with_the_history(ccx: Ccx) -> None:
    ccx.api.add(text_reply("first"), text_reply("second"))
    first = ccx.run("-p", "remember 42", "--output-format", "json").json()
    forked = ccx.run("-p", "what?", "-r", first["session_id"], "--fork-session",
                     "--output-format", "json").json()  # fmt: skip
    assert forked["session_id"] != first["session_id"] and not forked["is_error"]
    assert "remember 42" in json.dumps(ccx.api.requests[1].messages)
    assert len(ccx.transcripts()) == 2


def test_bad_flag_combinations_are_usage_errors(ccx: Ccx) -> None:
    assert ccx.run("-p", "x", "--input-format", "stream-json").returncode == 2
    assert ccx.run("-p", "x", "--session-id", "not-a-uuid").returncode == 2
    assert ccx.run("-p", "x", "-c", "--session-id", SID).returncode == 2
    assert ccx.api.requests == []


def test_resuming_a_claude_code_transcript_fails_and_writes_nothing(ccx: Ccx) -> None:
    home = Path(ccx.env["HOME"])
    folder = home / ".claude" / "projects" / "-repo"
    folder.mkdir(parents=True)
    transcript = folder / f"{SID}.jsonl"
    record = {"parentUuid": None, "isSidechain": False, "type": "user", "sessionId": SID,
              "message": {"role": "user", "content": "hi"}, "uuid": "u1"}  # fmt: skip
    transcript.write_text(json.dumps(record) + "\n")
    before = transcript.read_bytes()
    for target in (SID, str(transcript)):
        run = ccx.run("-p", "go on", "-r", target, "--output-format", "json")
        assert run.returncode == 1, run.stdout
        assert "Claude Code transcript" in run.json()["result"]
    assert transcript.read_bytes() == before
    assert ccx.transcripts() == [] and ccx.api.requests == []


def test_stream_json_input_runs_turns_answers_control_requests_and_skips_bad_lines(
    ccx: Ccx,
) -> None:
    ccx.api.add(text_reply("one"), text_reply("two"))
    stdin = (
        json.dumps({"type": "control_request", "request_id": "r1",
                    "request": {"subtype": "initialize", "hooks": None}}) + "\n"
        + user_line("first") + "this is not json\n"
        + json.dumps({"type": "control_request", "request_id": "r2",
                      "request": {"subtype": "set_permission_mode", "mode": "plan"}}) + "\n"
        + json.dumps({"type": "control_request", "request_id": "r3",
                      "request": {"subtype": "no_such_thing"}}) + "\n"
        + user_line("second")
    )  # fmt: skip
    run = ccx.run("--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
                  stdin=stdin)  # fmt: skip
    assert run.returncode == 0, run.stderr
    events = run.events()
    responses = {e["response"]["request_id"]: e["response"] for e in events
                 if e["type"] == "control_response"}  # fmt: skip
    assert responses["r1"]["subtype"] == "success"
    assert any(c["name"] == "compact" for c in responses["r1"]["response"]["commands"])
    assert responses["r2"]["subtype"] == "success" and responses["r3"]["subtype"] == "error"
    results = [e for e in events if e["type"] == "result"]
    assert [r["result"] for r in results] == ["one", "two"]
    assert [e["subtype"] for e in events if e["type"] == "system"].count("init") == 1
    assert "not JSON" in run.stderr
    # set_permission_mode is answered at once, so it lands before or during the first turn:
    # the plan-mode reminder rides on whichever user message follows it, exactly once
    texts = [request.last_user_text() for request in ccx.api.requests]
    assert [text.split("\n")[0] for text in texts] == ["first", "second"]
    assert sum("Plan mode is on" in text for text in texts) == 1
    assert len(ccx.api.requests[1].messages) == 3  # the first turn is in the second's context
