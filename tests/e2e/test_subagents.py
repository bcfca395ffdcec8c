"""Subagents end to end: the real `ccx -p` with the Agent tool against the fake API.

The parent's requests take the script in order; a subagent's requests are told
apart by their system prompt (the agent definition's body) or by their first
user message (the Agent call's prompt), and answered by routes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.e2e.conftest import Ccx
from tests.e2e.subagent_helpers import (
    SECRET,
    agent_call,
    briefed,
    first_user_text,
    result_text,
    system_text,
    tool_names,
    tool_results,
)
from tui.fake_api import Fault, text_reply, tool_reply


def test_subagent_sees_only_its_brief_and_reports_back(ccx: Ccx) -> None:
    """Isolation: no request of the subagent carries the parent's conversation; its final text
    is the Agent call's result; it has no Agent tool; its cost counts under "subagent"."""
    readme = str(ccx.repo / "README.md")
    ccx.api.on(
        lambda r: "BRIEF-1" in first_user_text(r) and len(r.messages) == 1,
        tool_reply(("Read", {"file_path": readme})),
    )
    ccx.api.on(
        lambda r: "BRIEF-1" in first_user_text(r) and len(r.messages) > 1,
        text_reply("README says: a sample project."),
    )
    ccx.api.add(
        tool_reply(agent_call("BRIEF-1: summarize README.md")),
        text_reply("The subagent says it is a sample project."),
    )

    run = ccx.run("-p", f"remember {SECRET} and delegate", "--output-format", "json")

    assert run.returncode == 0, run.stderr
    subagent = [r for r in ccx.api.requests if "BRIEF-1" in first_user_text(r)]
    parent = [r for r in ccx.api.requests if r not in subagent]
    assert len(subagent) == 2 and len(parent) == 2
    for request in subagent:
        assert SECRET not in json.dumps(request.body)
        assert "Agent" not in tool_names(request) and "Task" not in tool_names(request)
        assert "Read" in tool_names(request) and "Bash" in tool_names(request)
        assert "general-purpose agent" not in system_text(request)  # its own system prompt
    assert "Agent" in tool_names(parent[0])
    assert "general-purpose" in next(
        t["description"] for t in parent[0].body["tools"] if t["name"] == "Agent"
    )
    (result,) = tool_results(parent[1])
    assert not result.get("is_error")
    assert "README says: a sample project." in result_text(result)
    assert "tool_uses: 1" in result_text(result)
    out = run.json()
    assert out["result"] == "The subagent says it is a sample project."
    assert out["cost_by_purpose"]["subagent"]["requests"] == 2


def test_four_agent_calls_in_one_message_run_at_the_same_time(ccx: Ccx) -> None:
    """Concurrency: each subagent's request waits 3 s at the server; all four arrive before
    the first is answered, and each result goes back to its own call."""
    for n in range(4):
        ccx.api.on(briefed(f"PART-{n}"), text_reply(f"report {n}", delay_s=3.0))
    calls = [(*agent_call(f"PART-{n}: do part {n}"), f"toolu_part{n}") for n in range(4)]
    ccx.api.add(tool_reply(*calls), text_reply("All four parts done."))

    run = ccx.run("-p", "split the work", "--output-format", "json")

    assert run.returncode == 0, run.stderr
    subagent = [r for r in ccx.api.requests if "PART-" in first_user_text(r)]
    assert len(subagent) == 4
    arrivals = sorted(r.received_at for r in subagent)
    assert arrivals[-1] - arrivals[0] < 3.0  # run one after another, 3 s apart at least
    results = {b["tool_use_id"]: result_text(b) for b in tool_results(ccx.api.requests[-1])}
    for n in range(4):
        assert f"report {n}" in results[f"toolu_part{n}"]


def test_custom_agent_from_claude_agents_gets_only_its_tools_and_model(ccx: Ccx) -> None:
    """A project agent: its body is the system prompt, `tools` restricts what it may call
    (a call to anything else is refused), `model: haiku` picks its model; the Task alias
    runs it; a malformed agent file is skipped with a warning."""
    agents = ccx.repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code for bugs\ntools: Read, Grep\n"
        "model: haiku\n---\nYou are REVIEWER-PROMPT, a careful reviewer.\n"
    )
    (agents / "broken.md").write_text("---\nname: broken\n")  # frontmatter never closed
    reviewer = lambda r: "REVIEWER-PROMPT" in system_text(r)  # noqa: E731
    ccx.api.on(
        lambda r: reviewer(r) and len(r.messages) == 1,
        tool_reply(("Bash", {"command": "touch pwned.txt"})),
    )
    ccx.api.on(lambda r: reviewer(r) and len(r.messages) > 1, text_reply("No bugs found."))
    ccx.api.add(
        tool_reply(
            (
                "Task",
                {"description": "review", "prompt": "review app.py", "subagent_type": "reviewer"},
            )
        ),
        text_reply("Reviewed."),
    )

    run = ccx.run("-p", "review", "--permission-mode", "bypassPermissions")

    assert run.returncode == 0, run.stderr
    assert run.stdout == "Reviewed.\n"
    assert "broken.md is malformed" in run.stderr
    first, second = [r for r in ccx.api.requests if reviewer(r)]
    assert sorted(tool_names(first)) == ["Grep", "Read"]
    assert first.body["model"] == "claude-haiku-5-5"
    assert "You are REVIEWER-PROMPT" in system_text(first)
    (refused,) = tool_results(second)
    assert refused["is_error"] is True and "No tool named 'Bash'" in result_text(refused)
    assert not (ccx.repo / "pwned.txt").exists()
    parent = [r for r in ccx.api.requests if not reviewer(r)]
    listing = next(t["description"] for t in parent[0].body["tools"] if t["name"] == "Agent")
    assert "- reviewer: Reviews code for bugs (Tools: Read, Grep)" in listing
    assert "broken" not in listing
    (report,) = tool_results(parent[1])
    assert "No bugs found." in result_text(report)


def test_unknown_type_and_a_failing_subagent_are_tool_errors_and_the_parent_goes_on(
    ccx: Ccx,
) -> None:
    ccx.api.on(briefed("DOOMED"), Fault(400, "invalid_request_error", "bad things"))
    ccx.api.add(
        tool_reply(agent_call("anything", subagent_type="no-such-agent")),
        tool_reply(agent_call("DOOMED: try this")),
        text_reply("Carried on without them."),
    )

    run = ccx.run("-p", "go", "--output-format", "json")

    assert run.returncode == 0, run.stderr
    parent = [r for r in ccx.api.requests if "DOOMED" not in first_user_text(r)]
    (unknown,) = tool_results(parent[1])
    assert unknown["is_error"] is True
    assert "Unknown subagent_type 'no-such-agent'" in result_text(unknown)
    assert "general-purpose" in result_text(unknown)
    (failed,) = tool_results(parent[2])
    assert failed["is_error"] is True and "bad things" in result_text(failed)
    assert run.json()["result"] == "Carried on without them."


def test_subagent_stop_hook_sends_the_subagent_on_once(ccx: Ccx) -> None:
    """SubagentStop blocks the first stop (the subagent goes on, told why) and lets the
    second one through (stop_hook_active); the parent's Stop hook is not asked for it."""
    log = ccx.repo / "stop.jsonl"
    hook = ccx.repo / "hook.py"
    hook.write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(json.dumps(data) + '\\n')\n"
        "if not data['stop_hook_active']:\n"
        "    print('check the tests too', file=sys.stderr)\n"
        "    sys.exit(2)\n"
    )
    command = {"hooks": [{"type": "command", "command": f"{sys.executable} {hook}"}]}
    (ccx.repo / ".claude").mkdir()
    (ccx.repo / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SubagentStop": [command]}})
    )
    ccx.api.on(
        lambda r: "HOOKED" in first_user_text(r) and len(r.messages) == 1,
        text_reply("first report"),
    )
    ccx.api.on(
        lambda r: "HOOKED" in first_user_text(r) and len(r.messages) > 1,
        text_reply("second report, tests checked"),
    )
    ccx.api.add(tool_reply(agent_call("HOOKED: work")), text_reply("done"))

    run = ccx.run("-p", "go", "--output-format", "json")

    assert run.returncode == 0, run.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [c["stop_hook_active"] for c in calls] == [False, True]
    assert calls[0]["hook_event_name"] == "SubagentStop"
    assert calls[0]["agent_type"] == "general-purpose" and calls[0]["agent_id"]
    second = [r for r in ccx.api.requests if "HOOKED" in first_user_text(r)][1]
    assert "check the tests too" in json.dumps(second.messages[-1])
    (report,) = tool_results(ccx.api.requests[-1])
    assert "second report, tests checked" in result_text(report)


def test_stream_json_shows_the_subagent_under_its_agent_call(ccx: Ccx) -> None:
    """As Claude Code: task_started, the brief and the subagent's messages with
    parent_tool_use_id set to the Agent call, then task_notification."""
    ccx.api.on(briefed("STREAMED"), text_reply("streamed report"))
    ccx.api.add(tool_reply((*agent_call("STREAMED: look"), "toolu_agentcall1")), text_reply("ok"))

    run = ccx.run("-p", "go", "--output-format", "stream-json", "--verbose")

    assert run.returncode == 0, run.stderr
    lines = run.events()
    nested = [line for line in lines if line.get("parent_tool_use_id") == "toolu_agentcall1"]
    assert [line["type"] for line in nested] == ["user", "assistant"]
    assert nested[0]["message"]["content"][0]["text"] == "STREAMED: look"
    assert nested[1]["message"]["content"][0]["text"] == "streamed report"
    started = next(line for line in lines if line.get("subtype") == "task_started")
    assert started["tool_use_id"] == "toolu_agentcall1"
    assert started["subagent_type"] == "general-purpose"
    done = next(line for line in lines if line.get("subtype") == "task_notification")
    assert done["status"] == "completed" and done["task_id"] == nested[1]["agent_id"]
    top = [line for line in lines if line["type"] == "assistant" and not line["parent_tool_use_id"]]
    assert len(top) == 2
    # The Agent call's result as Claude Code gives it: a list of one text block, to the SDK
    # and to the model alike; a resumed session sends it again as it was.
    (answer,) = [
        block
        for line in lines
        if line["type"] == "user" and not line["parent_tool_use_id"]
        for block in line["message"]["content"]
        if block.get("tool_use_id") == "toolu_agentcall1"
    ]
    (report,) = answer["content"]
    assert report["type"] == "text" and report["text"].startswith("streamed report\n")
    sent = [r["content"] for r in tool_results(ccx.api.requests[-1])]
    assert sent == [answer["content"]]
    ccx.api.add(text_reply("again"))
    session = lines[0]["session_id"]
    resumed = ccx.run("-p", "once more", "--resume", session, "--output-format", "json")
    assert resumed.returncode == 0, resumed.stderr
    kept = [
        b["content"]
        for m in ccx.api.requests[-1].messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert kept == sent


def test_plain_repl_shows_a_compact_progress_line_per_subagent_call(ccx: Ccx) -> None:
    """The plain REPL (--plain, stdin piped): the subagent's calls as dim lines under its
    Agent call, then one line with its figures."""
    readme = str(ccx.repo / "README.md")
    ccx.api.on(
        lambda r: "PLAIN" in first_user_text(r) and len(r.messages) == 1,
        tool_reply(("Read", {"file_path": readme})),
    )
    ccx.api.on(
        lambda r: "PLAIN" in first_user_text(r) and len(r.messages) > 1, text_reply("plain report")
    )
    ccx.api.add(tool_reply(agent_call("PLAIN: read the readme")), text_reply("Parent is done."))

    run = ccx.run("--plain", stdin="delegate it\n")

    assert run.returncode == 0, run.stderr
    lines = [line.rstrip() for line in run.stdout.splitlines()]
    start = lines.index("  ⎿ general-purpose: look around")
    assert lines[start + 1] == "    ✓ Read README.md"
    assert lines[start + 2].startswith("  ⎿ general-purpose completed · 1 tool use · ")
    assert "✓ Agent" in lines[start + 3] and "Parent is done." in run.stdout


def test_the_agent_sdk_defines_an_agent_and_sees_its_messages_under_the_call(ccx: Ccx) -> None:
    """claude-agent-sdk's `agents` option (sent in its initialize request) defines an agent;
    the SDK parses the subagent's messages with parent_tool_use_id set to the Agent call."""
    import asyncio

    from claude_agent_sdk import AgentDefinition, AssistantMessage, ClaudeAgentOptions, query

    from tests.e2e.conftest import CCX

    scout = lambda r: "You are SDK-SCOUT" in system_text(r)  # noqa: E731
    ccx.api.on(scout, text_reply("scouted"))
    ccx.api.add(
        tool_reply(
            (
                "Agent",
                {"description": "scout", "prompt": "go", "subagent_type": "sdk-scout"},
                "toolu_sdkcall",
            )
        ),
        text_reply("The scout is back."),
    )
    options = ClaudeAgentOptions(
        cli_path=CCX,
        cwd=str(ccx.repo),
        env=dict(ccx.env),
        agents={
            "sdk-scout": AgentDefinition(
                description="Scouts", prompt="You are SDK-SCOUT.", tools=["Read"]
            )
        },
    )

    async def collect() -> list[Any]:
        return [m async for m in query(prompt="send the scout", options=options)]

    messages = asyncio.run(collect())
    (request,) = [r for r in ccx.api.requests if scout(r)]
    assert tool_names(request) == ["Read"]
    nested = [
        m
        for m in messages
        if isinstance(m, AssistantMessage) and m.parent_tool_use_id == "toolu_sdkcall"
    ]
    assert [m.content[0].text for m in nested] == ["scouted"]  # type: ignore[union-attr]
    listing = next(
        t["description"] for t in ccx.api.requests[0].body["tools"] if t["name"] == "Agent"
    )
    assert "- sdk-scout: Scouts (Tools: Read)" in listing
