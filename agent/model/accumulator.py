"""One streamed response put together from the API's raw events, its text emitted as it comes.

With ``raw`` on, every raw event also goes out as it is (``StreamEvent``), for
stream-json's ``--include-partial-messages``. The response keeps only the
block types ccx knows (``agent.core.sendable``) and no text block without
words: every later request sends it back, and the API would refuse the rest.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from agent.core.events import EventSink, StreamEvent, TextDelta, ThinkingDelta
from agent.core.messages import ResponseBlock
from agent.core.sendable import is_blank_text, is_response_block
from agent.core.thinking import THINKING_TYPES
from tools.surrogates import escape_text, escape_value

log = logging.getLogger(__name__)

# Blocks whose input streams as input_json_delta: the model's tool calls, and the calls of
# server tools (web search) the API runs itself.
JSON_INPUT_TYPES = frozenset({"tool_use", "server_tool_use"})
SERVER_TOOL_TYPES = frozenset({"server_tool_use", "web_search_tool_result"})


@dataclass
class StreamedResponse:
    content: list[ResponseBlock]
    api_id: str | None
    model: str | None
    stop_reason: str | None
    usage: dict[str, int]
    # tool_use ids whose streamed input was not valid JSON, with the raw text
    invalid_inputs: dict[str, str] = field(default_factory=dict)
    duration_s: float = 0.0
    # what the API's context editing cleared from this request (context_management.applied_edits)
    applied_edits: list[dict[str, Any]] = field(default_factory=list)
    # the request could not be encoded as it was and went out with its text escaped
    request_escaped: bool = False
    # a server tool's calls and results (web search), kept apart: the conversation never
    # holds them, the caller that offered the tool reads them
    server_blocks: list[dict[str, Any]] = field(default_factory=list)


class Accumulator:
    """Builds the assistant message from raw stream events, emitting text as it comes."""

    def __init__(self, emit: EventSink, raw: bool = False) -> None:
        self.emit = emit
        self.raw = raw  # every raw event out as a StreamEvent too
        self.blocks: dict[int, dict[str, Any]] = {}
        self.partial_json: dict[int, list[str]] = {}
        self.api_id: str | None = None
        self.model: str | None = None
        self.stop_reason: str | None = None
        self.usage: dict[str, int] = {}
        self.applied_edits: list[dict[str, Any]] = []
        self.streamed = False  # a text or thinking delta went out to the front end

    def feed(self, event: Any) -> None:
        kind = event.type
        if self.raw:
            self.emit(StreamEvent(event.to_dict() if hasattr(event, "to_dict") else dict(event)))
        if kind == "content_block_delta":
            self._delta(event.index, event.delta)
        elif kind == "content_block_start":
            block = event.content_block.model_dump(exclude_none=True)
            if block["type"] in JSON_INPUT_TYPES:  # the input streams as JSON deltas
                block["input"] = {}
                self.partial_json[event.index] = []
            self.blocks[event.index] = block
        elif kind == "content_block_stop":
            self._finish_block(event.index)
        elif kind == "message_start":
            self.api_id = event.message.id
            self.model = event.message.model
            self._merge_usage(event.message.usage)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason
            self._merge_usage(event.usage)
            # Not a field of the non-beta event type: the SDK keeps it as an extra (a dict).
            self.applied_edits = _applied_edits(getattr(event, "context_management", None))

    def _delta(self, index: int, delta: Any) -> None:
        block = self.blocks[index]
        kind = delta.type
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta.text
            self.streamed = True
            self.emit(TextDelta(escape_text(delta.text)))
        elif kind == "input_json_delta":
            self.partial_json[index].append(delta.partial_json)
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.thinking
            self.streamed = True
            self.emit(ThinkingDelta(escape_text(delta.thinking)))
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta.signature
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.citation.model_dump(exclude_none=True))

    def _finish_block(self, index: int) -> None:
        block = self.blocks.get(index)
        if block is None or block["type"] not in JSON_INPUT_TYPES:
            return
        raw = "".join(self.partial_json.pop(index, []))
        if not raw.strip():
            return
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            block["input"] = parsed
        else:
            block["input"] = {}
            block["_invalid_input"] = raw

    def _merge_usage(self, usage: Any) -> None:
        if usage is None:
            return
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(usage, key, None)
            if value is not None:
                self.usage[key] = value

    def result(self) -> StreamedResponse:
        content: list[ResponseBlock] = []
        server: list[dict[str, Any]] = []
        invalid: dict[str, str] = {}
        for index in sorted(self.blocks):
            # Lone surrogates from the model's JSON (text, thinking, tool input) are escaped
            # here, so the tools run on, and the transcript keeps, what later requests send.
            block = self.blocks[index]
            if block["type"] not in THINKING_TYPES:  # thinking goes back as it came, or not
                block = escape_value(block)
            if raw := block.pop("_invalid_input", None):
                invalid[block["id"]] = raw
            if block["type"] in SERVER_TOOL_TYPES:
                server.append(block)
                continue
            if not is_response_block(block):
                log.warning(
                    "left out a response block of a type ccx does not know: %r", block.get("type")
                )
                continue
            if is_blank_text(block):
                continue  # the API refuses empty text blocks when the history is sent back
            content.append(block)
        return StreamedResponse(
            content,
            self.api_id,
            self.model,
            self.stop_reason,
            self.usage,
            invalid,
            applied_edits=self.applied_edits,
            server_blocks=server,
        )


def _applied_edits(context_management: Any) -> list[dict[str, Any]]:
    """``context_management.applied_edits`` as plain dicts, from a dict or an SDK model."""
    if context_management is None:
        return []
    if hasattr(context_management, "model_dump"):
        context_management = context_management.model_dump()
    edits = (
        context_management.get("applied_edits") if isinstance(context_management, dict) else None
    )
    if not isinstance(edits, list):
        return []
    return [
        edit.model_dump() if hasattr(edit, "model_dump") else edit
        for edit in edits
        if isinstance(edit, dict) or hasattr(edit, "model_dump")
    ]
