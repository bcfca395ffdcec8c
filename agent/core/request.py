"""Building the Messages API request, with prompt-cache breakpoints that keep the prefix stable.

The API caches the prefix up to each ``cache_control`` block (tools, then
system, then messages), and looks back at most 20 blocks from a breakpoint for
an earlier cached prefix. So: one breakpoint on the last tool, one on the last
system block (both never move), one on the end of the conversation (this
request's tail, read back by the next request), and one on the end of the
previous user turn (what the previous request cached), which still hits when
a tool round added more than 20 blocks. Four in all, the API's maximum.

With an ``anchor`` (the last message of the prefix context management has
frozen: nothing before it will be cleared again), the tools' breakpoint gives
way to one on the anchor. The system breakpoint already covers the tools
(they come first in the prefix), and the anchor keeps that frozen prefix
cached, so a clear after it rewrites only what follows the anchor instead of
everything after the system prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent.core.messages import Message

EPHEMERAL = {"type": "ephemeral"}


def build_request(
    *,
    model: str,
    system: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    messages: Sequence[Message],
    max_tokens: int,
    extra: dict[str, Any] | None = None,
    anchor: int | None = None,
) -> dict[str, Any]:
    api_messages = [m.to_api() for m in messages]
    anchor = usable_anchor(api_messages, anchor)
    api_messages = with_message_breakpoints(api_messages, anchor)
    request: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": _mark_last(system),
        "messages": api_messages,
    }
    if tools:
        request["tools"] = list(tools) if anchor is not None else _mark_last(tools)
    if extra:
        request.update(extra)
    return request


def with_message_breakpoints(
    api_messages: list[dict[str, Any]], anchor: int | None = None
) -> list[dict[str, Any]]:
    """Copies of the last message and of the previous user turn, each with a breakpoint,
    and of the ``anchor`` message when it is a user message before both."""
    if not api_messages:
        return api_messages
    targets = _tail_targets(api_messages)
    if usable_anchor(api_messages, anchor) is not None:
        targets.append(anchor)
    for index in targets:
        message = api_messages[index]
        api_messages[index] = {**message, "content": _mark_last(message["content"])}
    return api_messages


def _tail_targets(api_messages: list[dict[str, Any]]) -> list[int]:
    """The last message and the previous user turn before it (when there is one)."""
    last = len(api_messages) - 1
    for index in range(last - 1, -1, -1):
        if api_messages[index]["role"] == "user":
            return [last, index]
    return [last]


def usable_anchor(api_messages: list[dict[str, Any]], anchor: int | None) -> int | None:
    """``anchor`` when it names a user message with blocks before the tail's breakpoints."""
    if anchor is None or not api_messages or not 0 <= anchor < _tail_targets(api_messages)[-1]:
        return None
    message = api_messages[anchor]
    content = message["content"]
    if message["role"] != "user" or not isinstance(content, list) or not content:
        return None
    return anchor


def _mark_last(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not blocks:
        return blocks
    marked = list(blocks)
    marked[-1] = {**marked[-1], "cache_control": EPHEMERAL}
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
