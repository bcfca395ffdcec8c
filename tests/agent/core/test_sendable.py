"""The API's content rules as ccx applies them: blank text, images, block types, breakpoints."""

from __future__ import annotations

from typing import Any

import pytest

from agent.core.messages import Message
from agent.core.request import build_request, with_message_breakpoints
from agent.core.sendable import (
    NO_OUTPUT,
    is_blank,
    may_carry_cache_control,
    sendable_content,
    tool_result_content,
    without_blank_text,
)
from tests.request_rules import refusals

PNG = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
SVG = {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml", "data": "PHN2"}}
THINKING = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
REDACTED = {"type": "redacted_thinking", "data": "opaque"}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


@pytest.mark.parametrize("value", ["", " ", "\n\t ", "\u3000\u00a0", None, 3])
def test_blank_is_nothing_or_only_whitespace(value: Any) -> None:
    assert is_blank(value)


def test_words_are_not_blank() -> None:
    assert not is_blank(" a ") and not is_blank(".")


def test_blank_text_blocks_are_left_out_and_others_kept_in_order() -> None:
    blocks = [text(""), text("a"), PNG, text("  \n"), text("b")]
    assert without_blank_text(blocks) == [text("a"), PNG, text("b")]


def test_a_tool_result_says_something_and_shows_only_images_the_api_takes() -> None:
    assert tool_result_content("") == NO_OUTPUT
    assert tool_result_content(" \n") == NO_OUTPUT
    assert tool_result_content("  ok  ") == "  ok  "  # words keep their spacing
    assert tool_result_content([]) == NO_OUTPUT
    assert tool_result_content([text(" "), text("")]) == NO_OUTPUT
    assert tool_result_content([text(""), PNG]) == [PNG]
    (described,) = tool_result_content([SVG])
    assert described["type"] == "text" and "image/svg+xml" in described["text"]


def test_sendable_content_keeps_the_same_list_when_nothing_changes() -> None:
    blocks = [text("a"), THINKING, {"type": "tool_use", "id": "t", "name": "Read", "input": {}}]
    assert sendable_content(blocks, "assistant") == (blocks, [])
    assert sendable_content(blocks, "assistant")[0] is blocks


def test_sendable_content_leaves_out_unknown_types_and_blank_text() -> None:
    blocks = [THINKING, {"type": "server_tool_use", "id": "s"}, text(" "), text("hi"), REDACTED]
    kept, dropped = sendable_content(blocks, "assistant")
    assert kept == [THINKING, text("hi"), REDACTED]
    assert kept[0] is THINKING  # thinking blocks go back exactly as received
    assert dropped == ["server_tool_use", "text"]
    user = [{"type": "tool_use", "id": "x"}, SVG, {"type": "tool_result", "tool_use_id": "t",
                                                      "content": [text("")]}]  # fmt: skip
    kept, dropped = sendable_content(user, "user")
    assert dropped == ["tool_use"]
    assert kept[0]["type"] == "text" and "image/svg+xml" in kept[0]["text"]
    assert kept[1] == {"type": "tool_result", "tool_use_id": "t", "content": NO_OUTPUT}


@pytest.mark.parametrize(
    ("block", "may"),
    [(text("a"), True), (text(" "), False), (THINKING, False), (REDACTED, False), (PNG, True),
     ({"type": "tool_result", "tool_use_id": "t", "content": "x"}, True)],
)  # fmt: skip
def test_which_blocks_may_carry_a_breakpoint(block: dict[str, Any], may: bool) -> None:
    assert may_carry_cache_control(block) is may


def marked(blocks: list[dict[str, Any]]) -> list[int]:
    return [i for i, block in enumerate(blocks) if "cache_control" in block]


def test_the_breakpoint_skips_thinking_and_blank_text_at_the_end() -> None:
    use = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
    messages = [
        {"role": "user", "content": [text("go"), text("")]},
        {"role": "assistant", "content": [text("reading"), use, THINKING]},
        {"role": "user", "content": [REDACTED]},
    ]
    out = with_message_breakpoints([dict(m) for m in messages])
    assert marked(out[0]["content"]) == [0]  # the previous user turn: its text, not the blank
    assert marked(out[2]["content"]) == []  # nothing there may carry one: none is put
    system = [text("You help."), text("")]
    request = build_request(
        model="m", system=system, tools=[], messages=[Message("user", [text("hi")])], max_tokens=5
    )
    assert marked(request["system"]) == [0]
    assert refusals(request) == ["system.1: blank text"]  # ccx never builds one; the check works
