"""The context-management beta of the fake Messages API: clearing tool uses and thinking.

A request with ``context_management`` must name the beta
``context-management-2025-06-27`` in its anthropic-beta header; without it the
field is unknown and the request is refused (400), as the API refuses it.
With it, when the request's input tokens (the fake's estimate) exceed the
edit's trigger, the oldest tool results are replaced by a placeholder, never
those of the last ``keep`` tool uses nor those of ``exclude_tools``: oldest
first until at least ``clear_at_least`` tokens are gone, and nothing at all
when that much cannot be cleared. Without ``clear_at_least`` every eligible
result goes. The edited request is what is counted, cached and billed; the
response reports the edits under ``context_management.applied_edits``.

``clear_thinking_20251015`` drops the thinking blocks of all but the last
``keep`` assistant turns that have any (default 1; ``"all"`` keeps every one).
It needs thinking on and must be the first edit, as the API requires.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui.fake_api.billing import block_tokens, estimate_request_tokens
from tui.fake_api.rejection import Rejection, invalid

BETA = "context-management-2025-06-27"
CLEAR_TOOL_USES = "clear_tool_uses_20250919"
CLEAR_THINKING = "clear_thinking_20251015"
THINKING_BLOCKS = ("thinking", "redacted_thinking")
PLACEHOLDER = "[Tool result cleared by context management]"
DEFAULT_TRIGGER: dict[str, Any] = {"type": "input_tokens", "value": 100_000}
DEFAULT_KEEP: dict[str, Any] = {"type": "tool_uses", "value": 3}


@dataclass
class ContextEditing:
    """What the context editing of one request did."""

    body: dict[str, Any]  # the request as the model sees it
    applied_edits: list[dict[str, Any]] = field(default_factory=list)
    cleared_tool_use_ids: list[str] = field(default_factory=list)
    original_tokens: int = 0  # the estimate before any edit

    def response_field(self) -> dict[str, Any]:
        return {"applied_edits": self.applied_edits}


def betas(headers: dict[str, str]) -> list[str]:
    return [b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()]


def apply_context_management(
    body: dict[str, Any], headers: dict[str, str], thinking: bool = False
) -> ContextEditing | Rejection | None:
    """The request after its context-management edits; None when it asks for none.

    ``thinking`` says whether the request turns thinking on (clear_thinking needs it).
    """
    if "context_management" not in body:
        return None
    if BETA not in betas(headers):
        return invalid("context_management: Extra inputs are not permitted")
    edits = (
        body["context_management"].get("edits")
        if isinstance(body["context_management"], dict)
        else None
    )
    if not isinstance(edits, list):
        return invalid("context_management.edits: Input should be a valid list")
    outcome = ContextEditing(body, original_tokens=estimate_request_tokens(body))
    for index, edit in enumerate(edits):
        kind = edit.get("type") if isinstance(edit, dict) else edit
        where = f"context_management.edits.{index}"
        if kind == CLEAR_THINKING:
            if not thinking:
                return invalid(
                    f"{where}.type: `{CLEAR_THINKING}` strategy requires `thinking` to be "
                    "enabled or adaptive"
                )
            if index != 0:
                return invalid(
                    f"{where}.type: `{CLEAR_THINKING}` must be the first strategy in "
                    "`context_management.edits`"
                )
            rejection = _clear_thinking(outcome, edit, where)
        elif kind == CLEAR_TOOL_USES:
            rejection = _clear_tool_uses(outcome, edit, where)
        else:
            return invalid(f"{where}.type: {kind!r} is not supported here")
        if rejection is not None:
            return rejection
    return outcome


def _clear_thinking(outcome: ContextEditing, edit: dict[str, Any], where: str) -> Rejection | None:
    keep = edit.get("keep", {"type": "thinking_turns", "value": 1})
    for key in edit:
        if key not in ("type", "keep"):
            return invalid(f"{where}.{key}: Extra inputs are not permitted")
    if keep != "all" and (
        not isinstance(keep, dict)
        or keep.get("type") != "thinking_turns"
        or not isinstance(keep.get("value"), int)
        or keep["value"] < 1
    ):
        return invalid(
            f"{where}.keep: expected \"all\" or {{type: 'thinking_turns', value: integer >= 1}}"
        )
    body = outcome.body
    given = body.get("messages")
    messages = given if isinstance(given, list) else []
    turns = [
        i
        for i, message in enumerate(messages)
        if isinstance(message, dict)
        and message.get("role") == "assistant"
        and any(b.get("type") in THINKING_BLOCKS for b in _content(message))
    ]
    kept = len(turns) if keep == "all" else keep["value"]
    cleared = set(turns[: max(0, len(turns) - kept)])
    if not cleared:
        return None
    edited = [
        {**m, "content": [b for b in _content(m) if b.get("type") not in THINKING_BLOCKS]}
        if i in cleared and any(b.get("type") not in THINKING_BLOCKS for b in _content(m))
        else m
        for i, m in enumerate(messages)
    ]
    edited_body = {**body, "messages": edited}
    outcome.applied_edits.append(
        {
            "type": CLEAR_THINKING,
            "cleared_thinking_turns": len(cleared),
            "cleared_input_tokens": estimate_request_tokens(body)
            - estimate_request_tokens(edited_body),
        }
    )
    outcome.body = edited_body
    return None


def _content(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _threshold(edit: dict[str, Any], key: str, kinds: tuple[str, ...], where: str) -> Any:
    value = edit.get(key)
    if value is None:
        return None
    if (
        not isinstance(value, dict)
        or value.get("type") not in kinds
        or not isinstance(value.get("value"), int)
        or value["value"] < 0
    ):
        expected = " or ".join(repr(kind) for kind in kinds)
        return invalid(f"{where}.{key}: expected {{type: {expected}, value: integer >= 0}}")
    return value


def _clear_tool_uses(outcome: ContextEditing, edit: dict[str, Any], where: str) -> Rejection | None:
    trigger = _threshold(edit, "trigger", ("input_tokens", "tool_uses"), where)
    keep = _threshold(edit, "keep", ("tool_uses",), where)
    at_least = _threshold(edit, "clear_at_least", ("input_tokens",), where)
    for value in (trigger, keep, at_least):
        if isinstance(value, Rejection):
            return value
    exclude = edit.get("exclude_tools") or []
    if not isinstance(exclude, list) or not all(isinstance(name, str) for name in exclude):
        return invalid(f"{where}.exclude_tools: Input should be a valid list of strings")
    body = outcome.body
    uses = _tool_uses(body)
    trigger = trigger or DEFAULT_TRIGGER
    size = len(uses) if trigger["type"] == "tool_uses" else estimate_request_tokens(body)
    if size <= trigger["value"]:
        return None
    keep_count = (keep or DEFAULT_KEEP)["value"]
    kept = {tool_id for tool_id, _ in uses[len(uses) - keep_count :]} if keep_count else set()
    names = dict(uses)
    chosen: list[str] = []
    freed = 0
    minimum = at_least["value"] if at_least else 0
    for block in _tool_results(body):
        tool_id: Any = block.get("tool_use_id")  # the request's JSON, not yet validated
        if tool_id in kept or names.get(tool_id) in exclude or block.get("content") == PLACEHOLDER:
            continue
        chosen.append(tool_id)
        freed += block_tokens(block) - block_tokens(_placeholder(block))
        if minimum and freed >= minimum:
            break
    if not chosen or freed < minimum:
        return None  # the API clears nothing when it cannot clear enough
    edited = _replace_results(body, set(chosen))
    outcome.applied_edits.append(
        {
            "type": CLEAR_TOOL_USES,
            "cleared_tool_uses": len(chosen),
            "cleared_input_tokens": estimate_request_tokens(body) - estimate_request_tokens(edited),
        }
    )
    outcome.cleared_tool_use_ids.extend(chosen)
    outcome.body = edited
    return None


def _blocks(body: dict[str, Any], role: str) -> list[dict[str, Any]]:
    messages = body.get("messages")
    return [
        block
        for message in (messages if isinstance(messages, list) else [])
        if isinstance(message, dict) and message.get("role") == role
        for block in _content(message)
    ]


def _tool_uses(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (str(block.get("id")), str(block.get("name")))
        for block in _blocks(body, "assistant")
        if block.get("type") == "tool_use"
    ]


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [block for block in _blocks(body, "user") if block.get("type") == "tool_result"]


def _placeholder(block: dict[str, Any]) -> dict[str, Any]:
    cleared = {
        "type": "tool_result",
        "tool_use_id": block.get("tool_use_id"),
        "content": PLACEHOLDER,
    }
    for key in ("is_error", "cache_control"):
        if key in block:
            cleared[key] = block[key]
    return cleared


def _replace_results(body: dict[str, Any], ids: set[str]) -> dict[str, Any]:
    """A copy of the request with those results cleared; untouched messages are shared."""
    messages = []
    for message in body["messages"]:
        content = message.get("content") if isinstance(message, dict) else None
        if (
            isinstance(content, list)
            and message.get("role") == "user"
            and any(
                isinstance(b, dict)
                and b.get("type") == "tool_result"
                and b.get("tool_use_id") in ids
                for b in content
            )
        ):
            content = [
                _placeholder(b)
                if isinstance(b, dict)
                and b.get("type") == "tool_result"
                and b.get("tool_use_id") in ids
                else b
                for b in content
            ]
            message = {**message, "content": content}
        messages.append(message)
    return {**body, "messages": messages}
