"""Token accounting: how many tokens the conversation costs, estimated and as the API reports it.

The estimate is the reference's: characters / 4, images and documents 2,000
each, thinking counted but not its signature, the sum padded by 4/3. Better
than the reference, ``TokenCounter`` anchors on the usage the API reported for
the last response and only estimates what was added since, and it learns a
per-session calibration of the estimate from every response.

Counting is on the path of every request, so per-message estimates are
memoised (see ``EstimateMemo``): counting a long conversation again costs one
dictionary lookup per message, not re-measuring its strings.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent.core.messages import Message

CHARS_PER_TOKEN = 4
MEDIA_TOKENS = 2_000  # an image or a document, whatever its size
PADDING = 4 / 3  # the reference pads the raw sum by a third
CALIBRATION_RANGE = (0.5, 3.0)
INPUT_USAGE_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _json_chars(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str))


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    return 0 if value is None else _json_chars(value)


def estimate_text(text: str) -> int:
    """Raw (unpadded) tokens of a piece of text, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_block(block: Mapping[str, Any]) -> float:
    """Raw tokens of one content block in the Messages API's JSON shape."""
    if not isinstance(block, Mapping):
        return _chars(block) / CHARS_PER_TOKEN
    kind = block.get("type")
    if kind == "text":
        return _chars(block.get("text")) / CHARS_PER_TOKEN
    if kind == "tool_use":
        return (_chars(block.get("name")) + _json_chars(block.get("input", {}))) / CHARS_PER_TOKEN
    if kind == "tool_result":
        return _estimate_result_content(block.get("content"))
    if kind in ("image", "document"):
        return MEDIA_TOKENS
    if kind == "thinking":
        return _chars(block.get("thinking")) / CHARS_PER_TOKEN  # the signature is not counted
    if kind == "redacted_thinking":
        return _chars(block.get("data")) / CHARS_PER_TOKEN
    return _json_chars(block) / CHARS_PER_TOKEN


def _estimate_result_content(content: Any) -> float:
    if isinstance(content, list):
        return sum(estimate_block(item) for item in content)
    return _chars(content) / CHARS_PER_TOKEN


def _measure(content: Sequence[Mapping[str, Any]]) -> float:
    return sum(estimate_block(block) for block in content)


class EstimateMemo:
    """Per-message estimates, keyed on the message's uuid and checked against
    the identity (``id``) and length of its content list.

    The codebase rule this relies on: the content list of a message in the
    conversation is never edited in place; a change replaces the list
    (``message.content = [...]`` or ``dataclasses.replace``). A replaced list
    is a different object, so its message is measured again. An in-place edit
    that changes the length is caught by the length; one that keeps it is not.

    Each entry holds its content list, so the identity check is exact (the
    list's id cannot be reused while the entry lives). The size is bounded by
    two generations: when the current one fills up it becomes the previous
    one and the old previous one is dropped; entries found in the previous
    generation move back into the current one. Keying on the uuid alone (not a
    tuple) halves the cost of a lookup, which is what a full count is made of.
    """

    def __init__(self, generation_size: int = 4_096) -> None:
        self._generation_size = generation_size
        self._current: dict[str, tuple[list[Any], int, float]] = {}
        self._previous: dict[str, tuple[list[Any], int, float]] = {}

    def estimate(self, message: Message) -> float:
        content = message.content
        entry = self._current.get(message.uuid)
        if entry is not None and entry[0] is content and entry[1] == len(content):
            return entry[2]
        entry = self._previous.get(message.uuid)
        if entry is None or entry[0] is not content or entry[1] != len(content):
            entry = (content, len(content), _measure(content))
        if len(self._current) >= self._generation_size:
            self._previous, self._current = self._current, {}
        self._current[message.uuid] = entry
        return entry[2]

    def total(self, messages: Iterable[Message]) -> float:
        """Raw tokens of all the messages: one dictionary lookup each when they are known."""
        get = self._current.get
        total = 0.0
        for message in messages:
            content = message.content
            entry = get(message.uuid)
            if entry is not None and entry[0] is content and entry[1] == len(content):
                total += entry[2]
            else:
                total += self.estimate(message)
        return total

    def clear(self) -> None:
        self._current.clear()
        self._previous.clear()

    def retain(self, messages: Iterable[Message]) -> None:
        """Keep only the entries of ``messages``: after a compaction the others are gone from
        the context, and each entry holds its message's content alive."""
        kept: dict[str, tuple[list[Any], int, float]] = {}
        for message in messages:
            entry = self._current.get(message.uuid) or self._previous.get(message.uuid)
            if entry is not None:
                kept[message.uuid] = entry
        self._current, self._previous = kept, {}

    def __len__(self) -> int:
        return len(self._current.keys() | self._previous.keys())


_MEMO = EstimateMemo()


def estimate_message(message: Message) -> float:
    """Raw (unpadded) tokens of one message's content, memoised."""
    return _MEMO.estimate(message)


def clear_estimate_memo() -> None:
    _MEMO.clear()


def raw_estimate(messages: Iterable[Message]) -> float:
    """Raw (unpadded) tokens of the messages, memoised."""
    return _MEMO.total(messages)


def estimate_messages(messages: Iterable[Message]) -> int:
    """Tokens of the messages as the reference estimates them: the raw sum padded by 4/3."""
    return math.ceil(raw_estimate(messages) * PADDING)


def estimate_system(system_blocks: Iterable[Mapping[str, Any]]) -> float:
    """Raw tokens of the system prompt blocks."""
    return sum(estimate_block(block) for block in system_blocks)


def estimate_tools(tools_api: Iterable[Mapping[str, Any]]) -> float:
    """Raw tokens of the tool definitions: each tool's JSON / 4."""
    return sum(_json_chars(tool) for tool in tools_api) / CHARS_PER_TOKEN


def _usage_int(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass(frozen=True)
class Anchor:
    """The API's count of the context as of one response, and where that response sits."""

    tokens: int
    uuid: str
    index: int


class TokenCounter:
    """The context size as the API sees it, for one session.

    After a response, the API's own figures (input + cache read + cache write +
    output) anchor the count at that response; later counts add a calibrated
    estimate of the messages after it. When the anchor's message is no longer
    where it was (the conversation was compacted or rewound), everything is
    estimated, calibrated. ``source`` says which of the two the last count was.
    """

    SMOOTHING = 0.3  # weight of a new observation once a few have been seen

    def __init__(self, calibration: float = PADDING) -> None:
        self.calibration = calibration
        self.source = "estimate"
        self.observations = 0
        self._anchor: Anchor | None = None
        self._replaced = False  # the conversation was replaced since the last count

    @property
    def anchor(self) -> Anchor | None:
        return self._anchor

    def observe_response(
        self,
        request_messages: list[Message],
        usage: Mapping[str, Any],
        response: Message,
        request_overhead_estimate: float,
        *,
        position: int | None = None,
        cleared_input_tokens: int = 0,
    ) -> None:
        """Learn from a response's usage.

        ``request_messages`` are the messages that were sent; the response is
        taken to sit right after them in the conversation unless ``position``
        says otherwise. ``request_overhead_estimate`` is the raw estimate of
        the system prompt and tools of that request.

        ``cleared_input_tokens`` is what the API's context editing took out of
        the request before counting it (server-side clearing). The reported
        input is then smaller than the messages sent, so the calibration, which
        compares the API's count with the estimate of those same messages, adds
        it back; skipping the response instead would stop calibrating for good
        once clearing starts, since the API clears on every request after that.
        The anchor keeps the reported figure: that is what the model sees, and
        what the next request, cleared the same way, will cost.
        """
        input_tokens = sum(_usage_int(usage, key) for key in INPUT_USAGE_KEYS)
        if input_tokens <= 0:
            return  # a gateway that reports no usage: keep estimating
        raw = request_overhead_estimate + raw_estimate(request_messages)
        if raw > 0:
            self.observations += 1
            # The starting value counts as one observation, so the first response weighs half.
            weight = max(self.SMOOTHING, 1 / (self.observations + 1))
            ratio = _clamp((input_tokens + max(0, cleared_input_tokens)) / raw)
            self.calibration = _clamp(self.calibration + weight * (ratio - self.calibration))
        index = len(request_messages) if position is None else position
        total = input_tokens + _usage_int(usage, "output_tokens")
        self._anchor = Anchor(tokens=total, uuid=response.uuid, index=index)

    def count(self, messages: Sequence[Message], overhead_estimate: float) -> int:
        """Tokens the next request with these messages would take (before its output)."""
        if self._replaced:
            self._replaced = False
            _MEMO.retain(messages)
        anchor = self._anchor
        if (
            anchor is not None
            and anchor.index < len(messages)
            and messages[anchor.index].uuid == anchor.uuid
        ):
            self.source = "api"
            tail = raw_estimate(messages[anchor.index + 1 :])
            return anchor.tokens + math.ceil(tail * self.calibration)
        self.source = "estimate"
        return self.estimate(messages, overhead_estimate)

    def estimate(self, messages: Sequence[Message], overhead_estimate: float) -> int:
        """The calibrated estimate alone, for messages not (yet) in the conversation."""
        return math.ceil((overhead_estimate + raw_estimate(messages)) * self.calibration)

    def seed(self, calibration: float) -> None:
        """Start from a calibration learnt earlier (a resumed session), trusted as a few
        observations would be."""
        self.calibration = _clamp(calibration)
        self.observations = max(self.observations, 3)

    def adjust(self, delta_tokens: int) -> None:
        """Shift the anchor, e.g. by the (negative) tokens microcompact just cleared before it."""
        if self._anchor is not None:
            tokens = max(0, self._anchor.tokens + delta_tokens)
            self._anchor = Anchor(tokens, self._anchor.uuid, self._anchor.index)

    def anchor_on(self, response: Message, index: int) -> bool:
        """Count from ``response`` (at ``index``) by the usage it carries, learning nothing
        from it again (the conversation went back to it: a rewind); False without usage."""
        usage = response.usage or {}
        input_tokens = sum(_usage_int(usage, key) for key in INPUT_USAGE_KEYS)
        if input_tokens <= 0:
            return False
        total = input_tokens + _usage_int(usage, "output_tokens")
        self._anchor = Anchor(tokens=total, uuid=response.uuid, index=index)
        return True

    def invalidate(self) -> None:
        """Forget the anchor, e.g. after a compaction replaced the conversation; the next count
        also lets the memo forget the messages that left it."""
        self._anchor = None
        self._replaced = True


def _clamp(value: float) -> float:
    low, high = CALIBRATION_RANGE
    return min(high, max(low, value))
