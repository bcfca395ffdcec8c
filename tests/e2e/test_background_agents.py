"""Background agents end to end: `run_in_background` on the Agent tool, TaskStop, and what a
compaction brings back of a running agent (the real `ccx -p` against the fake API)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from tests.e2e.conftest import Ccx
from tests.e2e.subagent_helpers import (
    SECRET,
    agent_call,
    briefed,
    first_user_text,
    result_text,
    tool_results,
)
from tui.fake_api import text_reply, tool_reply
from tui.fake_api.recording import RecordedRequest


def _job_id(request: RecordedRequest) -> str:
    match = re.search(r"agentId: (a[0-9a-z]{8})", json.dumps(request.body))
    assert match, "no agent id in the request"
    return match.group(1)


def test_background_agent_returns_at_once_and_the_model_is_told_when_it_ends(ccx: Ccx) -> None:
    """run_in_background: the call answers with an id and an output file before the subagent
    has its answer; the parent's turn ends; ccx -p waits for the job, tells the model (once),
    and TaskOutput reads the agent's calls and report from its output file."""
    readme = str(ccx.repo / "README.md")
    ccx.api.on(
        lambda r: "BACKGROUND" in first_user_text(r) and len(r.messages) == 1,
        tool_reply(("Read", {"file_path": readme})),
    )
    ccx.api.on(
        lambda r: "BACKGROUND" in first_user_text(r) and len(r.messages) > 1,
        text_reply("background report: all fine", delay_s=1.5),
    )
    ccx.api.add(
        tool_reply(agent_call("BACKGROUND: check", run_in_background=True)),
        text_reply("Started it; waiting."),
        lambda r: tool_reply(("TaskOutput", {"task_id": _job_id(r)})),
        text_reply("The agent says all is fine."),
    )

    run = ccx.run("-p", "check in the background", "--output-format", "json")

    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "The agent says all is fine."
    parent = [r for r in ccx.api.requests if "BACKGROUND" not in first_user_text(r)]
    subagent = [r for r in ccx.api.requests if "BACKGROUND" in first_user_text(r)]
    (started,) = tool_results(parent[1])
    assert "running in the background" in result_text(started)
    answered = subagent[-1].received_at + subagent[-1].server_seconds
    assert parent[1].received_at < answered  # the call returned before the subagent was done
    job_id = _job_id(parent[1])
    told = json.dumps(parent[2].messages[-1])
    assert f"<job-id>{job_id}</job-id>" in told and "<status>completed</status>" in told
    (output,) = tool_results(parent[3])
    assert "✓ Read README.md" in result_text(output)
    assert "background report: all fine" in result_text(output)
    assert json.dumps(parent[3].body).count("<job-notification>") == 1  # told once
    assert run.json()["cost_by_purpose"]["subagent"]["requests"] == 2


def test_task_stop_ends_a_background_agent(ccx: Ccx) -> None:
    """TaskStop on a background agent cancels it mid-request: the job is killed, the model
    is told so, and `ccx -p` does not wait for the subagent's answer (two minutes away: the
    run's 100 s timeout would expire first)."""
    ccx.api.on(briefed("FOREVER"), text_reply("too late", delay_s=120))
    ccx.api.add(
        tool_reply(agent_call("FOREVER: take your time", run_in_background=True)),
        lambda r: tool_reply(("TaskStop", {"task_id": _job_id(r)})),
        text_reply("Stopped it."),
    )

    run = ccx.run("-p", "start and stop", "--output-format", "json", timeout=100)

    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Stopped it."
    # The subagent's own request may reach the server after the parent's last one (its
    # thread starts under load), so the parent's requests are picked by their prompt.
    parent = [r for r in ccx.api.requests if "FOREVER" not in first_user_text(r)]
    (stopped,) = tool_results(parent[-1])
    assert not stopped.get("is_error"), stopped
    assert "stop" in result_text(stopped).lower()


def test_a_subagent_manages_its_own_context(ccx: Ccx) -> None:
    """Eight big reads overflow a 30K window inside the subagent: its own context manager
    clears or compacts them (the parent's secret never reaches its summary request), and none
    of that reaches the parent, which gets the report alone."""
    body = "value = 1\n" * 1_500
    for index in range(8):
        (ccx.repo / f"big{index}.py").write_text(body)
    ccx.api.on(
        lambda r: SUMMARY_MARK in r.last_user_text(),
        text_reply("<summary>read big files</summary>"),
    )
    for index in range(8):
        ccx.api.on(
            lambda r, i=index: "BIGREAD" in first_user_text(r) and _reads_done(r) == i,
            tool_reply(("Read", {"file_path": str(ccx.repo / f"big{index}.py")})),
        )
    ccx.api.on(
        lambda r: "BIGREAD" in first_user_text(r) and _reads_done(r) >= 8,
        text_reply("eight files of value = 1"),
    )
    ccx.api.add(tool_reply(agent_call("BIGREAD: read big0.py to big7.py")), text_reply("ok"))

    run = ccx.run("-p", f"{SECRET} go", "--output-format", "json", "--autocompact", "30000")

    assert run.returncode == 0, run.stderr
    assert ccx.api.errors == []
    lines = lambda r: json.dumps(r.body).count("value = 1")  # noqa: E731
    subagent = [r for r in ccx.api.requests if "BIGREAD" in first_user_text(r)]
    assert lines(subagent[-1]) < 8 * 1_500  # cleared or summarized, not all kept
    for request in ccx.api.requests:
        if SUMMARY_MARK in request.last_user_text():
            assert SECRET not in json.dumps(request.body)
    parent = [
        r for r in ccx.api.requests if r not in subagent and SUMMARY_MARK not in r.last_user_text()
    ]
    assert all(lines(r) == 0 for r in parent[:-1])
    assert "eight files of value = 1" in json.dumps(parent[-1].messages[-1])
    assert run.json()["compactions"] == []  # the parent's own context was never compacted


def _reads_done(request: RecordedRequest) -> int:
    """How many Read calls the subagent's conversation holds (cleared ones included)."""
    return sum(
        1
        for message in request.messages
        if message["role"] == "assistant"
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_use"
    )


def test_after_a_compaction_the_running_agent_and_the_agents_list_come_back_once(
    ccx: Ccx,
) -> None:
    """/compact while a background agent runs: the next request names the agent's job once
    (description, running, output file) and carries the list of available agents once in its
    messages (the Agent tool's description says it too)."""
    # the user's own agent: piped input cannot trust the folder, so a project's would not load
    agents = Path(ccx.env["HOME"]) / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "scout.md").write_text("---\ndescription: Finds things\n---\nYou find things.\n")
    ccx.api.on(briefed("SLOWSCOUT"), text_reply("much later", delay_s=30))
    ccx.api.add(
        tool_reply(agent_call("SLOWSCOUT: look", subagent_type="scout", run_in_background=True)),
        text_reply("Started the scout."),
        text_reply("<analysis>a</analysis><summary>The user sent a scout.</summary>"),
        text_reply("It is still looking."),
    )

    run = ccx.run("--plain", stdin="send a scout\n/compact\nis it back?\n")

    assert run.returncode == 0, run.stderr
    parent = [r for r in ccx.api.requests if "SLOWSCOUT" not in first_user_text(r)]
    job_id = _job_id(parent[1])
    after = parent[-1]
    assert SUMMARY_MARK in parent[-2].last_user_text() and "is it back?" in after.last_user_text()
    lines = [line for line in after.all_text().splitlines() if f"- {job_id} (" in line]
    assert len(lines) == 1, lines
    assert "look around" in lines[0] and "running" in lines[0] and ".output" in lines[0]
    messages = json.dumps(after.messages)
    assert messages.count("- scout: Finds things (Tools: all tools)") == 1
    assert messages.count("Available agent types") == 1
    assert "Available agent types" not in json.dumps(parent[0].messages)
