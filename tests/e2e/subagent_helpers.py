"""What the subagent e2e tests share: reading the fake API's recorded requests, routing a
subagent's requests by its brief, and an Agent call."""

from __future__ import annotations

import json
from typing import Any

from tui.fake_api.recording import RecordedRequest

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
