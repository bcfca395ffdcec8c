"""A stored conversation as display entries for the transcript view (a resumed session).

Pure and cheap: it runs on the agent thread, so the UI receives plain frozen
values it can render without touching the live message list.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.core.messages import INTERRUPTED_BY_USER, Message, ToolResultBlock
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


@dataclass(frozen=True)
class EarlierEntries:
    """A segment of the conversation a compaction summarized, read back from the transcript."""

    entries: list[Entry]
    summarized: int  # messages the compaction that ended it summarized
    kept: int  # and kept
    before: int | None  # where to ask for the segment before it; None: it is the first


def earlier_entries(
    messages: list[Message],
    compaction: Mapping[str, Any],
    before: int | None,
    cwd: str | os.PathLike[str] = ".",
) -> EarlierEntries:
    def count(key: str) -> int:
        value = compaction.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    entries = history_entries(messages, cwd)
    return EarlierEntries(entries, count("messages_summarized"), count("messages_kept"), before)


def result_text(block: Mapping[str, Any]) -> str:
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

    first = message.content[0] if message.content else None
    if first is not None and first["type"] == "text" and (line := typed_line(first["text"])):
        return line  # a custom command: the line typed, not its expanded body
    texts = [
        b["text"]
        for b in message.content
        if b["type"] == "text" and not b["text"].startswith(REMINDER_PREFIX)
    ]
    return "\n".join(t for t in texts if t != INTERRUPTED_BY_USER).strip()


def history_entries(messages: list[Message], cwd: str | os.PathLike[str] = ".") -> list[Entry]:
    """What the transcript shows for a stored conversation; tool paths shown relative to cwd."""
    results = {
        block["tool_use_id"]: block
        for message in messages
        if message.role == "user"
        for block in message.tool_results()
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
        if any(b["type"] == "text" and b["text"] == INTERRUPTED_BY_USER for b in message.content):
            entries.append(Entry("interrupted", INTERRUPTED_BY_USER))
    return entries


def _assistant_entries(
    message: Message, results: dict[str, ToolResultBlock], cwd: str | os.PathLike[str]
) -> list[Entry]:
    from tools.registry import label_call  # the tools' import is kept off the first paint

    entries: list[Entry] = []
    text: list[str] = []
    for block in message.content:
        if block["type"] == "text" and block["text"]:
            text.append(block["text"])
        elif block["type"] == "thinking" and block["thinking"].strip():
            entries.append(Entry("thinking", block["thinking"]))
        elif block["type"] == "tool_use":
            if text:
                entries.append(Entry("assistant", "".join(text)))
                text = []
            result = results.get(block["id"])
            name = block["name"]
            given = block.get("input")  # a loaded transcript's call may have none
            tool_input = given if isinstance(given, dict) else {}
            entries.append(
                Entry(
                    "tool",
                    tool=ToolView(
                        tool_use_id=block["id"],
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
