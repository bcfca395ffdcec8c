"""ccx's events as Claude Code's stream-json lines (the schema the Agent SDK parses).

Claude Code's own message types (``system``/``init``, ``assistant``,
``user``, ``stream_event``, ``result``) carry the same fields here; ccx's
other events (tool starts, compaction and context clearing, the context
meter, notices, errors, retries, usage) go out as ``system`` messages whose
subtype is ``ccx_`` and the event's type, a prefix Claude Code does not use,
so a client that does not know them passes them by (the Agent SDK reads them
as plain SystemMessages).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from agent.core.events import (
    AssistantMessage,
    ContextUpdate,
    Event,
    HookResponse,
    HookStarted,
    RequestStarted,
    SessionStarted,
    StreamEvent,
    SubagentEvent,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnFinished,
    Usage,
)
from agent.core.messages import ContentBlock
from agent.core.thinking import is_thinking
from tui.headless.stream_json.subagent_lines import subagent_lines

CCX_PREFIX = "ccx_"
# Said by Claude Code's own lines instead: system/init, the result; the deltas are in the
# raw stream events (``stream_event``) with --include-partial-messages.
NOT_SENT = (SessionStarted, TurnFinished, TextDelta, ThinkingDelta, ToolProgress)
# ccx's own lines every request or tool call would add: sent only when asked for.
CHATTY = (RequestStarted, Usage, ContextUpdate, ToolStarted)


def new_uuid() -> str:
    return str(uuid.uuid4())


def init_message(
    *,
    session_id: str,
    cwd: str,
    model: str,
    tools: list[str],
    permission_mode: str,
    slash_commands: list[str],
    skills: list[str],
    version: str,
    mcp_servers: list[dict[str, Any]] | None = None,
    agents: list[str] | None = None,
    output_style: str = "default",
    plugins: list[dict[str, str]] | None = None,
    api_key_source: str = "none",
) -> dict[str, Any]:
    """``system``/``init``: what the session runs with, before its first assistant message."""
    return {
        "type": "system",
        "subtype": "init",
        "cwd": cwd,
        "session_id": session_id,
        "tools": tools,
        "mcp_servers": mcp_servers or [],
        "model": model,
        "permissionMode": permission_mode,
        "slash_commands": slash_commands,
        "apiKeySource": api_key_source,
        "claude_code_version": version,
        "ccx_version": version,
        "output_style": output_style,
        "agents": agents or [],
        "skills": skills,
        "plugins": plugins or [],
        "uuid": new_uuid(),
    }


def assistant_lines(event: AssistantMessage, session_id: str) -> list[dict[str, Any]]:
    """``assistant``: each thinking block on a line of its own, then the rest of the message,
    all with the response's id, as Claude Code streams them (a client shows or folds the
    thinking without parsing the other blocks)."""
    content = event.message.get("content", [])
    thinking = [b for b in content if is_thinking(b)]
    if not thinking:
        return [assistant_message(event, session_id)]
    api_id = event.api_id or f"msg_{uuid.uuid4().hex[:24]}"
    rest = [b for b in content if not is_thinking(b)]
    parts = [[b] for b in thinking] + ([rest] if rest else [])
    lines = []
    for index, part in enumerate(parts):
        line = assistant_message(event, session_id, content=part, api_id=api_id)
        if index < len(parts) - 1:
            line["uuid"] = new_uuid()  # the message's own uuid goes on its last line
        lines.append(line)
    return lines


def assistant_message(
    event: AssistantMessage,
    session_id: str,
    content: Sequence[ContentBlock] | None = None,
    api_id: str | None = None,
) -> dict[str, Any]:
    message = event.message
    return {
        "type": "assistant",
        "message": {
            "id": api_id or event.api_id or f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": event.model,
            "content": message.get("content", []) if content is None else content,
            "stop_reason": event.stop_reason,
            "stop_sequence": None,
            "usage": dict(event.usage),
        },
        "parent_tool_use_id": None,
        "session_id": session_id,
        "uuid": event.uuid or new_uuid(),
    }


def tool_result_message(event: ToolFinished, session_id: str) -> dict[str, Any]:
    """``user``: the tool result the model is sent, one message per tool call."""
    block: dict[str, Any] = {
        "tool_use_id": event.tool_use_id,
        "type": "tool_result",
        "content": event.content if event.content is not None else event.output_preview,
    }
    if event.is_error:
        block["is_error"] = True
    return {
        "type": "user",
        "message": {"role": "user", "content": [block]},
        "parent_tool_use_id": None,
        "session_id": session_id,
        "uuid": new_uuid(),
        "tool_use_result": {"tool": event.name, "display": event.display, **event.meta},
    }


def user_prompt_message(text: str, session_id: str, uuid: str | None = None) -> dict[str, Any]:
    """``user``: a prompt read from the input stream, echoed back (``--replay-user-messages``)."""
    return {
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        "session_id": session_id,
        "uuid": uuid or new_uuid(),
    }


def stream_event(event: StreamEvent, session_id: str) -> dict[str, Any]:
    """``stream_event``: one raw event of the API's stream (message_start ... message_stop)."""
    return {
        "type": "stream_event",
        "event": event.event,
        "session_id": session_id,
        "parent_tool_use_id": None,
        "uuid": new_uuid(),
    }


def hook_message(event: HookStarted | HookResponse, session_id: str) -> dict[str, Any]:
    """``system``/``hook_started`` or ``hook_response`` (``--include-hook-events``)."""
    payload = event.to_json()
    payload.pop("type", None)
    return {
        "type": "system",
        "subtype": event.type,
        **payload,
        "session_id": session_id,
        "uuid": new_uuid(),
    }


def ccx_message(event: Event, session_id: str) -> dict[str, Any]:
    """A ccx event as ``system``/``ccx_<type>``; its fields beside the subtype."""
    payload = event.to_json()
    payload.pop("type", None)
    return {
        "type": "system",
        "subtype": CCX_PREFIX + event.type,
        **payload,
        "session_id": session_id,
        "uuid": new_uuid(),
    }


def to_lines(
    event: Event, session_id: str, include_partial: bool, include_ccx: bool = False
) -> list[dict[str, Any]]:
    """The stream-json lines one ccx event becomes: Claude Code's, and ccx's own
    ``system/ccx_*`` lines (notices, errors, retries, compactions). The ones every request
    would add (``CHATTY``: request started, usage, context, tool started) only with
    ``include_ccx`` (``--include-ccx-events``): an Agent SDK program prints them as noise."""
    if isinstance(event, AssistantMessage):
        return assistant_lines(event, session_id)
    if isinstance(event, ToolFinished):
        return [tool_result_message(event, session_id)]
    if isinstance(event, StreamEvent):
        return [stream_event(event, session_id)] if include_partial else []
    if isinstance(event, (HookStarted, HookResponse)):
        return [hook_message(event, session_id)]
    if isinstance(event, NOT_SENT):
        return []
    if isinstance(event, SubagentEvent):  # a subagent's messages, under its Agent call
        if not isinstance(event.event, (AssistantMessage, ToolFinished)):
            return []
        lines = to_lines(event.event, session_id, include_partial=False)
        return [
            {**line, "parent_tool_use_id": event.tool_use_id, "agent_id": event.agent_id}
            for line in lines
        ]
    if isinstance(event, (SubagentStarted, SubagentFinished)):
        return subagent_lines(event, session_id)
    if isinstance(event, CHATTY) and not include_ccx:
        return []
    return [ccx_message(event, session_id)]
