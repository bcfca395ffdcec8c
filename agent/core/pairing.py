"""The pairing rule: every tool_use is answered in the very next message, no tool_result is an orphan.

The API refuses a conversation that breaks it: a tool_use whose id the next
(user) message does not answer with a tool_result, a tool_result that answers
no tool_use of the message before it, tool_result blocks after other content,
or a tool_use id used twice. Interrupts, compaction cuts, repairs and old
transcripts are where breaks get made, so every check and every fix of the
rule is here, and the request checker (``agent.core.invariants``), the
conversation's owner, the loop, compaction's safe cuts and the transcript's
repair on resume all call it. (The fake API checks the same rule on its own,
as the real API would: it is the test of this module, not a user of it.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from agent.core.messages import (
    INTERRUPTED_TOOL_RESULT,
    ContentBlock,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    text_block,
    tool_result_block,
)


def use_ids(message: Message) -> set[str]:
    return {b["id"] for b in message.tool_uses()}


def result_ids(message: Message) -> set[str]:
    return {b["tool_use_id"] for b in message.tool_results()}


def answered_ids(response: Message | None, follower: Message | None) -> set[str]:
    """The tool_use ids ``follower`` answers: its tool_results, when it is the user's turn."""
    if response is None or response.role != "assistant":
        return set()
    if follower is None or follower.role != "user":
        return set()
    return result_ids(follower)


def unanswered(response: Message, follower: Message | None) -> list[ToolUseBlock]:
    """The tool_use blocks of ``response`` that ``follower`` does not answer."""
    answered = answered_ids(response, follower)
    return [use for use in response.tool_uses() if use["id"] not in answered]


def answers_for(
    uses: Sequence[ToolUseBlock],
    results: dict[str, ToolResultBlock],
    missing: str = INTERRUPTED_TOOL_RESULT,
) -> list[ToolResultBlock]:
    """One tool_result per tool_use, in order: the one in ``results``, else an error saying ``missing``."""
    return [
        results.get(use["id"]) or tool_result_block(use["id"], missing, is_error=True)
        for use in uses
    ]


def answer_message(
    response: Message, reason: str = INTERRUPTED_TOOL_RESULT, **fields: Any
) -> Message:
    """A user message answering every tool_use of ``response`` with an error saying ``reason``."""
    return Message(
        role="user",
        content=[*answers_for(response.tool_uses(), {}, reason)],
        kind="tool_result",
        **fields,
    )


# -- the check ---------------------------------------------------------------------------


def pair_problems(messages: Sequence[Message]) -> list[str]:
    """Every way ``messages`` break the rule, in words (empty when they keep it)."""
    problems: list[str] = []
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if message.role == "assistant":
            problems.extend(_use_problems(messages, index, seen))
        else:
            problems.extend(_result_problems(messages, index))
    return problems


def _use_problems(messages: Sequence[Message], index: int, seen: set[str]) -> list[str]:
    problems = []
    uses = messages[index].tool_uses()
    for use in uses:
        if use["id"] in seen:
            problems.append(f"message {index}: tool_use id {use['id']} is used twice")
        seen.add(use["id"])
    follower = messages[index + 1] if index + 1 < len(messages) else None
    missing = [use["id"] for use in unanswered(messages[index], follower)]
    if missing:
        problems.append(f"message {index}: tool_use without a tool_result right after: {missing}")
    return problems


def _result_problems(messages: Sequence[Message], index: int) -> list[str]:
    message = messages[index]
    results = message.tool_results()
    if not results:
        return []
    previous = messages[index - 1] if index > 0 else None
    asked = use_ids(previous) if previous is not None and previous.role == "assistant" else set()
    problems = [
        f"message {index}: tool_result for unknown tool_use {block['tool_use_id']}"
        for block in results
        if block["tool_use_id"] not in asked
    ]
    if not _results_first(message.content):
        problems.append(f"message {index}: tool_result blocks must come before other content")
    return problems


def _results_first(content: list[ContentBlock]) -> bool:
    kinds = [block["type"] for block in content]
    first_other = next((i for i, k in enumerate(kinds) if k != "tool_result"), len(kinds))
    return "tool_result" not in kinds[first_other:]


# -- the fixes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AnswerFix:
    """A user message made to answer the response before it (see ``fix_answer``)."""

    message: Message | None  # the same object when nothing was wrong; None when nothing is left
    orphans: int = 0  # tool_results dropped: they answered nothing, or answered twice
    missing: tuple[ToolUseBlock, ...] = ()  # tool_uses now answered with an interrupted result

    @property
    def changed(self) -> bool:
        return self.orphans > 0 or bool(self.missing)


def fix_answer(previous: Message | None, message: Message) -> AnswerFix:
    """``message`` (the user's) answering exactly the tool_uses of ``previous``.

    Orphan and duplicate results go; a tool_use left unanswered gets an
    interrupted result; the results come first, in the order they were.
    """
    uses = previous.tool_uses() if previous is not None and previous.role == "assistant" else []
    expected = {use["id"] for use in uses}
    results: list[ContentBlock] = []
    others: list[ContentBlock] = []
    answered: set[str] = set()
    orphans = 0
    for block in message.content:
        if block["type"] != "tool_result":
            others.append(block)
            continue
        use_id = block["tool_use_id"]
        if use_id not in expected or use_id in answered:
            orphans += 1
            continue
        answered.add(use_id)
        results.append(block)
    missing = tuple(use for use in uses if use["id"] not in answered)
    content = [*answers_for(missing, {}), *results, *others]
    if not orphans and not missing and _same_blocks(content, message.content):
        return AnswerFix(message)
    return AnswerFix(replace(message, content=content) if content else None, orphans, missing)


def _same_blocks(left: list[ContentBlock], right: list[ContentBlock]) -> bool:
    return len(left) == len(right) and all(a is b for a, b in zip(left, right, strict=True))


def without_duplicate_uses(message: Message, seen: set[str]) -> Message:
    """``message`` without tool_use blocks whose id an earlier message used (ids are then in ``seen``)."""
    content: list[ContentBlock] = []
    for block in message.content:
        if block["type"] == "tool_use":
            if block["id"] in seen:
                continue
            seen.add(block["id"])
        content.append(block)
    if len(content) == len(message.content):
        return message
    return replace(message, content=content or [text_block("(no content)")])


def repair_pairs(messages: Sequence[Message]) -> list[Message]:
    """A copy that keeps the rule (and opens with the user), losing as little as possible."""
    fixed: list[Message] = []
    seen: set[str] = set()
    for message in messages:
        previous = fixed[-1] if fixed else None
        if message.role == "assistant":
            if previous is None:
                continue  # the conversation must open with the user
            message = without_duplicate_uses(message, seen)
            if previous.role == "assistant" and previous.tool_uses():
                fixed.append(answer_message(previous))
        else:
            answer = fix_answer(previous, message).message
            if answer is None or not answer.content:
                continue
            message = answer
        fixed.append(message)
    if fixed and fixed[-1].role == "assistant" and fixed[-1].tool_uses():
        fixed.append(answer_message(fixed[-1]))
    return fixed


@dataclass(frozen=True)
class Closing:
    """How to answer the last response's dangling tool calls: a message to put at ``index``."""

    index: int
    message: Message
    inserted: bool  # a new message at ``index``; else it replaces the one there


def last_response_index(messages: Sequence[Message]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return index
    return None


def dangling(messages: Sequence[Message]) -> list[ToolUseBlock]:
    """tool_use blocks of the last assistant message that the next message does not answer."""
    index = last_response_index(messages)
    if index is None:
        return []
    follower = messages[index + 1] if index + 1 < len(messages) else None
    return unanswered(messages[index], follower)


def close_dangling(
    messages: Sequence[Message], reason: str = INTERRUPTED_TOOL_RESULT
) -> Closing | None:
    """What answers every dangling tool_use of the last response, or None when nothing dangles.

    The results go first in the user message right after the response (the API
    wants tool_result blocks before any text), or in a new message there.
    """
    uses = dangling(messages)
    if not uses:
        return None
    index = last_response_index(messages)
    assert index is not None
    blocks: list[ContentBlock] = [*answers_for(uses, {}, reason)]
    follower = messages[index + 1] if index + 1 < len(messages) else None
    if follower is not None and follower.role == "user":
        return Closing(index + 1, replace(follower, content=[*blocks, *follower.content]), False)
    return Closing(index + 1, Message(role="user", content=blocks, kind="tool_result"), True)
