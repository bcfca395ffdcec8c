"""What a tool result may hold for the model besides plain text: the Messages API's text,
image, document and tool reference blocks, typed.

They are the SDK's ``TextBlockParam``, ``ImageBlockParam`` and ``DocumentBlockParam`` as
ccx keeps them (lists where the SDK takes any iterable). The tools build them, so they
live in the lowest layer; ``agent.core.messages`` adds the blocks of a conversation.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict


class CacheControl(TypedDict):
    type: Literal["ephemeral"]
    ttl: NotRequired[Literal["5m", "1h"]]


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str
    citations: NotRequired[list[dict[str, Any]]]
    cache_control: NotRequired[CacheControl]


class ImageBlock(TypedDict):
    type: Literal["image"]
    source: dict[str, Any]  # base64 data with its media type, or a URL
    cache_control: NotRequired[CacheControl]


class DocumentBlock(TypedDict):
    type: Literal["document"]
    source: dict[str, Any]  # a PDF or plain text, inline or by URL
    title: NotRequired[str]
    context: NotRequired[str]
    citations: NotRequired[dict[str, Any]]
    cache_control: NotRequired[CacheControl]


class ToolReferenceBlock(TypedDict):
    """A tool the result loads (``ToolSearch``): the API puts its definition in its place."""

    type: Literal["tool_reference"]
    tool_name: str


ToolResultPart: TypeAlias = TextBlock | ImageBlock | DocumentBlock | ToolReferenceBlock


def text_block(text: str) -> TextBlock:
    return {"type": "text", "text": text}
