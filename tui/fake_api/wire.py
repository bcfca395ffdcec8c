"""The Messages API's wire shapes: a Reply as a JSON Message or as SSE events; HTTP framing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from http import HTTPStatus
from io import BufferedIOBase
from typing import Any

from tui.fake_api.billing import RequestBilling
from tui.fake_api.script import Reply
from tui.fake_api.thinking import sign

DEFAULT_DELTAS_PER_BLOCK = 3


@dataclass(frozen=True)
class WireEvent:
    name: str
    data: dict[str, Any]
    chars: int = 0  # characters of generated content it carries, for pacing

    def encode(self) -> bytes:
        payload = json.dumps(self.data, ensure_ascii=False)
        try:
            return f"event: {self.name}\ndata: {payload}\n\n".encode()
        except UnicodeEncodeError:  # a lone surrogate a test scripts: sent as JSON's \udXXX
            payload = json.dumps(self.data)
            return f"event: {self.name}\ndata: {payload}\n\n".encode()


def message_json(
    reply: Reply,
    model: str,
    usage: dict[str, int],
    context_management: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The non-streaming response: one Message object (``context_management`` when asked for)."""
    message = {
        "id": reply.id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": reply.content,
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }
    if context_management is not None:
        message["context_management"] = context_management
    return message


def error_json(error_type: str, message: str, request_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "error", "error": {"type": error_type, "message": message}}
    if request_id is not None:
        body["request_id"] = request_id
    return body


def stream_events(
    reply: Reply,
    model: str,
    usage: dict[str, int],
    context_management: dict[str, Any] | None = None,
) -> Iterator[WireEvent]:
    """message_start, ping, each block's start/deltas/stop, message_delta, message_stop.

    The applied context-management edits, when the request asked for them,
    come on message_delta, as the API sends them.
    """
    start_usage = {**usage, "output_tokens": 1}
    start = message_json(reply, model, start_usage)
    start.update(content=[], stop_reason=None)
    yield WireEvent("message_start", {"type": "message_start", "message": start})
    yield WireEvent("ping", {"type": "ping"})
    for index, block in enumerate(reply.content):
        yield from _block_events(index, block, reply.chunk_chars)
    delta: dict[str, Any] = {
        "type": "message_delta",
        "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
        "usage": usage,
    }
    if context_management is not None:
        delta["context_management"] = context_management
    yield WireEvent("message_delta", delta)
    yield WireEvent("message_stop", {"type": "message_stop"})


def _chunks(text: str, chunk_chars: int | None) -> list[str]:
    if not text:
        return []
    size = chunk_chars or -(-len(text) // DEFAULT_DELTAS_PER_BLOCK)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _block_events(
    index: int, block: dict[str, Any], chunk_chars: int | None
) -> Iterator[WireEvent]:
    kind = block.get("type")
    deltas: list[tuple[dict[str, Any], int]] = []
    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [
            ({"type": "text_delta", "text": piece}, len(piece))
            for piece in _chunks(block.get("text", ""), chunk_chars)
        ]
    elif kind in ("tool_use", "server_tool_use"):
        start = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
        # "raw_input" streams text as-is, to play a model that emits malformed JSON.
        arguments = block.get("raw_input") or json.dumps(block.get("input", {}), ensure_ascii=False)
        deltas = [
            ({"type": "input_json_delta", "partial_json": piece}, len(piece))
            for piece in _chunks(arguments, chunk_chars)
        ]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            ({"type": "thinking_delta", "thinking": piece}, len(piece))
            for piece in _chunks(block.get("thinking", ""), chunk_chars)
        ]
        signature = block.get("signature") or sign(block.get("thinking", ""))
        deltas.append(({"type": "signature_delta", "signature": signature}, 0))
    else:  # redacted thinking, server tool results: sent whole at the start
        start = block
    yield WireEvent(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": start},
    )
    for delta, chars in deltas:
        yield WireEvent(
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": delta},
            chars,
        )
    yield WireEvent("content_block_stop", {"type": "content_block_stop", "index": index})


def reason_phrase(status: int) -> str:
    """The reason phrase of a status line (529 is the API's own)."""
    if status == 529:
        return "Overloaded"
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def wire_usage(reply: Reply, billing: RequestBilling) -> dict[str, int]:
    """The usage the client is told: the billing model's, or the reply's own numbers."""
    if reply.usage is None:
        return billing.usage()
    usage = {
        "input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": billing.output_tokens,
    }
    usage.update(reply.usage)
    return usage


def chunk(payload: bytes) -> bytes:
    """One chunk of chunked transfer encoding."""
    return b"%x\r\n%b\r\n" % (len(payload), payload)


def read_body(rfile: BufferedIOBase, headers: dict[str, str]) -> bytes:
    """A request body, by Content-Length or chunked transfer encoding.

    EOFError when the client hung up before sending all of it: no request was made.
    """
    if "content-length" in headers:
        length = int(headers["content-length"])
        body = rfile.read(length)
        if len(body) < length:
            raise EOFError("the client hung up part way through the request body")
        return body
    if "chunked" not in headers.get("transfer-encoding", ""):
        return b""
    parts = []
    while True:
        line = rfile.readline()
        if not line:
            raise EOFError("the client hung up part way through the request body")
        if not (size := int(line.split(b";")[0].strip() or b"0", 16)):
            break
        parts.append(rfile.read(size))
        if len(parts[-1]) < size:
            raise EOFError("the client hung up part way through the request body")
        rfile.readline()
    while rfile.readline() not in (b"\r\n", b"\n", b""):
        pass  # trailers
    return b"".join(parts)
