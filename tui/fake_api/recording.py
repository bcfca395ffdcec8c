"""What the fake Messages API saw: one `RecordedRequest` per POST, with helpers for assertions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.fake_api.billing import RequestBilling
    from tui.fake_api.context_editing import ContextEditing
    from tui.fake_api.script import ResponseItem


@dataclass
class RecordedRequest:
    """One request as received, and what the server answered."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float
    server_seconds: float = 0.0  # request line read -> last response bytes handed to the socket
    response_item: ResponseItem | None = None
    status: int | None = None
    billing: RequestBilling | None = None
    connection_id: int = 0  # 1 for the first connection the server accepted, and so on
    error: str | None = None  # the validation or server error this request was answered with
    # what context management did to the request (None: it asked for none)
    context_editing: ContextEditing | None = None

    @property
    def applied_edits(self) -> list[dict[str, Any]]:
        """The context-management edits applied to this request, as the response reported them."""
        return self.context_editing.applied_edits if self.context_editing else []

    @property
    def cleared_tool_use_ids(self) -> list[str]:
        """tool_use_id of every result context management cleared from this request."""
        return self.context_editing.cleared_tool_use_ids if self.context_editing else []

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.body.get("messages")
        return messages if isinstance(messages, list) else []

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def estimated_tokens(self) -> int:
        return self.billing.estimated_tokens if self.billing else 0

    def system_text(self) -> str:
        """The system prompt's text, blocks joined with blank lines."""
        return "\n\n".join(_texts(self.body.get("system")))

    def last_user_text(self) -> str:
        """The text of the last user message (text blocks and tool_result text joined)."""
        for message in reversed(self.messages):
            if isinstance(message, dict) and message.get("role") == "user":
                return "\n".join(_texts(message.get("content")))
        return ""

    def all_text(self) -> str:
        """Every text, tool_result and system string in the request, joined by newlines."""
        parts = list(_texts(self.body.get("system")))
        for message in self.messages:
            if isinstance(message, dict):
                parts.extend(_texts(message.get("content")))
        return "\n".join(parts)

    def tool_result_ids(self) -> list[str]:
        """tool_use_id of every tool_result block, in order."""
        return [
            block.get("tool_use_id", "")
            for message in self.messages
            if isinstance(message, dict) and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]

    def tool_use_ids(self) -> list[str]:
        """id of every tool_use block in the assistant messages, in order."""
        return [
            block.get("id", "")
            for message in self.messages
            if isinstance(message, dict) and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_use"
        ]


def _texts(content: Any) -> list[str]:
    """The strings inside a content value: a str, or text/tool_result/thinking blocks."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    out: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            out.append(block["text"])
        elif kind == "tool_result":
            out.extend(_texts(block.get("content")))
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            out.append(block["thinking"])
    return out
