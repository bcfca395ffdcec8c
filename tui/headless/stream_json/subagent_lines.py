"""A subagent's events as stream-json lines, the way Claude Code 2.1.328 writes them.

A subagent's start is ``system``/``task_started`` and its brief a ``user``
message; its responses and tool results are ``assistant`` and ``user``
messages whose ``parent_tool_use_id`` is the parent's Agent call (with
``agent_id`` beside it); its end is ``system``/``task_notification`` with
its figures. (The messages are built in ``schema.to_lines``; its other events,
deltas and its context meter, are not sent.)
"""

from __future__ import annotations

import uuid
from typing import Any

from agent.core.events import SubagentFinished, SubagentStarted


def _uuid() -> str:
    return str(uuid.uuid4())


def subagent_lines(
    event: SubagentStarted | SubagentFinished, session_id: str
) -> list[dict[str, Any]]:
    """``task_started`` and the brief, or ``task_notification``."""
    if isinstance(event, SubagentStarted):
        return _started(event, session_id)
    return [_finished(event, session_id)]


def _started(event: SubagentStarted, session_id: str) -> list[dict[str, Any]]:
    task = {
        "type": "system",
        "subtype": "task_started",
        "task_id": event.agent_id,
        "tool_use_id": event.tool_use_id,
        "description": event.description,
        "subagent_type": event.agent_type,
        "is_backgrounded": event.background,
        "task_type": "local_agent",
        "prompt": event.prompt,
        "uuid": _uuid(),
        "session_id": session_id,
    }
    brief = {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": event.prompt}]},
        "parent_tool_use_id": event.tool_use_id,
        "agent_id": event.agent_id,
        "session_id": session_id,
        "uuid": _uuid(),
        "subagent_type": event.agent_type,
        "task_description": event.description,
    }
    return [task, brief]


def _finished(event: SubagentFinished, session_id: str) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "task_notification",
        "task_id": event.agent_id,
        "tool_use_id": event.tool_use_id,
        "status": event.status,
        "output_file": event.output_file,
        "summary": event.result[:2000],
        "usage": {
            "total_tokens": event.total_tokens,
            "tool_uses": event.tool_uses,
            "duration_ms": event.duration_ms,
        },
        "uuid": _uuid(),
        "session_id": session_id,
    }
