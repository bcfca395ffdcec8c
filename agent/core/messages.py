"""Conversation messages: the API's user/assistant turns plus the metadata ccx keeps.

Content is always a list of plain content-block dicts in the Messages API's
own JSON shape, so a message goes to the API, to the transcript and back
without conversion. The block types below are that shape as ccx keeps it (the
SDK's ``*BlockParam`` types, with lists where the SDK takes any iterable; the
ones a tool result holds come from ``tools.result_content``). Blocks from
outside (a transcript, a hook, an MCP server) become them in
``agent.core.sendable``, which checks what the API would refuse.
"""

from __future__ import annotations

import time
import uuid as uuid_module
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from tools.result_content import CacheControl as CacheControl
from tools.result_content import DocumentBlock as DocumentBlock
from tools.result_content import ImageBlock as ImageBlock
from tools.result_content import TextBlock as TextBlock
from tools.result_content import ToolResultPart as ToolResultPart
from tools.result_content import text_block as text_block

Role = Literal["user", "assistant"]


class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]
    cache_control: NotRequired[CacheControl]


class ToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: NotRequired[str | list[ToolResultPart]]
    is_error: NotRequired[bool]
    cache_control: NotRequired[CacheControl]


class ThinkingBlock(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: str


class RedactedThinkingBlock(TypedDict):
    type: Literal["redacted_thinking"]
    data: str


# What ccx puts in a user message, and what it keeps of a response (it uses no server tools).
UserBlock: TypeAlias = TextBlock | ImageBlock | DocumentBlock | ToolResultBlock
ResponseBlock: TypeAlias = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock
ContentBlock: TypeAlias = UserBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock


class ApiMessage(TypedDict):
    """A message as the Messages API takes it."""

    role: Role
    content: list[ContentBlock]


# What a message is for, beyond its role. The loop and compaction use this to
# tell the user's own words from what ccx injected.
#   prompt      - typed by the user
#   tool_result - the user turn that answers the assistant's tool_use blocks
#   response    - one streamed assistant response
#   meta        - injected by ccx (notices, nudges, interruption markers)
#   summary     - a compaction summary
#   attachment  - context re-injected after compaction (files, skills, plan)
Kind = Literal["prompt", "tool_result", "response", "meta", "summary", "attachment"]

INTERRUPTED_TOOL_RESULT = "The user interrupted this tool call before it finished."
INTERRUPTED_BY_USER = "[Request interrupted by user]"


def new_uuid() -> str:
    return str(uuid_module.uuid4())


@dataclass
class Message:
    role: Role
    content: list[ContentBlock]
    kind: Kind = "prompt"
    api_id: str | None = None  # the API's message id, for assistant responses
    uuid: str = field(default_factory=new_uuid)
    timestamp: float = field(default_factory=time.time)
    usage: dict[str, int] | None = None
    model: str | None = None
    stop_reason: str | None = None

    def to_api(self) -> ApiMessage:
        return {"role": self.role, "content": self.content}

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "uuid": self.uuid,
            "timestamp": self.timestamp,
            "kind": self.kind,
            "message": self.to_api(),
        }
        for key in ("api_id", "usage", "model", "stop_reason"):
            value = getattr(self, key)
            if value is not None:
                record[key] = value
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Message:
        """The message a transcript record holds, its content as written: the loader
        (``agent.sessions.transcript``) checks it and leaves out what the API would refuse."""
        body = record["message"]
        content = body["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        return cls(
            role=body["role"],
            content=content,
            kind=record.get("kind", "prompt" if body["role"] == "user" else "response"),
            api_id=record.get("api_id"),
            uuid=record.get("uuid") or new_uuid(),
            timestamp=record.get("timestamp", 0.0),
            usage=record.get("usage"),
            model=record.get("model"),
            stop_reason=record.get("stop_reason"),
        )

    # -- block views -----------------------------------------------------------------

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if b["type"] == "tool_use"]

    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.content if b["type"] == "tool_result"]

    def text(self) -> str:
        return "".join(b["text"] for b in self.content if b["type"] == "text")


def user_text(text: str, kind: Kind = "prompt") -> Message:
    return Message(role="user", content=[text_block(text)], kind=kind)


def tool_result_block(
    tool_use_id: str, content: str | list[ToolResultPart], is_error: bool = False
) -> ToolResultBlock:
    block: ToolResultBlock = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block
