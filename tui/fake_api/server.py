"""The fake Messages API server: a real HTTP server on 127.0.0.1 driven by a script.

`FakeApi` owns the script, the routes, what was recorded, the prompt cache and
the billing totals, and runs a ThreadingHTTPServer on a background thread.
stop() ends every connection (including stalled streams) and joins every
thread it started, without waiting for any poll interval.
"""

from __future__ import annotations

import os
import selectors
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any, TypeAlias

from tui.fake_api.accounting import count_refusal, count_request
from tui.fake_api.billing import (
    DEFAULT_CACHE_MIN_TOKENS,
    DEFAULT_CACHE_TTL_S,
    Billing,
    PromptCache,
    RequestBilling,
    Segment,
    estimate_output_tokens,
)
from tui.fake_api.handler import MessagesApiHandler
from tui.fake_api.models import ModelCatalog, ModelSpec
from tui.fake_api.recording import RecordedRequest
from tui.fake_api.script import (
    Drop,
    Fault,
    Reply,
    ResponseItem,
    Stall,
    StreamError,
)
from tui.fake_api.thinking import IssuedThinking

SCRIPT_EXHAUSTED = "fake_api: script exhausted"
_RESPONSE_TYPES = (Reply, Fault, StreamError, Drop, Stall)

# What the script holds: an item, or a callable that answers the request with one.
ScriptItem: TypeAlias = ResponseItem | Callable[[RecordedRequest], ResponseItem]


@dataclass
class Route:
    """A responder consulted before the script; it never consumes script items."""

    predicate: Callable[[RecordedRequest], bool]
    responder: ScriptItem
    hits: int = field(default=0)


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True  # a FakeApi never stopped must not hold the interpreter open
    request_queue_size = 64
    api: FakeApi
    server_address: tuple[str, int]  # TCP on 127.0.0.1, never a Unix socket's path

    def process_request(self, request: Any, client_address: Any) -> None:
        # ThreadingMixIn does not track daemon threads; stop() joins these itself.
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name="fake-api-connection",
            daemon=True,
        )
        self.api.track_thread(thread)
        thread.start()

    def handle_request_noblock(self) -> None:
        self._handle_request_noblock()  # type: ignore[attr-defined]  # CPython's, not in typeshed

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up is normal; anything else is a bug the tests should see.
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            self.api.record_error(f"fake_api: server error: {error!r}")


class FakeApi:
    """A scripted Messages API on 127.0.0.1; use as a context manager or start()/stop()."""

    _wake_reader: socket.socket  # a byte written to _wake_writer ends the accept loop
    _wake_writer: socket.socket

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        strict: bool = True,
        models: Mapping[str, ModelSpec | tuple[int, int]] | None = None,
        cache_min_tokens: int = DEFAULT_CACHE_MIN_TOKENS,
        cache_ttl_s: float = DEFAULT_CACHE_TTL_S,
        clock: Callable[[], float] = time.monotonic,
        host: str = "127.0.0.1",
        port: int = 0,
        thinking_tokens: int | None = None,
        redacted_every: int | None = None,
    ) -> None:
        """``thinking_tokens`` > 0: a request that turns thinking on gets each response opening
        with a signed thinking block of about that many tokens; ``redacted_every`` K > 0 makes
        every K-th such block a redacted_thinking block. Unset, they come from the environment
        (CCX_FAKE_API_THINKING_TOKENS, CCX_FAKE_API_REDACTED_EVERY; default 0, off), so a whole
        test run can be repeated with thinking on."""
        self.strict = strict
        self.thinking_tokens = _from_env(thinking_tokens, "CCX_FAKE_API_THINKING_TOKENS")
        self.redacted_every = _from_env(redacted_every, "CCX_FAKE_API_REDACTED_EVERY")
        self.issued_thinking = IssuedThinking()
        self.catalog = ModelCatalog(models)
        self.cache = PromptCache(min_tokens=cache_min_tokens, ttl_s=cache_ttl_s, clock=clock)
        self.billing = Billing()
        self.requests: list[RecordedRequest] = []
        self.errors: list[str] = []
        self.connections_accepted = 0
        self._script: deque[ScriptItem] = deque(script)
        self._routes: list[Route] = []
        self._address = (host, port)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._server: _HttpServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------
    def start(self) -> FakeApi:
        if self._server is not None:
            raise RuntimeError("FakeApi already started")
        handler = type("BoundHandler", (MessagesApiHandler,), {"api": self})
        self._stopping.clear()
        self._server = _HttpServer(self._address, handler)
        self._server.api = self
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._thread = threading.Thread(target=self._serve, name="fake-api")
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut every open connection and join all threads."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._stopping.set()
        self._wake_writer.send(b"x")
        thread.join()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            _shutdown_quietly(connection)
        server.server_close()
        with self._lock:
            threads, self._threads = self._threads, []
        for connection_thread in threads:
            connection_thread.join()
        self._wake_reader.close()
        self._wake_writer.close()
        self._server = self._thread = None

    def _serve(self) -> None:
        """Accept connections until stop(); a byte on the wake socket ends the loop at once."""
        server = self._server
        assert server is not None
        with selectors.DefaultSelector() as selector:
            selector.register(server.socket, selectors.EVENT_READ)
            selector.register(self._wake_reader, selectors.EVENT_READ)
            while not self._stopping.is_set():
                for key, _ in selector.select():
                    if key.fileobj is server.socket and not self._stopping.is_set():
                        server.handle_request_noblock()

    def __enter__(self) -> FakeApi:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeApi is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def wait_stopping(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True if stop() was called meanwhile."""
        return self._stopping.wait(seconds)

    # -- script -------------------------------------------------------------------
    def add(self, *items: ScriptItem) -> None:
        """Append items to the script."""
        with self._lock:
            self._script.extend(items)

    def on(self, predicate: Callable[[RecordedRequest], bool], responder: ScriptItem) -> Route:
        """Answer requests matching `predicate` with `responder`, before the script."""
        route = Route(predicate, responder)
        with self._lock:
            self._routes.append(route)
        return route

    @property
    def script_remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def next_item(self, request: RecordedRequest) -> ResponseItem:
        """The item answering `request`: the first matching route, else the next script item."""
        with self._lock:
            routes = list(self._routes)
        try:
            item: ScriptItem | None = None
            for route in routes:
                if route.predicate(request):
                    route.hits += 1
                    item = route.responder
                    break
            if item is None:
                with self._lock:
                    item = self._script.popleft() if self._script else None
            if item is None:
                return self._internal_error(request, SCRIPT_EXHAUSTED)
            if callable(item):
                item = item(request)
        except Exception as exc:
            return self._internal_error(request, f"fake_api: script item raised {exc!r}")
        if not isinstance(item, _RESPONSE_TYPES):
            return self._internal_error(request, f"fake_api: not a script item: {item!r}")
        return item

    def _internal_error(self, request: RecordedRequest, message: str) -> Fault:
        self.record_error(message)
        request.error = message
        return Fault(500, "api_error", message)

    # -- bookkeeping used by the handler -----------------------------------------------
    def record_request(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
        count_request(request.path)

    def record_refusal(self, request: RecordedRequest, status: int, message: str) -> None:
        """A request refused by a validation rule (never a scripted fault)."""
        self.record_error(message)
        count_refusal(request.path, status, message)

    def record_error(self, message: str) -> None:
        with self._lock:
            self.errors.append(message)

    def charge(self, body: dict[str, Any], segments: list[Segment], reply: Reply) -> RequestBilling:
        """Bill one answered request against the prompt cache and add it to the totals."""
        charge = self.cache.charge(body, segments)
        charge.output_tokens = estimate_output_tokens(reply.content) + reply.hidden_output_tokens
        with self._lock:
            self.billing.add(charge)
        return charge

    def track_thread(self, thread: threading.Thread) -> None:
        with self._lock:
            self._threads = [known for known in self._threads if known.is_alive()]
            self._threads.append(thread)

    def register_connection(self, connection: socket.socket) -> int:
        with self._lock:
            self.connections_accepted += 1
            self._connections.add(connection)
            number = self.connections_accepted
        if self._stopping.is_set():
            _shutdown_quietly(connection)
        return number

    def unregister_connection(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.discard(connection)


def _from_env(value: int | None, name: str) -> int:
    if value is not None:
        return value
    try:
        return max(0, int(os.environ.get(name, "0")))
    except ValueError:
        return 0


def _shutdown_quietly(connection: socket.socket) -> None:
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
