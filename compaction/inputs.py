"""Clearing the bulky inputs of old Edit and Write calls: the other half of what tool rounds pin.

A Write's ``content`` and an Edit's ``old_string`` / ``new_string`` are in
the file once the call has run; on real sessions they are a third or more of
the context by the end. Like a result, an old call's bulky fields are
replaced by a short marker (the call itself, its id, name and file path
stay); the API's own context editing offers the same (``clear_tool_inputs``).
Pure functions: microcompact.py decides which, clearing.py applies them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agent.core.messages import ContentBlock, Message
from compaction.markers import CLEARED_PREFIX

INPUT_FIELDS: dict[str, tuple[str, ...]] = {
    "Write": ("content",),
    "Edit": ("old_string", "new_string"),
    "NotebookEdit": ("new_source",),
}
CHARS_PER_TOKEN = 4


def clearable_input_tokens(name: str | None, tool_input: dict[str, Any]) -> float:
    """Raw tokens a clear of this call's input would free (0 when there is nothing to clear)."""
    fields = INPUT_FIELDS.get(name or "")
    if not fields or is_input_cleared(name, tool_input):
        return 0.0
    return sum(len(str(tool_input.get(key) or "")) for key in fields) / CHARS_PER_TOKEN


def is_input_cleared(name: str | None, tool_input: dict[str, Any]) -> bool:
    fields = INPUT_FIELDS.get(name or "", ())
    return any(str(tool_input.get(key) or "").startswith(CLEARED_PREFIX) for key in fields)


def cleared_input(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """The input with its bulky fields replaced by markers that say how to see the text again."""
    new = dict(tool_input)
    *firsts, last = INPUT_FIELDS.get(name, ("",))
    for key in firsts:
        new[key] = f"{CLEARED_PREFIX}]"
    text = str(tool_input.get(last) or "")
    lines = text.count("\n") + 1 if text else 0
    new[last] = f"{CLEARED_PREFIX}: {lines} lines; Read the file for its current text.]"
    return new


def apply_input_clearing(messages: list[Message], tool_use_ids: set[str]) -> list[Message]:
    """A new list where the calls named in ``tool_use_ids`` carry cleared inputs.

    Messages are replaced, never edited in place (see apply_clearing).
    """
    if not tool_use_ids:
        return messages
    updated = list(messages)
    for index, message in enumerate(messages):
        if message.role != "assistant" or not any(
            b.get("type") == "tool_use" and b.get("id") in tool_use_ids for b in message.content
        ):
            continue
        content: list[ContentBlock] = []
        for block in message.content:
            if block["type"] == "tool_use" and block["id"] in tool_use_ids:
                block = {**block, "input": cleared_input(block["name"], block.get("input") or {})}
            content.append(block)
        updated[index] = replace(message, content=content)
    return updated
