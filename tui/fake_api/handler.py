"""HTTP side of the fake Messages API: one handler per keep-alive connection.

Reads each request, records it, checks it, asks the FakeApi for the item that
answers it and writes that item to the wire: a JSON body with Content-Length,
or an SSE stream in chunked transfer encoding so the connection is reused.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import unquote

from tui.fake_api.billing import PromptCache, RequestBilling, Segment, flatten_request
from tui.fake_api.context_editing import apply_context_management, betas
from tui.fake_api.models import ModelCatalog
from tui.fake_api.recording import RecordedRequest
from tui.fake_api.rejection import Rejection
from tui.fake_api.script import Drop, Fault, Reply, ResponseItem, Stall, StreamError, new_id
from tui.fake_api.thinking import (
    IssuedThinking,
    issue,
    opening_thinking,
    starts_with_thinking,
    thinking_on,
)
from tui.fake_api.validation import check_headers, check_model, check_request
from tui.fake_api.wire import (
    WireEvent,
    chunk,
    error_json,
    message_json,
    read_body,
    reason_phrase,
    stream_events,
    wire_usage,
)

# The Messages API refuses a request body over 32 MB before reading it as JSON.
MAX_REQUEST_BYTES = 32_000_000
_STATUS_FOR_ERROR_TYPE = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500}
_CONNECTION_ERRORS = (BrokenPipeError, ConnectionError, TimeoutError)


class ServedApi(Protocol):
    """What a connection's handler asks of the server (``FakeApi``): the settings its checks
    follow, the item answering a request, and the records and connections it keeps."""

    @property
    def strict(self) -> bool: ...

    @property
    def thinking_tokens(self) -> int: ...

    @property
    def redacted_every(self) -> int: ...

    @property
    def issued_thinking(self) -> IssuedThinking: ...

    @property
    def catalog(self) -> ModelCatalog: ...

    @property
    def cache(self) -> PromptCache: ...

    @property
    def stopping(self) -> bool: ...

    def wait_stopping(self, seconds: float) -> bool: ...

    def next_item(self, request: RecordedRequest) -> ResponseItem: ...

    def record_request(self, request: RecordedRequest) -> None: ...

    def record_refusal(self, request: RecordedRequest, status: int, message: str) -> None: ...

    def record_error(self, message: str) -> None: ...

    def charge(
        self, body: dict[str, Any], segments: list[Segment], reply: Reply
    ) -> RequestBilling: ...

    def register_connection(self, connection: socket.socket) -> int: ...

    def unregister_connection(self, connection: socket.socket) -> None: ...


class _ConnectionGone(Exception):
    """The client went away, or the server is stopping: end this connection quietly."""


class MessagesApiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "fake-anthropic"
    api: ServedApi  # set on the subclass the server builds
    record: RecordedRequest | None = None  # the POST being answered
    responded = False  # whether any byte of the current response was written

    # -- connection lifecycle -------------------------------------------------
    def setup(self) -> None:
        super().setup()
        self.connection_id = self.api.register_connection(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        self.api.unregister_connection(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the default writes every request to stderr

    def parse_request(self) -> bool:
        self.started = time.perf_counter()  # the request line has just been read
        return super().parse_request()

    # -- dispatch ---------------------------------------------------------------
    def do_GET(self) -> None:
        self.record = None
        path = self.path.split("?", 1)[0].rstrip("/")
        headers = {key.lower(): value for key, value in self.headers.items()}
        rejection = check_headers(headers)
        if path.startswith("/v1/models") and (hold := self.api.catalog.hold) is not None:
            hold.wait(30)
        if rejection is None and path == "/v1/models":
            self._send_json(200, self.api.catalog.listing())
            return
        if rejection is None and path.startswith("/v1/models/"):
            model_id = unquote(path.removeprefix("/v1/models/"))
            spec = self.api.catalog.get(model_id)
            if spec is not None:
                self._send_json(200, spec.info())
                return
            rejection = Rejection(404, "not_found_error", f"model: {model_id}")
        rejection = rejection or Rejection(404, "not_found_error", "Not Found")
        self.api.record_error(rejection.message)
        self._send_error(rejection.status, rejection.error_type, rejection.message)

    def do_POST(self) -> None:
        self.record, self.responded = None, False
        try:
            self._handle_post()
        except (_ConnectionGone, *_CONNECTION_ERRORS):
            self.close_connection = True
        except Exception as exc:  # a bug here must show in the test, not hang the client
            message = f"fake_api: server error: {exc!r}"
            self.api.record_error(message)
            if self.responded:  # half a response is on the wire: only closing is left
                self.close_connection = True
                return
            if self.record is not None:
                self.record.status, self.record.error = 500, message
            self._send_error(500, "api_error", message)

    def _handle_post(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        headers = {key.lower(): value for key, value in self.headers.items()}
        try:
            raw = read_body(self.rfile, headers)
        except EOFError as exc:  # a client killed while sending: nothing reached the API
            raise _ConnectionGone from exc
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        record = RecordedRequest(
            path, headers, body if isinstance(body, dict) else {}, self.started
        )
        record.connection_id = self.connection_id
        self.record = record
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self.api.record_refusal(record, 404, f"fake_api: no such endpoint: POST {path}")
            self._send_error(404, "not_found_error", "Not Found")
            return
        self.api.record_request(record)
        if len(raw) > MAX_REQUEST_BYTES:
            message = "Request exceeds the maximum allowed number of bytes."
            self._reject(record, Rejection(413, "request_too_large", message))
            return
        try:
            self._answer(record, body)
        finally:
            if not record.server_seconds:  # no final write: a drop, a stop, a failure
                record.server_seconds = time.perf_counter() - self.started

    def _answer(self, record: RecordedRequest, body: Any) -> None:
        """Check the request, pick its response item, bill it and send it."""
        rejection = check_headers(record.headers)
        if rejection is None and not isinstance(body, dict):
            rejection = Rejection(
                400, "invalid_request_error", "The request body is not valid JSON."
            )
        spec = rejection or check_model(record.body, self.api.catalog)
        if isinstance(spec, Rejection):
            self._reject(record, spec)
            return
        editing = apply_context_management(record.body, record.headers, thinking_on(record.body))
        if isinstance(editing, Rejection):
            self._reject(record, editing)
            return
        record.context_editing = editing
        body = record.body if editing is None else editing.body  # what the model sees
        segments = flatten_request(body, self.api.cache.ttl_s)
        estimated = sum(segment.tokens for segment in segments)
        record.billing = RequestBilling(estimated_tokens=estimated)
        count_only = record.path.endswith("/count_tokens")
        if self.api.strict and (
            rejection := check_request(
                record.body,  # as sent: the API checks a request before editing it
                spec,
                estimated,
                count_only=count_only,
                issued=self.api.issued_thinking,
                window=spec.window(betas(record.headers)),
            )
        ):
            self._reject(record, rejection)
            return
        if count_only:
            record.status = 200
            self._send_json(200, {"input_tokens": estimated})
            return
        item = self.api.next_item(record)
        record.response_item = item
        if isinstance(item, Fault):
            record.status = item.status
            self._send_fault(item)
            return
        reply = item if isinstance(item, Reply) else item.stream_reply()
        reply = self._with_thinking(reply.resolved(), record.body)
        if isinstance(item, Reply):
            record.response_item = reply
        record.billing = self.api.charge(body, segments, reply)
        usage = wire_usage(reply, record.billing)
        model = reply.model or str(record.body.get("model"))
        edits = None if editing is None else editing.response_field()
        record.status = 200
        self._wait(reply.delay_s)
        if record.body.get("stream") is True:
            fault = None if isinstance(item, Reply) else item
            self._send_stream(reply, model, usage, fault=fault, context_management=edits)
        else:
            self._send_message(reply, model, usage, item, context_management=edits)

    def _with_thinking(self, reply: Reply, body: dict[str, Any]) -> Reply:
        """The reply with the thinking the server's emission mode adds, signed and remembered."""
        api = self.api
        if (
            api.thinking_tokens > 0
            and thinking_on(body)
            and not starts_with_thinking(reply.content)
        ):
            count = api.issued_thinking.next_response()
            redacted = api.redacted_every > 0 and count % api.redacted_every == 0
            block, hidden = opening_thinking(body, api.thinking_tokens, redacted)
            reply = replace(reply, content=[block, *reply.content], hidden_output_tokens=hidden)
        issue(reply.content)
        api.issued_thinking.record(reply.content)
        return reply

    def _reject(self, record: RecordedRequest, rejection: Rejection) -> None:
        self.api.record_refusal(record, rejection.status, rejection.message)
        record.status, record.error = rejection.status, rejection.message
        record.response_item = Fault(rejection.status, rejection.error_type, rejection.message)
        self._send_error(rejection.status, rejection.error_type, rejection.message)

    # -- writing --------------------------------------------------------------
    def _write(self, data: bytes, final: bool = False) -> None:
        if self.api.stopping:
            raise _ConnectionGone
        if final and self.record is not None:
            # Stamped as the last bytes go to the kernel: on a busy machine the send can
            # return late because the woken client runs first, and that is not server time.
            self.record.server_seconds = time.perf_counter() - self.started
        self.responded = True
        self.wfile.write(data)

    def _head(self, status: int, headers: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} {reason_phrase(status)}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(obj, ensure_ascii=False).encode()
        head = {
            "content-type": "application/json",
            "content-length": str(len(body)),
            "request-id": new_id("req_"),
            **(headers or {}),
        }
        self._write(self._head(status, head) + body, final=True)

    def _send_error(
        self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        request_id = new_id("req_")
        merged = {"request-id": request_id, **(headers or {})}
        self._send_json(status, error_json(error_type, message, request_id), merged)

    def _send_fault(self, fault: Fault) -> None:
        headers = dict(fault.headers or {})
        if fault.retry_after is not None:
            headers["retry-after"] = f"{fault.retry_after:g}"
        self._send_error(fault.status, str(fault.error_type), str(fault.message), headers)

    def _send_message(
        self,
        reply: Reply,
        model: str,
        usage: dict[str, int],
        item: Any,
        context_management: dict[str, Any] | None = None,
    ) -> None:
        if isinstance(item, StreamError):
            status = _STATUS_FOR_ERROR_TYPE.get(item.error_type, 500)
            self._send_error(status, item.error_type, item.message)
            return
        if isinstance(item, Drop):
            self._drop()
        if isinstance(item, Stall):
            self._wait(item.seconds)
        self._send_json(200, message_json(reply, model, usage, context_management))

    def _send_stream(
        self,
        reply: Reply,
        model: str,
        usage: dict[str, int],
        fault: StreamError | Drop | Stall | None,
        context_management: dict[str, Any] | None = None,
    ) -> None:
        """Write the SSE stream, batching events into one write unless paced or broken."""
        head = {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
            "request-id": new_id("req_"),
        }
        pending = [self._head(200, head)]
        sent = 0
        pace = reply.tokens_per_s
        due = time.perf_counter()
        for event in stream_events(reply, model, usage, context_management):
            if fault is not None and sent >= fault.after_events and event.name != "ping":
                if not self._break_stream(fault, pending):
                    return
                fault = None
            if pace and event.chars:
                due += event.chars / 4 / pace
                self._flush(pending)
                self._wait(due - time.perf_counter())
            pending.append(chunk(event.encode()))
            sent += event.name != "ping"
        if fault is None or self._break_stream(fault, pending):
            pending.append(b"0\r\n\r\n")
            self._flush(pending, final=True)

    def _break_stream(self, fault: StreamError | Drop | Stall, pending: list[bytes]) -> bool:
        """Apply a stream fault; True when the stream goes on afterwards (a Stall)."""
        if isinstance(fault, StreamError):
            error = WireEvent("error", error_json(fault.error_type, fault.message))
            pending += [chunk(error.encode()), b"0\r\n\r\n"]
            self._flush(pending, final=True)
            return False
        self._flush(pending)
        if isinstance(fault, Stall):
            self._wait(fault.seconds)
            return True
        self._drop()
        return False

    def _flush(self, pending: list[bytes], final: bool = False) -> None:
        data = b"".join(pending)
        pending.clear()
        if data:
            self._write(data, final)

    def _drop(self) -> None:
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise _ConnectionGone

    def _wait(self, seconds: float) -> None:
        if seconds > 0 and self.api.wait_stopping(seconds):
            raise _ConnectionGone
