"""The API's rules for thinking blocks in the history, and the one way ccx drops them.

With thinking on, a response starts with a ``thinking`` block (its text and a
``signature``) or a ``redacted_thinking`` block (opaque ``data``). The API
checks them when they come back:

- a block is sent back byte for byte, or not at all: a changed text or
  signature is refused, and nothing ever edits one (not clearing, not
  repair, not escaping);
- the assistant message that the current tool loop continues (the last one,
  followed by the user message carrying its tool results) must still start
  with its thinking block;
- the thinking blocks of earlier assistant messages may be dropped, whole;
- ``cache_control`` never goes on a thinking block (agent/core/request.py).

Dropping earlier thinking saves every later request its tokens, but changes
the prompt from the first dropped block on, so it is done where that prefix is
rewritten anyway (a clear, a compaction) or where the cost model says it pays
(compaction/microcompact.py). ``drop_thinking`` is how the context system
removes thinking, and it never touches the continued loop's message; a block
that could never go back unchanged (``sendable``) is left out as it arrives.
When the continued loop has no thinking to send (a response made with thinking
off), that request goes without thinking (``loop_thinking_missing``); side
calls on a fork of the conversation get their thinking and ``max_tokens``
from ``side_request``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from agent.core.messages import Message
from tools.surrogates import is_encodable

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
B = TypeVar("B", bound=Mapping[str, Any])


def is_thinking(block: Mapping[str, Any]) -> bool:
    return block.get("type") in THINKING_TYPES


def has_thinking(message: Message) -> bool:
    return message.role == "assistant" and any(is_thinking(b) for b in message.content)


def sendable(block: Mapping[str, Any]) -> bool:
    """Whether a thinking block can go back as it came: a signed text (or redacted data) that
    encodes as UTF-8. One that cannot (cut before its signature, a lone surrogate the JSON
    carried) would be refused however it is mended, so it is dropped whole instead."""
    if block.get("type") == "redacted_thinking":
        data = block.get("data")
        return isinstance(data, str) and bool(data) and is_encodable(data)
    text, signature = block.get("thinking"), block.get("signature")
    return (
        isinstance(text, str)
        and isinstance(signature, str)
        and bool(signature)
        and is_encodable(text)
        and is_encodable(signature)
    )


def without_unsendable(content: list[B]) -> list[B]:
    """``content`` without the thinking blocks ``sendable`` refuses (the same list when none)."""
    if all(sendable(b) for b in content if is_thinking(b)):
        return content
    return [b for b in content if not is_thinking(b) or sendable(b)]


def continued_response(messages: Sequence[Message]) -> int | None:
    """The index of the assistant message whose thinking must stay: the last one.

    While a tool loop runs it is the message the loop continues; after a turn
    ends it is kept too, so a prompt that follows never needs a rewrite of the
    turn that was just cached.
    """
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return index
    return None


def droppable(messages: Sequence[Message], start: int = 0, end: int | None = None) -> list[int]:
    """Indices in [start, end) of assistant messages whose thinking may be dropped: every one
    with a thinking block, but the continued response and one that holds nothing else."""
    keep = continued_response(messages)
    stop = len(messages) if end is None else min(end, len(messages))
    found = []
    for index in range(max(start, 0), stop):
        message = messages[index]
        if index == keep or not has_thinking(message):
            continue
        if all(is_thinking(b) for b in message.content):
            continue  # dropping would leave it empty
        found.append(index)
    return found


def drop_thinking(messages: Sequence[Message], indices: Sequence[int]) -> list[Message]:
    """A new list without the thinking blocks of the messages at ``indices`` that
    ``droppable`` allows (the continued response and thinking-only messages keep theirs).

    Messages are replaced, never edited in place, so an undo snapshot or a token
    memo holding the old list stays correct.
    """
    allowed = set(droppable(messages)) & set(indices)
    updated = list(messages)
    for index in sorted(allowed):
        message = messages[index]
        updated[index] = replace(
            message, content=[b for b in message.content if not is_thinking(b)]
        )
    return updated


def drop_earlier_thinking(messages: Sequence[Message], start: int = 0) -> list[Message]:
    """``drop_thinking`` of every droppable message from ``start`` on."""
    return drop_thinking(messages, droppable(messages, start))


def loop_thinking_missing(messages: Sequence[Message]) -> bool:
    """Whether the message the tool loop continues has no thinking block at its start.

    True only while a loop runs (the last assistant message is followed by the
    user message with its tool results): with thinking on, that request would be
    refused, so it goes without thinking instead (a response made while thinking
    was off, or one whose thinking could not be kept).
    """
    index = continued_response(messages)
    if index is None or index + 1 >= len(messages):
        return False
    follower = messages[index + 1]
    if follower.role != "user" or not follower.tool_results():
        return False
    content = messages[index].content
    return not content or not is_thinking(content[0])


def without_thinking_config(extra: dict[str, Any]) -> dict[str, Any]:
    """The request extra with thinking turned off for one request (see ``loop_thinking_missing``),
    and without the context edits that need it on (``clear_thinking``)."""
    if not thinking_on(extra):
        return extra
    trimmed = dict(extra)
    trimmed.pop("thinking", None)
    trimmed = _without_thinking_edits(trimmed)
    if isinstance(trimmed.get("extra_body"), dict):
        trimmed["extra_body"] = _without_thinking_edits(trimmed["extra_body"])
    return trimmed


def _without_thinking_edits(body: dict[str, Any]) -> dict[str, Any]:
    management = body.get("context_management")
    if not isinstance(management, dict) or not isinstance(management.get("edits"), list):
        return body
    edits = [
        e
        for e in management["edits"]
        if not (isinstance(e, dict) and str(e.get("type", "")).startswith("clear_thinking"))
    ]
    body = dict(body)
    if edits:
        body["context_management"] = {**management, "edits": edits}
    else:
        body.pop("context_management")
    return body


def thinking_on(extra: dict[str, Any] | None) -> bool:
    config = (extra or {}).get("thinking")
    return isinstance(config, dict) and config.get("type") in ("enabled", "adaptive")


def thinking_budget(extra: dict[str, Any] | None) -> int:
    """The budget an ``enabled`` thinking config names (0 for adaptive or none)."""
    config = (extra or {}).get("thinking")
    if not isinstance(config, dict) or config.get("type") != "enabled":
        return 0
    budget = config.get("budget_tokens")
    return budget if isinstance(budget, int) else 0


def side_request(
    messages: Sequence[Message], extra: dict[str, Any], max_output: int, output_limit: int
) -> tuple[dict[str, Any], int]:
    """The request extra and ``max_tokens`` of a side call on a fork of the conversation (a
    summary, a notes update): the main thinking config kept when the request can keep the
    rules (the same config reads the same cache), with ``max_tokens`` above its budget;
    else without thinking.

    ``max_output`` is what the side call needs for its text; ``output_limit`` the model's.
    """
    if not thinking_on(extra):
        return extra, max_output
    budget = thinking_budget(extra)
    max_tokens = min(output_limit, max_output + budget)
    if loop_thinking_missing(messages) or max_tokens <= budget:
        return without_thinking_config(extra), max_output
    return extra, max_tokens
