"""Background jobs through the `ccx` command: Bash `run_in_background`, TaskOutput, TaskStop,
the notice of a job's end (once), jobs dying with ccx, and a job's status after a compaction."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from typing import Any

import pytest

from compaction.summary import SUMMARY_REQUEST_MARK
from tests.e2e.conftest import Ccx
from tests.host_pids import new_tag, pids_tagged, tagged_sleep, wait_tagged_gone
from tui.fake_api import RecordedRequest, text_reply, tool_reply

JOB_ID = re.compile(r"background as job (b[0-9a-z]{8})")
BYPASS = ("--permission-mode", "bypassPermissions")


def job_id_in(request: RecordedRequest) -> str:
    found = JOB_ID.search(request.all_text())
    assert found, "no job id in the request"
    return found.group(1)


def background(command: str, description: str = "a background job", **extra: Any) -> Any:
    tool_input = {"command": command, "description": description, "run_in_background": True}
    return tool_reply(("Bash", {**tool_input, **extra}))


def test_a_background_command_returns_at_once_and_its_end_is_told_once(ccx: Ccx) -> None:
    seen_done: list[bool] = []

    def started(request: RecordedRequest) -> Any:
        seen_done.append((ccx.repo / "done.txt").exists())
        return text_reply("Started.")

    command = "echo out-line; sleep 1; echo finished > done.txt; exit 3"
    ccx.api.add(background(command, "count slowly"), started, text_reply("It failed with 3."))
    run = ccx.run("-p", "run it in the background", "--output-format", "json", *BYPASS)
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "It failed with 3."
    assert seen_done == [False]  # the model had its answer before the command ended
    _, second, third = ccx.api.requests
    job_id = job_id_in(second)
    notice = third.last_user_text()
    assert "<job-notification>" in notice and f"<job-id>{job_id}</job-id>" in notice
    assert "<status>failed</status>" in notice and "<exit-code>3</exit-code>" in notice
    assert "count slowly" in notice
    assert third.all_text().count("<job-notification>") == 1
    assert len(ccx.api.requests) == 3 and ccx.api.errors == []
    output = next((ccx.config / "projects").glob(f"*/*/tasks/{job_id}.output"))
    assert output.read_text() == "out-line\n"


def read_output(task_id_from: str, **params: Any) -> Any:
    """A reply calling TaskOutput on the job named in the last request."""

    def reply(request: RecordedRequest) -> Any:
        return tool_reply(("TaskOutput", {"task_id": job_id_in(request), **params}))

    return reply


def test_output_is_read_incrementally_and_stop_kills_the_group(ccx: Ccx) -> None:
    go, tag = ccx.repo / "go", new_tag()
    command = (
        f"echo one; while [ ! -f {go} ]; do sleep 0.05; done; echo two; echo twenty; "
        f"({tagged_sleep(tag)}) & wait"
    )
    first_read = read_output("", block=True, timeout=1500)

    def second_read(request: RecordedRequest) -> Any:
        go.touch()
        return tool_reply(("TaskOutput", {"task_id": job_id_in(request), "timeout": 1500,
                                          "filter": "^two"}))  # fmt: skip

    def stop(request: RecordedRequest) -> Any:
        return tool_reply(("TaskStop", {"task_id": job_id_in(request)}))

    ccx.api.add(background(command), first_read, second_read, stop, text_reply("Stopped."))
    run = ccx.run("-p", "follow the job", "--output-format", "json", *BYPASS)
    assert run.returncode == 0, run.stderr
    requests = ccx.api.requests
    one, two, stopped = (r.messages[-1]["content"][0] for r in requests[2:5])
    assert "one" in str(one["content"]) and "two" not in str(one["content"])
    assert "<status>running</status>" in str(one["content"])
    assert "two" in str(two["content"]) and "one" not in str(two["content"])
    assert "twenty" not in str(two["content"])  # filtered out
    assert "Stopped job" in str(stopped["content"]) and not stopped.get("is_error")
    assert wait_tagged_gone(tag, within=5) == []
    assert "<job-notification>" not in requests[-1].all_text()  # a stop the model made: no notice


def wait_for(tag: str, proc: subprocess.Popen[str], count: int) -> list[int]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if len(pids := pids_tagged(tag)) == count:
            return pids
        if proc.poll() is not None:
            pytest.fail(f"ccx exited early ({proc.returncode}): {proc.communicate()[1]}")
        time.sleep(0.05)
    pytest.fail("the background job did not start its sleeps")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "terminate"])
def test_jobs_die_with_ccx(ccx: Ccx, sig: signal.Signals) -> None:
    tag = new_tag()
    command = f"({tagged_sleep(tag + '-bg')}) & bash -c '{tagged_sleep(tag + '-fg')}'"
    ccx.api.add(background(command), text_reply("Started; waiting."))
    proc = ccx.popen("-p", "start it", *BYPASS)
    try:
        wait_for(tag, proc, 2)
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        assert wait_tagged_gone(tag, within=5) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.communicate()
        for pid in pids_tagged(tag):
            os.kill(pid, signal.SIGKILL)


def test_after_a_compaction_the_running_job_is_named_once(ccx: Ccx) -> None:
    ccx.api.add(
        background("sleep 600", "serve the docs"),
        text_reply("Started."),
        text_reply("<analysis>a</analysis><summary>The user asked for a server.</summary>"),
        text_reply("It is still running."),
    )
    stdin = "start the server\n/compact\nis it up?\n/tasks\n"
    run = ccx.run("--plain", *BYPASS, stdin=stdin)
    assert run.returncode == 0, run.stderr
    job_id = job_id_in(ccx.api.requests[1])
    listed = [line for line in run.stdout.splitlines() if line.strip().startswith(job_id)]
    assert len(listed) == 1 and "running" in listed[0] and "serve the docs" in listed[0]
    (summary,) = [r for r in ccx.api.requests if SUMMARY_REQUEST_MARK in r.last_user_text()]
    after = ccx.api.requests[-1]
    assert after is not summary and "is it up?" in after.last_user_text()
    lines = [line for line in after.all_text().splitlines() if job_id in line]
    assert len(lines) == 1, lines
    assert "serve the docs" in lines[0] and "running" in lines[0] and ".output" in lines[0]
    assert ccx.api.errors == []
    assert json.dumps(after.body).count(f"- {job_id} (") == 1


def test_a_job_that_ends_during_a_turn_is_told_in_the_next_tool_result(ccx: Ccx) -> None:
    ccx.api.add(
        background("echo quick", "a quick one"),
        tool_reply(("Bash", {"command": "sleep 1"})),
        text_reply("Both done."),
    )
    run = ccx.run("-p", "go", "--output-format", "json", *BYPASS)
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Both done."
    assert len(ccx.api.requests) == 3  # no extra turn: the notice rode on a tool result
    last = ccx.api.requests[-1]
    assert "<job-notification>" in last.last_user_text()
    assert "<status>completed</status>" in last.last_user_text()
    assert last.all_text().count("<job-notification>") == 1


def test_a_background_command_is_gated_like_a_foreground_one(ccx: Ccx) -> None:
    marker = ccx.repo / "ran.txt"
    ccx.api.add(background(f"touch {marker}"), text_reply("Could not."))
    run = ccx.run("-p", "go", "--output-format", "json")  # default mode, nobody to ask
    assert run.returncode == 0, run.stderr
    result = ccx.api.requests[1].messages[-1]["content"][0]
    assert result["is_error"] and "denied" in str(result["content"])
    ccx.api.add(background(f"touch {marker}"), text_reply("Denied."))
    denied = ccx.run("-p", "go", "--permission-mode", "bypassPermissions",
                     "--disallowedTools", "Bash(touch:*)")  # fmt: skip
    assert denied.returncode == 0, denied.stderr
    assert "denied" in str(ccx.api.requests[-1].messages[-1]["content"][0]["content"])
    time.sleep(0.3)
    assert not marker.exists()


def test_a_long_job_with_new_output_is_mentioned_at_most_once_an_interval(ccx: Ccx) -> None:
    ccx.env["CCX_JOB_PROGRESS_INTERVAL_S"] = "0.5"
    go = ccx.repo / "go"

    def waiting(_request: RecordedRequest) -> Any:
        go.touch()  # the build may finish once this turn is over
        return text_reply("Waiting for the build.")

    command = f"echo compiling a; while [ ! -f {go} ]; do sleep 0.05; done; echo linked"
    ccx.api.add(
        background(command, "build"),
        tool_reply(("Bash", {"command": "sleep 1"})),
        tool_reply(("Bash", {"command": "true"})),
        waiting,
        text_reply("The build finished."),
    )
    run = ccx.run("-p", "build it", "--output-format", "json", *BYPASS)
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "The build finished."
    progress = [
        r for r in ccx.api.requests if "is still running and has written" in r.last_user_text()
    ]
    assert len(progress) == 1  # new output once; nothing new after that until it ended
    assert "compiling a" in progress[0].last_user_text()
    assert "<status>completed</status>" in ccx.api.requests[-1].last_user_text()
