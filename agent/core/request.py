"""Building the Messages API request, with prompt-cache breakpoints that keep the prefix stable.

The API caches the prefix up to each ``cache_control`` block (tools, then
system, then messages), and looks back at most 20 blocks from a breakpoint for
an earlier cached prefix. At most four breakpoints, in this order of need:

- the last system block (never moves; the tools come before it, so it covers
  them too);
- the end of the conversation (this request's tail, read back by the next);
- the end of the previous user turn (what the previous request cached), when
  the last round added more blocks than the look-back reaches;
- ``anchors``, newest first: messages that end prefixes context management
  keeps stable (nothing before the first will be cleared again; the second is
  where the last clear ended). A cached anchor means a clear after it
  rewrites only what follows it instead of everything after the system prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent.core.messages import ApiMessage, CacheControl, ContentBlock, Message, TextBlock
from agent.core.sendable import may_carry_cache_control

EPHEMERAL: CacheControl = {"type": "ephemeral"}
MIN_THINKING_BUDGET = 1_024  # the API's smallest thinking budget
# Asks the API to keep every earlier thinking block (thinking on only).
CLEAR_THINKING = {"type": "clear_thinking_20251015", "keep": "all"}
MESSAGE_BREAKPOINTS = 3  # the API allows 4; the system prompt has one
LOOKBACK_BLOCKS = 18  # the API looks back 20 blocks; a little margin


def build_request(
    *,
    model: str,
    system: Sequence[TextBlock],
    tools: list[dict[str, Any]],
    messages: Sequence[Message],
    max_tokens: int,
    extra: dict[str, Any] | None = None,
    anchors: Sequence[int] = (),
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": _mark_last(system),
        "messages": with_message_breakpoints([m.to_api() for m in messages], anchors),
    }
    if tools:
        request["tools"] = list(tools)
    if extra:
        request.update(extra)
    return fit_thinking(request)


def fit_thinking(request: dict[str, Any]) -> dict[str, Any]:
    """The request with a thinking budget below its ``max_tokens``, as the API requires.

    A call with a smaller output limit than the loop's (a summary, the session
    notes) shares it between thinking and the answer: half each. Below the
    API's smallest budget, thinking is off for that request, and with it the
    edit that only applies while thinking is on.
    """
    thinking = request.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return request
    budget, max_tokens = thinking.get("budget_tokens"), request["max_tokens"]
    if not isinstance(budget, int) or budget < max_tokens:
        return request
    budget = max_tokens // 2
    if budget >= MIN_THINKING_BUDGET:
        request["thinking"] = {**thinking, "budget_tokens": budget}
        return request
    request["thinking"] = {"type": "disabled"}
    body = request.get("extra_body")
    if not isinstance(body, dict):
        return request
    management = body.get("context_management")
    if isinstance(management, dict):
        edits = [
            e for e in management.get("edits") or [] if e.get("type") != CLEAR_THINKING["type"]
        ]
        management = {**management, "edits": edits}
        body = {**body, "context_management": management}
        if not edits:
            body.pop("context_management")
        request["extra_body"] = body
    return request


def with_message_breakpoints(
    api_messages: list[ApiMessage], anchors: Sequence[int] = ()
) -> list[ApiMessage]:
    """Copies of the messages that get the three message breakpoints: the last one, the
    previous user turn when the look-back would not reach it, then the anchors."""
    if not api_messages:
        return api_messages
    last, *previous = _tail_targets(api_messages)
    targets = [last]
    if previous and _blocks_after(api_messages, previous[0]) >= LOOKBACK_BLOCKS:
        targets += previous
    elif previous and not anchors:
        targets += previous  # nothing better to spend it on
    usable = usable_anchors(api_messages, anchors)
    targets += sorted(usable, reverse=True)[: MESSAGE_BREAKPOINTS - len(targets)]
    for index in targets:
        message = api_messages[index]
        api_messages[index] = {**message, "content": _mark_last(message["content"])}
    return api_messages


def _blocks_after(api_messages: list[ApiMessage], index: int) -> int:
    return sum(len(m["content"]) for m in api_messages[index + 1 :])


def _tail_targets(api_messages: list[ApiMessage]) -> list[int]:
    """The last message and the previous user turn before it (when there is one)."""
    last = len(api_messages) - 1
    for index in range(last - 1, -1, -1):
        if api_messages[index]["role"] == "user":
            return [last, index]
    return [last]


def usable_anchors(api_messages: list[ApiMessage], anchors: Sequence[int]) -> tuple[int, ...]:
    """The first two distinct ``anchors`` that name user messages with blocks before the
    tail's breakpoints."""
    if not api_messages:
        return ()
    end = _tail_targets(api_messages)[-1]
    usable: list[int] = []
    for anchor in anchors:
        if anchor in usable or not 0 <= anchor < end:
            continue
        message = api_messages[anchor]
        if message["role"] == "user" and message["content"]:
            usable.append(anchor)
    return tuple(usable[:2])


def _mark_last(blocks: Sequence[ContentBlock]) -> list[ContentBlock]:
    """A copy with a breakpoint on the last block that may carry one (never a thinking block
    or an empty text block)."""
    marked = list(blocks)
    for index in range(len(marked) - 1, -1, -1):
        block = marked[index]
        if block["type"] == "thinking" or block["type"] == "redacted_thinking":
            continue
        if may_carry_cache_control(block):
            block = block.copy()
            block["cache_control"] = EPHEMERAL
            marked[index] = block
            return marked
    return marked


def with_beta(extra: dict[str, Any] | None, beta: str) -> dict[str, Any]:
    """A copy of the request ``extra`` whose anthropic-beta header also names ``beta``.

    The SDK sends ``extra_headers`` as they are, so a beta already there is kept
    and the new one joins it, comma-separated, once.
    """
    merged = dict(extra or {})
    headers = dict(merged.get("extra_headers") or {})
    key = next((k for k in headers if k.lower() == "anthropic-beta"), "anthropic-beta")
    betas = [b.strip() for b in str(headers.get(key) or "").split(",") if b.strip()]
    if beta not in betas:
        betas.append(beta)
    headers[key] = ",".join(betas)
    merged["extra_headers"] = headers
    return merged
