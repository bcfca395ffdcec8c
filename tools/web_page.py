"""Fetching one web page for WebFetch: same-host redirects, a size cap, a timeout, clear failures.

httpx2 (the HTTP client the anthropic SDK is built on) does the HTTP.
Redirects are followed by hand and only while they stay on the host that was
asked for (never from https down to http), so a permission granted for one
domain cannot be carried to another by a Location header; a redirect elsewhere
is handed back for the model to ask for. Every failure (DNS, refused, TLS,
timeout, 4xx / 5xx, too large, binary) comes back as a ``FetchFailure`` whose
message is written for the model, never as an exception. httpx2 is imported
on first use: a session that never fetches does not pay for it at start-up.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tools.web_text import binary_message, declared_binary, human_size, media_type

MAX_DOWNLOAD_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 10
DEFAULT_TIMEOUT_S = 60.0
MAX_URL_LENGTH = 2_000
# The machine itself: local servers rarely speak TLS, so http stays http there.
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
HEADERS = {
    "User-Agent": "ccx-WebFetch/0.1 (a coding agent reading a page its user asked about)",
    "Accept": "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5",
}


@dataclass(frozen=True)
class FetchedBody:
    url: str  # where the body came from: the URL asked for, or a same-host redirect's target
    status: int
    reason: str
    content_type: str  # the media type, lowercased, without parameters ("" when not given)
    charset: str | None
    body: bytes


@dataclass(frozen=True)
class CrossHostRedirect:
    url: str
    location: str
    status: int
    reason: str


@dataclass(frozen=True)
class FetchFailure:
    message: str


Fetched = FetchedBody | CrossHostRedirect | FetchFailure

if TYPE_CHECKING:
    import httpx2


def url_problem(raw: str) -> str | None:
    """Why ``raw`` cannot be fetched, in words for the model; None when it can."""
    import httpx2

    if len(raw) > MAX_URL_LENGTH:
        return f"the URL is {len(raw):,} characters long; at most {MAX_URL_LENGTH:,} are allowed"
    try:
        url = httpx2.URL(raw)
    except (httpx2.InvalidURL, ValueError, TypeError) as exc:
        return f"not a valid URL ({exc})"
    if url.scheme not in ("http", "https"):
        return f"only http:// and https:// URLs can be fetched, not {raw!r}"
    if not url.host:
        return f"the URL {raw!r} names no host"
    if url.userinfo:
        return "the URL carries a user name or password; WebFetch does not send credentials"
    return None


def upgraded(raw: str) -> str:
    """``raw`` with http:// made https://, except on this machine (localhost, 127.0.0.1, ::1)."""
    import httpx2

    url = httpx2.URL(raw)
    if url.scheme == "http" and host_of(url) not in LOCAL_HOSTS:
        url = url.copy_with(scheme="https")
    return str(url)


def host_of(url: httpx2.URL | str) -> str:
    """The URL's host, lowercased, without a trailing dot."""
    import httpx2

    return httpx2.URL(url).host.lower().rstrip(".")


def same_host(origin: str, target: str) -> bool:
    """Whether a redirect from ``origin`` to ``target`` stays where permission was given."""
    import httpx2

    source, destination = httpx2.URL(origin), httpx2.URL(target)
    if destination.scheme not in ("http", "https") or destination.userinfo:
        return False
    if source.scheme == "https" and destination.scheme == "http":
        return False
    return host_of(source) == host_of(destination)


async def fetch(
    url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, max_bytes: int = MAX_DOWNLOAD_BYTES
) -> Fetched:
    """GET ``url``, following same-host redirects, within ``timeout_s`` in all."""
    import httpx2

    try:
        async with (
            asyncio.timeout(timeout_s),
            httpx2.AsyncClient(
                follow_redirects=False,
                timeout=httpx2.Timeout(timeout_s),
                headers=HEADERS,
                verify=_tls_context(),
            ) as client,
        ):
            return await _follow(client, url, max_bytes)
    except (TimeoutError, httpx2.TimeoutException):
        return FetchFailure(f"Fetching {url} timed out after {timeout_s:g} seconds.")
    except httpx2.HTTPError as exc:
        return FetchFailure(transport_failure(url, exc))


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The certificate store, loaded once (about 0.2 s), not once per fetch."""
    import httpx2

    return httpx2.create_ssl_context()


async def _follow(client: httpx2.AsyncClient, url: str, max_bytes: int) -> Fetched:
    import httpx2

    current = url
    for _hop in range(MAX_REDIRECTS + 1):
        async with client.stream("GET", current) as response:
            status, reason = response.status_code, response.reason_phrase
            if response.is_redirect:
                location = response.headers["location"]
                try:
                    target = str(httpx2.URL(current).join(location))
                except (httpx2.InvalidURL, ValueError) as exc:
                    return FetchFailure(f"{current} redirects to {location!r}, not a URL: {exc}.")
                if not same_host(current, target):
                    return CrossHostRedirect(current, target, status, reason)
                current = target
                continue
            if not 200 <= status < 300:
                return FetchFailure(http_failure(current, status, reason))
            content_type, charset = media_type(response.headers.get("content-type", ""))
            length = _declared_length(response)
            if declared_binary(content_type):
                return FetchFailure(binary_message(current, content_type, length))
            if length is not None and length > max_bytes:
                return FetchFailure(too_large(current, length, max_bytes))
            body = await _read_capped(response, max_bytes)
            if body is None:
                return FetchFailure(too_large(current, None, max_bytes))
            return FetchedBody(current, status, reason, content_type, charset, body)
    return FetchFailure(f"{url} redirected more than {MAX_REDIRECTS} times; giving up.")


async def _read_capped(response: httpx2.Response, max_bytes: int) -> bytes | None:
    """The (decompressed) body, or None as soon as it grows past ``max_bytes``."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _declared_length(response: httpx2.Response) -> int | None:
    try:
        return int(response.headers["content-length"])
    except (KeyError, ValueError):
        return None


def too_large(url: str, size: int | None, max_bytes: int) -> str:
    actual = f" ({human_size(size)})" if size is not None else ""
    return (
        f"{url} is too large{actual}: WebFetch reads at most {human_size(max_bytes)}. "
        "To look at it anyway, download it with curl through Bash and Read or Grep the file."
    )


def http_failure(url: str, status: int, reason: str) -> str:
    said = f"The server returned HTTP {status} {reason}".rstrip() + f" for {url}."
    if status in (401, 403, 407):
        return (
            f"{said} The page needs a login or refuses automated readers, and WebFetch "
            "sends no credentials. For GitHub use `gh` through Bash; otherwise a signed-in "
            "MCP tool, or ask the user to paste the content."
        )
    if status in (404, 410):
        return f"{said} There is no page at that address; check the URL."
    if status == 429:
        return f"{said} The site is limiting requests; wait before trying again."
    if status >= 500:
        return f"{said} The site failed to answer; it may work if tried again later."
    return said


def transport_failure(url: str, exc: BaseException) -> str:
    """Words for a failure to talk to the server at all, from the exception's causes."""
    import httpx2

    target = httpx2.URL(url)
    where = target.host if target.port is None else f"{target.host}:{target.port}"
    seen: BaseException | None = exc
    for _ in range(10):  # the chain is short; a cycle must not hang the tool
        if seen is None:
            break
        if isinstance(seen, socket.gaierror):
            return (
                f"Could not resolve the host {target.host}: the DNS lookup failed. Check the URL."
            )
        if isinstance(seen, ConnectionRefusedError):
            return f"The connection to {where} was refused: nothing is listening there."
        if isinstance(seen, ssl.SSLError):
            return f"The secure (TLS) connection to {where} failed: {getattr(seen, 'reason', None) or seen}."
        seen = seen.__cause__ or seen.__context__
    if isinstance(exc, httpx2.ProxyError):
        return f"The proxy refused to fetch {url}: {exc}."
    return f"Could not fetch {url}: {type(exc).__name__}: {exc or 'the connection failed'}."
