"""What the Messages API takes in a content block, as pure checks and filters.

The API refuses a request that holds a text block with no non-whitespace text
(at the top of a message or inside a tool_result), an image in a media type
other than JPEG, PNG, GIF or WebP, a ``cache_control`` on a thinking block or
an empty text block, and content block types it does not know. Every place
that builds blocks from outside input (prompts, commands, hooks, MCP results,
responses, transcripts) passes them through here, so nothing the API refuses
leaves ccx and one bad block never makes every later request fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard, TypeVar

from agent.core.messages import ContentBlock, ResponseBlock, Role, ToolResultPart, text_block

# A block as it came from outside (a transcript line, a hook, a stream): JSON not yet checked.
RawBlock = Mapping[str, Any]
B = TypeVar("B", bound=RawBlock)

IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
# What ccx keeps of a response: it uses no server tools, so their blocks never come.
RESPONSE_BLOCK_TYPES = frozenset({"text", "thinking", "redacted_thinking", "tool_use"})
# What ccx itself puts in a user message.
USER_BLOCK_TYPES = frozenset({"text", "image", "document", "tool_result"})
NO_OUTPUT = "(no output)"  # a tool_result must say something
NO_CONTENT = "(no content)"  # nor may a message be empty
BLANK_PROMPT = "Nothing to send: the prompt is empty or only whitespace."
_THINKING = ("thinking", "redacted_thinking")


def is_blank(text: object) -> bool:
    """Whether ``text`` is not a string with something besides whitespace in it."""
    return not isinstance(text, str) or not text.strip()


def is_blank_text(block: RawBlock) -> bool:
    """A text block the API would refuse: its text empty or only whitespace."""
    return block.get("type") == "text" and is_blank(block.get("text"))


def without_blank_text(blocks: Iterable[B]) -> list[B]:
    """``blocks`` without the text blocks that hold only whitespace (or nothing)."""
    return [block for block in blocks if not is_blank_text(block)]


def is_sendable_image(block: RawBlock) -> bool:
    """An image block in one of the API's four media types (or one it fetches itself)."""
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return isinstance(source, dict)
    return source.get("media_type") in IMAGE_MEDIA_TYPES


def tool_result_content(content: str | list[ToolResultPart]) -> str | list[ToolResultPart]:
    """A tool result's content as the API takes it: blank text dropped, an image in another
    media type described instead, and ``NO_OUTPUT`` for a result left with nothing."""
    if isinstance(content, str):
        return content if not is_blank(content) else NO_OUTPUT
    kept: list[ToolResultPart] = []
    for block in content:
        if block.get("type") == "image" and not is_sendable_image(block):
            block = text_block(_unshown_image(block))
        if not is_blank_text(block):
            kept.append(block)
    return kept or NO_OUTPUT


def _unshown_image(block: RawBlock) -> str:
    media_type = (block.get("source") or {}).get("media_type") or "an unknown type"
    return (
        f"[An image in {media_type}, not shown: the model takes only "
        f"{', '.join(IMAGE_MEDIA_TYPES)}]"
    )


def known_blocks(blocks: Iterable[RawBlock], role: Role) -> tuple[list[ContentBlock], list[str]]:
    """The blocks of a message of ``role`` whose types ccx knows, and the types it left out."""
    known = RESPONSE_BLOCK_TYPES if role == "assistant" else USER_BLOCK_TYPES
    kept: list[ContentBlock] = []
    dropped: list[str] = []
    for block in blocks:
        if _is_known(block, known):
            kept.append(block)
        else:
            dropped.append(str(block.get("type") if isinstance(block, dict) else None))
    return kept, dropped


def _is_known(block: object, known: frozenset[str]) -> TypeGuard[ContentBlock]:
    """A dict whose type ccx knows: from here on the block is one of ``ContentBlock``'s
    (the loader has checked the ids of tool blocks; blank text and unsendable images and
    thinking are checked where they are filtered)."""
    return isinstance(block, dict) and isinstance(block.get("type"), str) and block["type"] in known


def is_response_block(block: RawBlock) -> TypeGuard[ResponseBlock]:
    """A block of a type ccx keeps of a response (what ``_is_known`` says of the others)."""
    return _is_known(block, RESPONSE_BLOCK_TYPES)


def may_carry_cache_control(block: RawBlock) -> bool:
    """The API takes a cache breakpoint on any block but thinking and empty text."""
    return block.get("type") not in _THINKING and not is_blank_text(block)


def sendable_content(
    blocks: list[ContentBlock], role: Role
) -> tuple[list[ContentBlock], list[str]]:
    """A message's blocks as the API takes them back: types ccx does not know and blank text
    left out, images the API does not take described, tool results cleaned
    (``tool_result_content``); thinking blocks untouched. The
    same list when nothing changes; the types left out come second."""
    kept, dropped = known_blocks(blocks, role)
    out: list[ContentBlock] = []
    for block in kept:
        if block["type"] == "image" and not is_sendable_image(block):
            block = text_block(_unshown_image(block))
        if is_blank_text(block):
            dropped.append("text")
            continue
        if block["type"] == "tool_result" and "content" in block:
            content = tool_result_content(block["content"])
            if content != block["content"]:
                block = {**block, "content": content}
        out.append(block)
    if not dropped and all(a is b for a, b in zip(out, blocks, strict=True)):
        return blocks, []
    return out, dropped
