"""The scripting DSL of the fake Messages API: what the server answers, one item per request.

A script is a list of items consumed in order, one per `POST /v1/messages`:
`Reply` (a model response, streamed as real SSE or sent as one JSON message),
`Fault` (an HTTP error with the API's error body), and the transport faults
`StreamError`, `Drop` and `Stall` that break a stream part way through. The
server's script may also hold callables that answer a `RecordedRequest` with
one of these (`server.ScriptItem`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from tui.fake_api.thinking import sign

_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_ID_RANDOM = random.Random()  # its own generator: a test seeding `random` must not repeat ids


def new_id(prefix: str) -> str:
    """An id in the API's style: prefix + 24 base62 characters (e.g. "msg_01...")."""
    return prefix + "01" + "".join(_ID_RANDOM.choices(_ID_ALPHABET, k=22))


@dataclass
class Reply:
    """One model response: content blocks in the API's JSON shape.

    A thinking block without a signature is signed (verifiably) when sent.
    `usage` None means the server computes it from its billing model; a dict is
    sent as given (missing cache fields 0, missing output_tokens estimated).
    `chunk_chars` sets the size of each text/JSON delta (default: at most ~3
    deltas a block); `tokens_per_s` paces the deltas in real time (chars/4
    tokens); `delay_s` waits before the response starts.
    """

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"
    usage: dict[str, int] | None = None
    id: str | None = None
    model: str | None = None
    delay_s: float = 0.0
    chunk_chars: int | None = None
    tokens_per_s: float | None = None
    hidden_output_tokens: int = 0  # thinking billed but not sent (omitted or redacted)

    def resolved(self) -> Reply:
        """A copy with every id filled in (message, tool_use ids, thinking signatures)."""
        content = []
        for block in self.content:
            kind = block.get("type")
            if kind in ("tool_use", "server_tool_use") and not block.get("id"):
                block = {**block, "id": new_id("toolu_" if kind == "tool_use" else "srvtoolu_")}
            elif kind == "thinking" and not block.get("signature"):
                block = {**block, "signature": sign(str(block.get("thinking", "")))}
            content.append(block)
        return replace(self, content=content, id=self.id or new_id("msg_"))


def text_reply(text: str, **kw: Any) -> Reply:
    """A reply with one text block."""
    return Reply(content=[{"type": "text", "text": text}], **kw)


def tool_reply(*calls: tuple[Any, ...], text: str | None = None, **kw: Any) -> Reply:
    """A reply calling tools: each call is (name, input) or (name, input, id).

    An input given as a string is streamed verbatim, e.g. malformed JSON.
    """
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for call in calls:
        name, tool_input, *rest = call
        block: dict[str, Any] = {"type": "tool_use", "name": name, "input": tool_input}
        if isinstance(tool_input, str):
            block.update(input={}, raw_input=tool_input)
        if rest:
            block["id"] = rest[0]
        content.append(block)
    kw.setdefault("stop_reason", "tool_use")
    return Reply(content=content, **kw)


_DEFAULT_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    504: "api_error",
    529: "overloaded_error",
}

_DEFAULT_MESSAGES = {
    "invalid_request_error": "Invalid request",
    "authentication_error": "invalid x-api-key",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
    "api_error": "Internal server error",
    "overloaded_error": "Overloaded",
}


def default_error_type(status: int) -> str:
    """The API's error type for an HTTP status."""
    return _DEFAULT_ERROR_TYPES.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )


def default_error_message(error_type: str) -> str:
    return _DEFAULT_MESSAGES.get(error_type, error_type)


@dataclass
class Fault:
    """An HTTP error answered with the API's error JSON body."""

    status: int
    error_type: str | None = None
    message: str | None = None
    retry_after: float | None = None
    headers: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if self.error_type is None:
            self.error_type = default_error_type(self.status)
        if self.message is None:
            self.message = default_error_message(self.error_type)

    @classmethod
    def prompt_too_long(cls, tokens: int, maximum: int) -> Fault:
        """The API's 400 for a prompt over the context window, in its exact wording."""
        return cls(400, "invalid_request_error", prompt_too_long_message(tokens, maximum))


def prompt_too_long_message(tokens: int, maximum: int) -> str:
    return f"prompt is too long: {tokens} tokens > {maximum} maximum"


def _default_broken_reply() -> Reply:
    text = "This answer is cut off part way through, because the stream breaks before it ends."
    return text_reply(text, chunk_chars=12)


@dataclass
class StreamError:
    """HTTP 200, the stream starts, then after N events an SSE `error` event ends it."""

    after_events: int = 3
    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    reply: Reply | None = None

    def stream_reply(self) -> Reply:
        return self.reply or _default_broken_reply()


@dataclass
class Drop:
    """The stream starts, then the TCP connection is closed mid-stream."""

    after_events: int = 3
    reply: Reply | None = None

    def stream_reply(self) -> Reply:
        return self.reply or _default_broken_reply()


@dataclass
class Stall:
    """The stream starts, then goes silent for `seconds` (interruptible by stop())."""

    after_events: int = 1
    seconds: float = 30.0
    reply: Reply | None = None

    def stream_reply(self) -> Reply:
        return self.reply or _default_broken_reply()


ResponseItem: TypeAlias = Reply | Fault | StreamError | Drop | Stall
