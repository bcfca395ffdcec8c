"""The index microcompact plans from: every uncleared tool result and Edit / Write input, with
per-message token prefix sums, kept up to date in O(new messages) per request.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agent.core.messages import ContentBlock, Message, ToolResultBlock
from agent.core.thinking import is_thinking
from compaction.inputs import clearable_input_tokens, is_input_cleared
from compaction.markers import CLEARED_PREFIX
from tools.read import UNCHANGED_STUB_PREFIX


@dataclass(slots=True)
class Candidate:
    """One uncleared tool result or Edit / Write input (the clearable ones are candidates)."""

    tool_use_id: str
    tool_name: str | None
    tool_input: dict[str, Any]
    message_index: int
    tokens: float
    is_error: bool = False
    unchanged: bool = False  # a Read that answered "unchanged": its content is an earlier read's


def is_unchanged_stub(block: ToolResultBlock) -> bool:
    """A re-read answered with the "unchanged" stub rather than the file's text."""
    content = block.get("content")
    text = (
        next((b.get("text") for b in content if b.get("type") == "text"), None)
        if isinstance(content, list)
        else content
    )
    return isinstance(text, str) and text.startswith(UNCHANGED_STUB_PREFIX)


def is_cleared(block: ToolResultBlock) -> bool:
    content = block.get("content")
    return isinstance(content, str) and content.startswith(CLEARED_PREFIX)


class ResultIndex:
    """The conversation's tool results and per-message token prefix sums, kept up to date cheaply.

    Messages are never edited in place (a change replaces the message), so
    when the list still starts with the very message objects scanned last
    time, only the new tail is scanned; otherwise it is rebuilt. That keeps
    the every-turn decision near O(new messages) on long conversations.
    """

    def __init__(
        self,
        estimate_message: Callable[[Message], float],
        estimate_block: Callable[[Mapping[str, Any]], float],
    ) -> None:
        self.estimate_message = estimate_message
        self.estimate_block = estimate_block
        self.scanned: list[Message] = []
        self.results: list[Candidate] = []
        self.prefix: list[float] = [0.0]  # prefix[i] = tokens of messages[:i]
        self.uses: dict[str, tuple[str, dict[str, Any]]] = {}
        self.inputs: list[Candidate] = []  # Edit / Write calls with uncleared inputs
        self.last_cleared = -1  # the latest message holding a cleared result or input
        # (message index, tokens) of the assistant messages whose thinking a clear may drop
        self.thinking: list[tuple[int, float]] = []

    def update(self, messages: list[Message]) -> None:
        count = len(self.scanned)
        if len(messages) < count or not all(map(operator.is_, messages[:count], self.scanned)):
            self.scanned, self.results, self.prefix, self.uses = [], [], [0.0], {}
            self.inputs, self.last_cleared, self.thinking = [], -1, []
            count = 0
        for index in range(count, len(messages)):
            message = messages[index]
            self.scanned.append(message)
            self.prefix.append(self.prefix[-1] + self.estimate_message(message))
            for block in message.content:
                self._scan_block(block, index)
            if message.role == "assistant":
                self._scan_thinking(message, index)

    def _scan_thinking(self, message: Message, index: int) -> None:
        thinking = [b for b in message.content if is_thinking(b)]
        if thinking and len(thinking) < len(message.content):  # a thinking-only one stays whole
            self.thinking.append((index, sum(self.estimate_block(b) for b in thinking)))

    def _scan_block(self, block: ContentBlock, index: int) -> None:
        if block["type"] == "tool_use":
            tool_input = block.get("input") or {}
            self.uses[block["id"]] = (block["name"], tool_input)
            tokens = clearable_input_tokens(block["name"], tool_input)
            if tokens:
                self.inputs.append(Candidate(block["id"], block["name"], tool_input, index, tokens))
            elif is_input_cleared(block["name"], tool_input):
                self.last_cleared = index
        elif block["type"] == "tool_result":
            if is_cleared(block):
                self.last_cleared = index
                return
            name, tool_input = self.uses.get(block["tool_use_id"], (None, {}))
            tokens = self.estimate_block(block)
            error = bool(block.get("is_error"))
            stub = name == "Read" and is_unchanged_stub(block)
            self.results.append(
                Candidate(block["tool_use_id"], name, tool_input, index, tokens, error, stub)
            )

    def tokens_from(self, index: int) -> float:
        return self.prefix[-1] - self.prefix[index]

    def tokens_between(self, start: int, end: int) -> float:
        """Tokens of messages[start:end]."""
        return self.prefix[end] - self.prefix[start]
