"""The API's thinking rules, checked on every request a test's fake API received.

Independent of ccx's own code (agent/core/thinking.py): it reads only the
request bodies and the replies the fake API sent, so a bug in ccx's rules
cannot hide itself here.

- every thinking block sent back is one a reply carried, byte for byte
  (thinking text and signature; redacted_thinking data as received);
- with thinking on, the assistant message a tool loop continues (the last one,
  followed by the user message with its tool results) starts with its
  thinking block;
- no cache_control on a thinking block, thinking only in assistant messages;
- ``max_tokens`` above an ``enabled`` budget.
"""

from __future__ import annotations

import json
from typing import Any

THINKING = ("thinking", "redacted_thinking")


def emitted_thinking(requests: list[Any]) -> dict[str, dict[str, Any]]:
    """Every thinking block the fake API's replies carried, keyed by its canonical JSON."""
    found: dict[str, dict[str, Any]] = {}
    for request in requests:
        item = request.response_item
        for block in getattr(item, "content", None) or []:
            if block.get("type") in THINKING:
                found[_key(block)] = block
    return found


def _key(block: dict[str, Any]) -> str:
    fields = ("type", "thinking", "signature") if block["type"] == "thinking" else ("type", "data")
    return json.dumps({k: block.get(k) for k in fields}, sort_keys=True)


def thinking_on(body: dict[str, Any]) -> bool:
    config = body.get("thinking") or {}
    return isinstance(config, dict) and config.get("type") in ("enabled", "adaptive")


def violations(requests: list[Any]) -> list[str]:
    """What breaks the rules, in words, for every request (empty: all kept)."""
    emitted = emitted_thinking(requests)
    problems: list[str] = []
    for number, request in enumerate(requests):
        body = request.body
        problems += [f"request {number}: {p}" for p in request_violations(body, emitted)]
    return problems


def request_violations(body: dict[str, Any], emitted: dict[str, dict[str, Any]]) -> list[str]:
    problems = []
    messages = body.get("messages") or []
    for i, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if block.get("type") not in THINKING:
                continue
            where = f"messages.{i}.content.{j}"
            if message.get("role") != "assistant":
                problems.append(f"{where}: thinking in a user message")
            if "cache_control" in block:
                problems.append(f"{where}: cache_control on a thinking block")
            if _key(block) not in emitted or set(block) - {"cache_control"} != set(
                emitted[_key(block)]
            ):
                problems.append(f"{where}: a thinking block no reply carried (changed?)")
    if thinking_on(body):
        config = body["thinking"]
        if config.get("type") == "enabled" and config.get("budget_tokens", 0) >= body.get(
            "max_tokens", 0
        ):
            problems.append("max_tokens is not above the thinking budget")
        last = max(
            (i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None
        )
        if last is not None and last + 1 < len(messages):
            follower = messages[last + 1].get("content")
            in_loop = isinstance(follower, list) and any(
                b.get("type") == "tool_result" for b in follower
            )
            content = messages[last].get("content") or [{}]
            if in_loop and content[0].get("type") not in THINKING:
                problems.append(f"messages.{last}: the continued tool loop lost its thinking")
    return problems


def thinking_count(body: dict[str, Any]) -> int:
    return sum(
        1
        for message in body.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") in THINKING
    )
