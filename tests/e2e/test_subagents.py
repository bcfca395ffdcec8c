"""Subagents end to end: the real `ccx -p` with the Agent tool against the fake API.

The parent's requests take the script in order; a subagent's requests are told
apart by their system prompt (the agent definition's body) or by their first
user message (the Agent call's prompt), and answered by routes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from agent.fake_api import Fault, text_reply, tool_reply
from agent.fake_api.recording import RecordedRequest
from tests.e2e.conftest import Ccx

SECRET = "PARENT-SECRET-4711"


def first_user_text(request: RecordedRequest) -> str:
    first = request.messages[0]["content"] if request.messages else ""
    if isinstance(first, str):
        return first
    return "\n".join(b.get("text", "") for b in first if isinstance(b, dict))


def system_text(request: RecordedRequest) -> str:
    system = request.body.get("system") or []
    if isinstance(system, str):
        return system
    return "\n".join(b.get("text", "") for b in system)


def briefed(marker: str) -> Any:
    """A route predicate: the request of the subagent whose prompt holds ``marker``."""
    return lambda request: marker in first_user_text(request)


def tool_names(request: RecordedRequest) -> list[str]:
    return [tool["name"] for tool in request.body.get("tools", [])]


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    return [b for b in request.messages[-1]["content"] if b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else json.dumps(content)


def agent_call(prompt: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("Agent", {"description": "look around", "prompt": prompt, **extra})


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
