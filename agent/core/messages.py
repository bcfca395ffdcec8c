"""Conversation messages: the API's user/assistant turns plus the metadata ccx keeps.

Content is always a list of plain content-block dicts in the Messages API's
own JSON shape, so a message goes to the API, to the transcript and back
without conversion.
"""

from __future__ import annotations

import time
import uuid as uuid_module
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant"]

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
    content: list[dict[str, Any]]
    kind: Kind = "prompt"
    api_id: str | None = None  # the API's message id, for assistant responses
    uuid: str = field(default_factory=new_uuid)
    timestamp: float = field(default_factory=time.time)
    usage: dict[str, int] | None = None
    model: str | None = None
    stop_reason: str | None = None

    def to_api(self) -> dict[str, Any]:
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

    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    def tool_results(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_result"]

    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")


def user_text(text: str, kind: Kind = "prompt") -> Message:
    return Message(role="user", content=[{"type": "text", "text": text}], kind=kind)


def tool_result_block(
    tool_use_id: str, content: str | list[dict[str, Any]], is_error: bool = False
) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block
