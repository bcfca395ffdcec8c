"""`ccx -p` under API faults and interrupts: retried, answered, and the session stays usable."""

from __future__ import annotations

import json
import signal
import time

from tests.e2e.conftest import Ccx
from tui.fake_api import Drop, Fault, Stall, StreamError, text_reply, tool_reply


def test_transient_faults_are_retried_until_success(ccx: Ccx) -> None:
    ccx.api.add(
        Fault(429, retry_after=0),
        Fault(529),
        Fault(500),
        StreamError(after_events=3),
        Drop(after_events=3),
        Stall(after_events=1, seconds=20),
        text_reply("Finally."),
    )
    ccx.env["CCX_STREAM_STALL_TIMEOUT_S"] = "1"
    run = ccx.run("-p", "hi", "--output-format", "stream-json")
    assert run.returncode == 0, run.stderr
    events = run.ccx_events()
    retries = [e for e in events if e["type"] == "api_retry"]
    assert [r["attempt"] for r in retries] == [1, 2, 3, 4, 5, 6]
    assert "429" in retries[0]["reason"] and "529" in retries[1]["reason"]
    assert retries[5]["reason"] == "stream stalled"
    assert events[-1]["result"] == "Finally."
    assert len(ccx.api.requests) == 7
    assert ccx.api.errors == []


def test_a_permanent_error_ends_the_turn_but_keeps_the_session(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Read", {"file_path": "README.md"})), Fault(400, message="bad thing"))
    run = ccx.run("-p", "hi", "--output-format", "json")
    assert run.returncode == 1
    result = run.json()
    assert result["is_error"] and result["subtype"] == "error_during_execution"
    assert "bad thing" in result["result"]
    assert "Traceback" not in run.stderr

    ccx.api.add(text_reply("Recovered."))
    again = ccx.run("-c", "-p", "try again", "--output-format", "json")
    assert again.json()["result"] == "Recovered."
    assert ccx.api.errors == []


def test_retries_give_up_after_ten_attempts(ccx: Ccx) -> None:
    ccx.api.add(*[Fault(503) for _ in range(10)])
    run = ccx.run("-p", "hi", "--output-format", "json")
    assert run.returncode == 1
    assert "10 attempts" in run.json()["result"]
    assert len(ccx.api.requests) == 10


def test_interrupt_during_a_tool_answers_it_and_resume_works(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Bash", {"command": "sleep 30"})))
    proc = ccx.popen(
        "-p",
        "wait",
        "--output-format",
        "stream-json",
        "--allowedTools",
        "Bash(sleep *)",
        "--include-ccx-events",
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line).get("subtype") == "ccx_tool_started":
            break
    time.sleep(0.2)
    started = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    rest = proc.stdout.read()
    assert proc.wait(timeout=10) == 130
    assert time.perf_counter() - started < 5
    result = json.loads(rest.splitlines()[-1])
    assert result["subtype"] == "error_interrupted"

    records = ccx.transcript_records()
    messages = [r for r in records if r["type"] == "message"]
    tool_result = messages[2]["message"]["content"][0]
    assert tool_result["type"] == "tool_result" and tool_result["is_error"]
    assert "interrupted" in tool_result["content"]

    ccx.api.add(text_reply("Resumed."))
    again = ccx.run("-c", "-p", "carry on", "--output-format", "json")
    assert again.json()["result"] == "Resumed."
    assert ccx.api.errors == []


def test_killed_mid_tool_is_repaired_on_resume(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Bash", {"command": "sleep 30"})))
    proc = ccx.popen(
        "-p",
        "wait",
        "--output-format",
        "stream-json",
        "--allowedTools",
        "Bash(sleep *)",
        "--include-ccx-events",
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line).get("subtype") == "ccx_tool_started":
            break
    proc.kill()  # no chance to clean up: the transcript ends on an unanswered tool_use
    proc.wait(timeout=10)

    ccx.api.add(text_reply("Resumed after a crash."))
    again = ccx.run("-c", "-p", "carry on", "--output-format", "json")
    assert again.returncode == 0, again.stderr
    assert again.json()["result"] == "Resumed after a crash."
    assert ccx.api.errors == []
    sent = ccx.api.requests[-1].messages
    assert sent[2]["content"][0]["type"] == "tool_result"
