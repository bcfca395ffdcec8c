"""A small web site on 127.0.0.1 for the WebFetch tests: pages, redirects, errors, a slow page.

Each route answers one way (see ROUTES); ``hits`` counts the requests per
path, so a test can tell whether a page was fetched at all. Only 127.0.0.1 is
ever listened on, and the redirects point at 127.0.0.1 or localhost.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAGE_HTML = b"""<!doctype html>
<html><head><title>Retry guide</title>
<style>body { color: red }</style><script>var tracking = "SCRIPT-TEXT";</script></head>
<body><h1>Retry limits</h1>
<p>The client retries <b>three</b> times; see <a href="/other">the other page</a>.</p>
<ul><li>first backoff: 1 s</li><li>second backoff: 2 s</li></ul>
<pre><code>RETRY_LIMIT = 3</code></pre>
</body></html>
"""
JSON_BODY = b'{"name": "ccx", "retries": 3}\n'
BINARY_BODY = bytes(range(256)) * 8


@dataclass
class WebSite:
    port: int
    hits: Counter[str] = field(default_factory=Counter)
    slow_s: float = 3.0
    stop: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


class _Handler(BaseHTTPRequestHandler):
    site: WebSite
    protocol_version = "HTTP/1.1"

    def log_message(self, *_args: object) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        self.site.hits[path] += 1
        route = ROUTES.get(path)
        if route is None:
            self._send(404, b"no such page", "text/plain")
        else:
            route(self)

    def _send(self, status: int, body: bytes, content_type: str | None, **headers: str) -> None:
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self._send(302, b"", "text/plain", Location=location)

    def _chunked(self, chunks: Iterator[bytes]) -> None:
        """A body with no Content-Length: the size is known only by reading it."""
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for chunk in chunks:
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client stopped reading: what the size cap does
            self.close_connection = True

    def _slow(self) -> None:
        self.site.stop.wait(self.site.slow_s)
        self._send(200, b"late", "text/plain")


def _big_chunks() -> Iterator[bytes]:
    for _ in range(64):
        yield b"x" * 65_536  # 4 MB in all, never announced


ROUTES = {
    "/page.html": lambda h: h._send(200, PAGE_HTML, "text/html; charset=utf-8"),
    "/other": lambda h: h._send(200, b"<p>the other page</p>", "text/html"),
    "/data.json": lambda h: h._send(200, JSON_BODY, "application/json"),
    "/notes.txt": lambda h: h._send(
        200, "caf\xe9 notes\n".encode("latin-1"), "text/plain; charset=latin-1"
    ),
    "/long.txt": lambda h: h._send(
        200, b"".join(b"line %06d\n" % n for n in range(20_000)), "text/plain"
    ),
    "/empty": lambda h: h._send(200, b"", "text/html"),
    "/image.png": lambda h: h._send(200, BINARY_BODY, "image/png"),
    "/untyped": lambda h: h._send(200, BINARY_BODY, None),
    "/fake-text": lambda h: h._send(200, BINARY_BODY, "text/plain"),
    "/same-host": lambda h: h._redirect("/page.html"),
    "/other-host": lambda h: h._redirect(f"http://localhost:{h.site.port}/page.html"),
    "/loop": lambda h: h._redirect("/loop"),
    "/bad-location": lambda h: h._redirect("http://a:notaport/"),
    "/announced-big": lambda h: h._send(200, b"x" * 200_000, "text/plain"),
    "/unannounced-big": lambda h: h._chunked(_big_chunks()),
    "/forbidden": lambda h: h._send(403, b"go away", "text/plain"),
    "/broken": lambda h: h._send(503, b"down", "text/plain"),
    "/slow": lambda h: h._slow(),
}


@contextmanager
def web_site() -> Iterator[WebSite]:
    handler = type("SiteHandler", (_Handler,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    site = WebSite(server.server_address[1])
    handler.site = site
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="web-site", daemon=True
    )
    thread.start()
    try:
        yield site
    finally:
        site.stop.set()  # a slow page answers at once, so shutdown does not wait for it
        server.shutdown()
        server.server_close()
        thread.join()
