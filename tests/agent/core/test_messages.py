"""ccx's content-block types against the `anthropic` SDK's request types they stand for.

ccx types its blocks with its own TypedDicts (lists where the SDK takes any iterable); a
key the SDK does not have, a key required on one side only or another ``type`` tag would
make mypy vouch for blocks the API refuses.
"""

from __future__ import annotations

from typing import Any

import anthropic.types
import pytest
import typing_extensions as tx

from agent.core.messages import (
    ApiMessage,
    CacheControl,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    tool_result_block,
)

PAIRS = [
    (TextBlock, "TextBlockParam"),
    (ImageBlock, "ImageBlockParam"),
    (DocumentBlock, "DocumentBlockParam"),
    (ToolUseBlock, "ToolUseBlockParam"),
    (ToolResultBlock, "ToolResultBlockParam"),
    (ThinkingBlock, "ThinkingBlockParam"),
    (RedactedThinkingBlock, "RedactedThinkingBlockParam"),
    (CacheControl, "CacheControlEphemeralParam"),
]


def _keys(typed_dict: Any) -> dict[str, bool]:
    """Each key of a TypedDict and whether it is required (its marker, else the totality)."""
    hints = tx.get_type_hints(typed_dict, include_extras=True)
    required = {}
    for name, hint in hints.items():
        origin = tx.get_origin(hint)
        if origin is tx.Required:
            required[name] = True
        elif origin is tx.NotRequired:
            required[name] = False
        else:
            required[name] = typed_dict.__total__
    return required


def _tag(typed_dict: Any) -> tuple[str, ...]:
    hint = tx.get_type_hints(typed_dict, include_extras=True)["type"]
    while tx.get_origin(hint) in (tx.Required, tx.NotRequired):
        (hint,) = tx.get_args(hint)
    return tx.get_args(hint)


@pytest.mark.parametrize(("ours", "sdk_name"), PAIRS, ids=[name for _, name in PAIRS])
def test_a_block_type_has_the_sdk_keys_tag_and_required_keys(ours: Any, sdk_name: str) -> None:
    sdk = getattr(anthropic.types, sdk_name)
    ours_keys, sdk_keys = _keys(ours), _keys(sdk)
    assert set(ours_keys) <= set(sdk_keys), (
        f"keys the SDK does not have: {ours_keys.keys() - sdk_keys.keys()}"
    )
    assert {k for k, r in ours_keys.items() if r} == {k for k, r in sdk_keys.items() if r}
    assert _tag(ours) == _tag(sdk)


def test_an_api_message_is_role_and_content() -> None:
    assert _keys(ApiMessage) == {"role": True, "content": True}
    assert set(tx.get_args(tx.get_type_hints(ApiMessage)["role"])) == {"user", "assistant"}


def test_the_block_views_pick_by_type() -> None:
    use: ToolUseBlock = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
    result = tool_result_block("t1", "done", is_error=True)
    assistant = Message(role="assistant", content=[{"type": "text", "text": "a"}, use])
    user = Message(
        role="user", content=[result, {"type": "text", "text": "b"}, {"type": "text", "text": "c"}]
    )
    assert assistant.tool_uses() == [use]
    assert user.tool_results() == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "done", "is_error": True}
    ]
    assert user.text() == "bc"
    assert assistant.to_api() == {"role": "assistant", "content": assistant.content}
