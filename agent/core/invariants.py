"""The structural rules every outgoing request must satisfy, checked before it leaves.

The API refuses a conversation whose first message is not the user's, whose
tool_use blocks are not answered in the very next message, or whose
tool_result blocks answer nothing. Compaction and interrupts are where such
breaks get made, so every request is checked: in tests a break raises
(``CCX_STRICT_INVARIANTS=1``), in production it is repaired and logged.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from typing import Any

from agent.core.messages import INTERRUPTED_TOOL_RESULT, Message, tool_result_block

log = logging.getLogger(__name__)


class InvariantError(AssertionError):
    """A request about to be sent breaks the API's structural rules (a bug in ccx)."""


def find_violations(messages: list[Message]) -> list[str]:
    problems: list[str] = []
    if not messages:
        return ["the conversation is empty"]
    if messages[0].role != "user":
        problems.append("the first message is not from the user")
    seen_ids: set[str] = set()
    for index, message in enumerate(messages):
        if not message.content:
            problems.append(f"message {index} has no content")
        if message.role == "assistant":
            problems.extend(_check_answered(messages, index, seen_ids))
        else:
            problems.extend(_check_results(messages, index))
    return problems


def _check_answered(messages: list[Message], index: int, seen_ids: set[str]) -> list[str]:
    problems = []
    uses = messages[index].tool_uses()
    for use in uses:
        if use["id"] in seen_ids:
            problems.append(f"message {index}: tool_use id {use['id']} is used twice")
        seen_ids.add(use["id"])
    if not uses:
        return problems
    follower = messages[index + 1] if index + 1 < len(messages) else None
    answered = {b["tool_use_id"] for b in follower.tool_results()} if follower else set()
    if follower is not None and follower.role != "user":
        answered = set()
    missing = [use["id"] for use in uses if use["id"] not in answered]
    if missing:
        problems.append(f"message {index}: tool_use without a tool_result right after: {missing}")
    return problems


def _check_results(messages: list[Message], index: int) -> list[str]:
    message = messages[index]
    results = message.tool_results()
    if not results:
        return []
    problems = []
    previous = messages[index - 1] if index > 0 else None
    asked = (
        {u["id"] for u in previous.tool_uses()}
        if previous and previous.role == "assistant"
        else set()
    )
    for block in results:
        if block["tool_use_id"] not in asked:
            problems.append(
                f"message {index}: tool_result for unknown tool_use {block['tool_use_id']}"
            )
    kinds = [block.get("type") for block in message.content]
    first_other = next((i for i, k in enumerate(kinds) if k != "tool_result"), len(kinds))
    if "tool_result" in kinds[first_other:]:
        problems.append(f"message {index}: tool_result blocks must come before other content")
    return problems


def repair(messages: list[Message]) -> list[Message]:
    """A copy of the conversation that satisfies the rules, losing as little as possible."""
    fixed: list[Message] = []
    seen_ids: set[str] = set()
    for message in messages:
        if message.role == "assistant":
            if not fixed:
                continue  # the conversation must open with the user
            message = _without_duplicate_uses(message, seen_ids)
        else:
            message = _only_answering_results(message, fixed[-1] if fixed else None)
            if not message.content:
                continue
        previous = fixed[-1] if fixed else None
        if previous is not None and previous.role == "assistant" and previous.tool_uses():
            if message.role == "user":
                message = _answer_all(previous, message)
            else:
                fixed.append(_answer_all(previous, None))
        fixed.append(message)
    if fixed and fixed[-1].role == "assistant" and fixed[-1].tool_uses():
        fixed.append(_answer_all(fixed[-1], None))
    return fixed


def _without_duplicate_uses(message: Message, seen_ids: set[str]) -> Message:
    content = []
    for block in message.content:
        if block.get("type") == "tool_use":
            if block["id"] in seen_ids:
                continue
            seen_ids.add(block["id"])
        content.append(block)
    if len(content) == len(message.content):
        return message
    return _copy_with(message, content or [{"type": "text", "text": "(no content)"}])


def _only_answering_results(message: Message, previous: Message | None) -> Message:
    """Keep only tool_results that answer the previous response, placed first."""
    if not message.tool_results():
        return message
    asked = (
        {u["id"] for u in previous.tool_uses()}
        if previous and previous.role == "assistant"
        else set()
    )
    results, answered = [], set()
    for block in message.content:
        if block.get("type") == "tool_result" and block["tool_use_id"] in asked - answered:
            results.append(block)
            answered.add(block["tool_use_id"])
    others = [b for b in message.content if b.get("type") != "tool_result"]
    return _copy_with(message, results + others)


def _answer_all(response: Message, follower: Message | None) -> Message:
    answered = {b["tool_use_id"] for b in follower.tool_results()} if follower else set()
    missing = [
        tool_result_block(u["id"], INTERRUPTED_TOOL_RESULT, is_error=True)
        for u in response.tool_uses()
        if u["id"] not in answered
    ]
    if follower is None:
        return Message(role="user", content=missing, kind="tool_result")
    return _copy_with(follower, missing + follower.content)


def _copy_with(message: Message, content: list[dict[str, Any]]) -> Message:
    return replace(message, content=content)


def enforce(messages: list[Message]) -> list[Message]:
    """The messages to send: unchanged when valid; else raise (strict) or repair and log."""
    problems = find_violations(messages)
    if not problems:
        return messages
    if os.environ.get("CCX_STRICT_INVARIANTS") == "1":
        raise InvariantError("; ".join(problems))
    log.error("repairing a conversation that breaks the API's rules: %s", "; ".join(problems))
    return repair(messages)
