"""Control at every moment through the `ccx` command: a signal during a compaction ends the run
at once with the signal's exit code and the session intact; an empty reply is asked again,
and empty replies that go on fail the run."""

from __future__ import annotations

import json
import signal
import threading
import time
from typing import Any

import pytest

from compaction.notes_writer import NOTES_REQUEST_MARK
from compaction.summary import SUMMARY_REQUEST_MARK
from tests.e2e.conftest import Ccx
from tui.fake_api import Reply, text_reply, tool_reply

STEPS = 20
TASK = "Read every file, one a step."


def kind(request: Any) -> str:
    text = request.last_user_text()
    if NOTES_REQUEST_MARK in text:
        return "notes"
    return "summary" if SUMMARY_REQUEST_MARK in text else "agent"


class Held:
    """Answers notes and summary requests; those of ``kind`` are kept open until released."""

    def __init__(self, held: str) -> None:
        self.held = held
        self.arrived = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: Any) -> Any:
        if kind(request) == self.held:
            self.arrived.set()
            self.release.wait(30)
        return text_reply("<summary>1. Goal: read every file.</summary>")


def long_task(ccx: Ccx) -> None:
    """Steps whose words (not clearable tool output) fill the context: compaction is due soon."""
    for index in range(4):
        (ccx.repo / f"f{index}.py").write_text("value = 1\n" * 300)
    ccx.api.add(
        *[
            tool_reply(("Read", {"file_path": f"f{i % 4}.py"}), text=f"step {i} " + "word " * 3000)
            for i in range(STEPS)
        ],
        text_reply("all read"),
    )


def settled(ccx: Ccx, proc: Any, quiet_s: float = 0.6) -> None:
    """Until no request has come for ``quiet_s`` (the run is waiting on the held one)."""
    count, since = len(ccx.api.requests), time.monotonic()
    while time.monotonic() - since < quiet_s:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
        if len(ccx.api.requests) != count:
            count, since = len(ccx.api.requests), time.monotonic()


@pytest.mark.parametrize(
    ("waiting_on", "sig"),
    [
        ("summary", signal.SIGINT),
        ("summary", signal.SIGTERM),
        ("notes", signal.SIGINT),
        ("notes", signal.SIGTERM),
    ],
    ids=["summary-SIGINT", "summary-SIGTERM", "notes-SIGINT", "notes-SIGTERM"],
)
def test_a_signal_during_a_compaction_ends_the_run_at_once_and_keeps_the_session(
    ccx: Ccx, waiting_on: str, sig: signal.Signals
) -> None:
    held = Held(waiting_on)
    ccx.api.on(lambda r: kind(r) != "agent", held)
    long_task(ccx)
    if waiting_on == "summary":
        ccx.env["CCX_SESSION_MEMORY"] = "0"  # a full compaction: its own summary request
    proc = ccx.popen("-p", TASK, "--output-format", "json", "--autocompact", "30000")
    try:
        assert held.arrived.wait(60), proc.communicate()
        settled(ccx, proc)  # the compaction waits on the held request now
        sent = len(ccx.api.requests)
        started = time.perf_counter()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=10)
        took = time.perf_counter() - started
    finally:
        held.release.set()
    assert proc.returncode == 128 + sig, err
    assert took < 1.0, took
    assert len(ccx.api.requests) == sent  # nothing went out after the signal
    result = json.loads(out.splitlines()[-1])
    assert result["subtype"] == "error_interrupted" and result["is_error"]
    if waiting_on == "summary":
        assert "during a compaction" in result["result"]

    # Only the compactions that finished (earlier ones) are on record: none half-applied.
    records = ccx.transcript_records()
    boundaries = [i for i, r in enumerate(records) if r["type"] == "compact_boundary"]
    assert len(boundaries) == len(result["compactions"])
    since = records[boundaries[-1] + 1 :] if boundaries else records
    replies = [r for r in since if r["type"] == "message" and r["message"]["role"] == "assistant"]
    last_step = int(json.dumps(replies[-1]["message"]["content"]).split("step ", 1)[1].split()[0])
    assert last_step < STEPS - 1

    # -c goes on from the conversation as it was before the interrupted compaction began.
    ccx.env.pop("CCX_SESSION_MEMORY", None)
    ccx.api.on(lambda r: r.last_user_text() == "go on", text_reply("went on"))
    again = ccx.run("-c", "-p", "go on", "--output-format", "json")
    assert again.returncode == 0, again.stderr
    assert again.json()["result"] == "went on"
    request = ccx.api.requests[-1]
    assert kind(request) == "agent"
    assert TASK in request.all_text()
    assert f"step {last_step} " in request.all_text()
    assert ccx.api.errors == []


def six_steps(ccx: Ccx, *empty: Reply) -> None:
    for index in range(5):
        (ccx.repo / f"s{index}.py").write_text(f"STEP = {index}\n")
    ccx.api.add(
        tool_reply(("Read", {"file_path": "s0.py"})),
        *empty,
        *[tool_reply(("Read", {"file_path": f"s{i}.py"})) for i in range(1, 5)],
        text_reply("six steps done"),
    )


def test_an_empty_reply_is_asked_again_and_the_task_finishes(ccx: Ccx) -> None:
    six_steps(ccx, Reply(content=[]))
    run = ccx.run("-p", "six steps", "--output-format", "stream-json")
    assert run.returncode == 0, run.stderr
    lines = run.events()
    result = lines[-1]
    assert result["result"] == "six steps done" and result["num_turns"] == 6
    assert len(ccx.api.requests) == 7
    assert ccx.api.requests[2].messages == ccx.api.requests[1].messages
    notices = [line for line in lines if line.get("subtype") == "ccx_notice"]
    assert any("empty reply" in json.dumps(line) for line in notices), lines  # said
    assert ccx.api.errors == []


@pytest.mark.parametrize("output_format", ["text", "stream-json"])
def test_empty_replies_that_go_on_fail_the_run(ccx: Ccx, output_format: str) -> None:
    six_steps(ccx, *[Reply(content=[])] * 3)
    run = ccx.run("-p", "six steps", "--output-format", output_format)
    assert run.returncode == 1
    assert len(ccx.api.requests) == 4  # the first step, then the empty reply three times
    if output_format == "text":
        assert run.stdout == "" and "empty reply 3 times in a row" in run.stderr
        return
    lines = run.events()
    result = lines[-1]
    assert result["type"] == "result" and result["is_error"]
    assert result["subtype"] == "error_during_execution"
    assert "empty reply" in result["result"]
    errors = [line for line in lines if line.get("subtype") == "ccx_error"]
    assert len(errors) == 1 and "empty reply" in json.dumps(errors[0])  # an error event too
