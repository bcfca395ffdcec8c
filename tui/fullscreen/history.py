"""A stored conversation as display entries for the transcript view (a resumed session).

Pure and cheap: it runs on the agent thread, so the UI receives plain frozen
values it can render without touching the live message list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.core.messages import INTERRUPTED_BY_USER, Message
from tui.words import relative

RESULT_PREVIEW_CHARS = 2_000
REMINDER_PREFIX = "<system-reminder>"


@dataclass(frozen=True)
class ToolView:
    tool_use_id: str
    name: str
    input: dict[str, Any]
    label: str = ""  # the tool's own label for the call (tools.registry.label_call)
    result: str = ""
    is_error: bool = False
    answered: bool = False


@dataclass(frozen=True)
class Entry:
    """One thing the transcript shows: "user", "assistant", "tool", "summary" or "interrupted"."""

    kind: str
    text: str = ""
    tool: ToolView | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b.get("text", "") if b.get("type") == "text" else f"[{b.get('type', 'block')}]"
            for b in content
            if isinstance(b, dict)
        ]
        return "\n".join(parts)
    return ""


def _user_text(message: Message) -> str:
    from agent.instructions.custom_commands import typed_line  # only when a session is drawn

    first = message.content[0] if message.content else {}
    if first.get("type") == "text" and (line := typed_line(str(first.get("text", "")))):
        return line  # a custom command: the line typed, not its expanded body
    texts = [
        b.get("text", "")
        for b in message.content
        if b.get("type") == "text" and not str(b.get("text", "")).startswith(REMINDER_PREFIX)
    ]
    return "\n".join(t for t in texts if t != INTERRUPTED_BY_USER).strip()


def history_entries(messages: list[Message], cwd: str | os.PathLike[str] = ".") -> list[Entry]:
    """What the transcript shows for a stored conversation; tool paths shown relative to cwd."""
    results = {
        block.get("tool_use_id"): block
        for message in messages
        if message.role == "user"
        for block in message.content
        if block.get("type") == "tool_result"
    }
    entries: list[Entry] = []
    for message in messages:
        if message.role == "assistant":
            entries.extend(_assistant_entries(message, results, cwd))
            continue
        if message.kind == "summary":
            entries.append(Entry("summary", message.text()))
        elif message.kind == "prompt" and (text := _user_text(message)):
            entries.append(Entry("user", text))
        if any(
            b.get("type") == "text" and b.get("text") == INTERRUPTED_BY_USER
            for b in message.content
        ):
            entries.append(Entry("interrupted", INTERRUPTED_BY_USER))
    return entries


def _assistant_entries(
    message: Message, results: dict[Any, dict[str, Any]], cwd: str | os.PathLike[str]
) -> list[Entry]:
    from tools.registry import label_call  # the tools' import is kept off the first paint

    entries: list[Entry] = []
    text: list[str] = []
    for block in message.content:
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            text.append(block["text"])
        elif kind == "thinking" and str(block.get("thinking") or "").strip():
            entries.append(Entry("thinking", str(block["thinking"])))
        elif kind == "tool_use":
            if text:
                entries.append(Entry("assistant", "".join(text)))
                text = []
            result = results.get(block.get("id"))
            name = str(block.get("name", "tool"))
            tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
            entries.append(
                Entry(
                    "tool",
                    tool=ToolView(
                        tool_use_id=str(block.get("id", "")),
                        name=name,
                        input=tool_input,
                        label=label_call(name, tool_input, cwd),
                        result=relative(result_text(result)[:RESULT_PREVIEW_CHARS], Path(cwd))
                        if result
                        else "",
                        is_error=bool(result and result.get("is_error")),
                        answered=result is not None,
                    ),
                )
            )
    if text:
        entries.append(Entry("assistant", "".join(text)))
    return entries
