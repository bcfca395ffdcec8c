"""WebFetch against a real web server on 127.0.0.1: text, redirects, caps, errors, the cache.

These run the tool without a page reader (the runtime connects the fast model:
tests/session/test_web_fetch.py), so the result is the page's own text.
"""

from __future__ import annotations

import codecs
import socket
import ssl
from collections.abc import Iterator

import httpx2
import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot
from tests.web_server import WebSite, web_site
from tools.base import ToolResult
from tools.web_cache import CACHE_TTL_S, Page, PageCache
from tools.web_fetch import MAX_RESULT_CHARS, WebFetchTool
from tools.web_page import same_host, transport_failure, upgraded
from tools.web_text import html_to_markdown, kind_of


@pytest.fixture
def site() -> Iterator[WebSite]:
    with web_site() as running:
        yield running


async def fetch(
    call: Call, url: str, tool: WebFetchTool | None = None, **extra: object
) -> ToolResult:
    return await call(
        tool or WebFetchTool(timeout_s=10), url=url, prompt="What are the retry limits?", **extra
    )


def test_schema_snapshot() -> None:
    assert_schema_matches_snapshot(WebFetchTool)
    assert WebFetchTool.is_mutating is False
    assert "domain:" in WebFetchTool.description()
    params = WebFetchTool().parse({"url": " https://docs.example/a ", "prompt": "p"})
    assert not isinstance(params, ToolResult) and params.url == "https://docs.example/a"
    assert WebFetchTool().label(params) == "WebFetch https://docs.example/a"
    newline = WebFetchTool().parse({"url": "https://docs.example/a\nHost: x", "prompt": "p"})
    assert isinstance(newline, ToolResult) and newline.is_error


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://example.com/x", "only http:// and https://"),
        ("not a url", "only http:// and https://"),
        ("https://", "names no host"),
        ("https://user:secret@example.com/", "user name or password"),
        ("https://example.com/" + "a" * 2_000, "at most 2,000"),
    ],
)
def test_unfetchable_urls_are_refused_before_anything_runs(url: str, problem: str) -> None:
    result = WebFetchTool().parse({"url": url, "prompt": "p"})
    assert isinstance(result, ToolResult) and result.is_error
    assert problem in result.output_text()


def test_http_is_upgraded_except_on_this_machine() -> None:
    assert upgraded("http://example.com/a?b=1") == "https://example.com/a?b=1"
    assert upgraded("http://example.com:8080/") == "https://example.com:8080/"
    assert upgraded("http://localhost:8000/x") == "http://localhost:8000/x"
    assert upgraded("http://127.0.0.1:9/x") == "http://127.0.0.1:9/x"
    assert upgraded("https://example.com/") == "https://example.com/"


def test_same_host_means_the_host_asked_for_and_never_a_downgrade() -> None:
    assert same_host("https://a.example/x", "https://A.example./y")
    assert same_host("http://localhost:1/x", "https://localhost:2/y")
    assert not same_host("https://a.example/x", "https://www.a.example/x")
    assert not same_host("https://a.example/x", "http://a.example/x")
    assert not same_host("https://a.example/x", "ftp://a.example/x")


async def test_html_arrives_as_markdown_without_scripts_or_styles(
    call: Call, site: WebSite
) -> None:
    result = await fetch(call, site.url("/page.html"))
    assert not result.is_error
    text = result.output_text()
    assert "# Retry limits" in text
    assert "The client retries **three** times" in text
    assert "[the other page](/other)" in text
    assert "- first backoff: 1 s" in text and "RETRY_LIMIT = 3" in text
    assert "SCRIPT-TEXT" not in text and "color: red" not in text and "<h1>" not in text
    assert "no page reader" in text  # said, so the model knows it reads the raw page
    assert result.meta["status"] == 200 and result.meta["summarized"] is False
    assert result.display.startswith("Received ")


async def test_json_and_text_pass_through_decoded(call: Call, site: WebSite) -> None:
    data = await fetch(call, site.url("/data.json"))
    assert not data.is_error and '{"name": "ccx", "retries": 3}' in data.output_text()
    notes = await fetch(call, site.url("/notes.txt"))
    assert "café notes" in notes.output_text()  # the declared latin-1, not mojibake


@pytest.mark.parametrize("path", ["/image.png", "/untyped", "/fake-text"])
async def test_binary_is_refused_clearly(call: Call, site: WebSite, path: str) -> None:
    result = await fetch(call, site.url(path))
    assert result.is_error
    assert "binary content" in result.output_text() and "curl" in result.output_text()


async def test_a_declared_binary_body_is_not_downloaded(call: Call, site: WebSite) -> None:
    result = await fetch(call, site.url("/image.png"))
    assert "image/png, 2.0 KB" in result.output_text()  # from the headers alone


async def test_a_redirect_to_another_host_is_reported_not_followed(
    call: Call, site: WebSite
) -> None:
    result = await fetch(call, site.url("/other-host"))
    assert not result.is_error
    text = result.output_text()
    target = site.url("/page.html", host="localhost")
    assert f"to another host: {target}" in text
    assert f'- url: "{target}"' in text and '- prompt: "What are the retry limits?"' in text
    assert site.hits["/page.html"] == 0
    assert result.meta["redirect"] == target


async def test_a_redirect_within_the_host_is_followed(call: Call, site: WebSite) -> None:
    result = await fetch(call, site.url("/same-host"))
    assert not result.is_error and "# Retry limits" in result.output_text()
    assert result.meta["url"] == site.url("/page.html")
    assert site.hits["/same-host"] == 1 and site.hits["/page.html"] == 1


async def test_a_redirect_loop_or_a_broken_location_ends_in_an_error(
    call: Call, site: WebSite
) -> None:
    result = await fetch(call, site.url("/loop"))
    assert result.is_error and "redirected more than 10 times" in result.output_text()
    broken = await fetch(call, site.url("/bad-location"))
    assert broken.is_error and "not a URL" in broken.output_text()


async def test_size_cap_from_the_header_and_while_reading(call: Call, site: WebSite) -> None:
    tool = WebFetchTool(timeout_s=10, max_bytes=100_000)
    announced = await fetch(call, site.url("/announced-big"), tool)
    assert announced.is_error
    assert "too large (195.3 KB)" in announced.output_text()
    assert "at most 97.7 KB" in announced.output_text()
    unannounced = await fetch(call, site.url("/unannounced-big"), tool)
    assert unannounced.is_error and "too large: WebFetch reads at most" in unannounced.output_text()


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/missing", "HTTP 404 Not Found"),
        ("/forbidden", "needs a login"),
        ("/broken", "HTTP 503"),
    ],
)
async def test_http_errors_are_tool_errors(
    call: Call, site: WebSite, path: str, words: str
) -> None:
    result = await fetch(call, site.url(path))
    assert result.is_error and words in result.output_text()


async def test_a_refused_connection_is_a_tool_error(call: Call) -> None:
    with socket.socket() as probe:  # a port nothing listens on once this closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = await fetch(call, f"http://127.0.0.1:{port}/x")
    assert result.is_error
    assert (
        result.output_text()
        == f"The connection to 127.0.0.1:{port} was refused: nothing is listening there."
    )


async def test_a_slow_server_times_out(call: Call, site: WebSite) -> None:
    result = await fetch(call, site.url("/slow"), WebFetchTool(timeout_s=0.3))
    assert result.is_error and "timed out after 0.3 seconds" in result.output_text()


def test_dns_and_tls_failures_are_named() -> None:
    for cause, words in [
        (socket.gaierror(-2, "Name or service not known"), "DNS lookup failed"),
        (ssl.SSLError(1, "WRONG_VERSION_NUMBER"), "secure (TLS) connection"),
    ]:
        error = httpx2.ConnectError("failed")
        error.__cause__ = cause
        assert words in transport_failure("https://nowhere.example/x", error)


async def test_a_page_is_cached_for_fifteen_minutes(call: Call, site: WebSite) -> None:
    now = [1_000.0]
    tool = WebFetchTool(timeout_s=10, cache=PageCache(clock=lambda: now[0]))
    first = await fetch(call, site.url("/page.html"), tool)
    now[0] += CACHE_TTL_S - 1
    second = await fetch(call, site.url("/page.html"), tool)
    assert site.hits["/page.html"] == 1
    assert second.meta["cached"] is True and "from cache" in second.display
    assert second.output_text() == first.output_text()
    now[0] += 2
    await fetch(call, site.url("/page.html"), tool)
    assert site.hits["/page.html"] == 2


def test_the_cache_keeps_within_its_budget() -> None:
    cache = PageCache(budget_chars=10)
    for name in "abc":
        cache.put(name, Page(name, 200, "OK", "text/plain", 4, name * 4))
    assert len(cache) == 2 and cache.get("a") is None and cache.get("c") is not None


async def test_a_long_page_is_cut_with_the_offset_to_read_on(call: Call, site: WebSite) -> None:
    tool = WebFetchTool(timeout_s=10)
    first = await fetch(call, site.url("/long.txt"), tool)
    text = first.output_text()
    assert len(text) < MAX_RESULT_CHARS + 1_000
    assert f"offset={MAX_RESULT_CHARS}" in text and "of the page's 240,000" in text
    # 12 characters a line: the first 25,000 end inside line 2083
    assert "line 000000" in text and "line 002082" in text and "line 002084" not in text
    second = await fetch(call, site.url("/long.txt"), tool, offset=MAX_RESULT_CHARS)
    assert "line 002084" in second.output_text() and "line 002082" not in second.output_text()
    assert site.hits["/long.txt"] == 1  # read on from the cache
    past = await fetch(call, site.url("/long.txt"), tool, offset=10_000_000)
    assert past.is_error
    assert "past the end of the page text (240,000 characters)" in past.output_text()


async def test_an_empty_page_says_so(call: Call, site: WebSite) -> None:
    result = await fetch(call, site.url("/empty"))
    assert not result.is_error and "has no text" in result.output_text()


def test_sniffing_a_body_without_a_type() -> None:
    assert kind_of("", b"<!DOCTYPE html><p>x</p>") == "html"
    assert kind_of("", "plain words, caf\u00e9".encode()) == "text"
    assert kind_of("", b"\x89PNG\r\n\x1a\n\x00\x00") == "binary"
    assert kind_of("application/pdf", b"%PDF-1.7") == "binary"
    assert kind_of("application/vnd.api+json", b"{}") == "text"


def test_a_charset_declared_inside_the_page_is_used() -> None:
    html = '<html><head><meta charset="windows-1252"></head><body><p>na\u00efve</p></body></html>'
    assert "na\u00efve" in html_to_markdown(html.encode("windows-1252"))


def test_a_byte_order_mark_or_a_meta_charset_decides_the_decoding() -> None:
    assert "na\u00efve" in html_to_markdown(codecs.BOM_UTF8 + "<p>na\u00efve</p>".encode())
    assert "na\u00efve" in html_to_markdown("<p>na\u00efve</p>".encode("utf-16"))
    assert "na\u00efve" in html_to_markdown("<p>na\u00efve</p>".encode("latin-1"), "iso-8859-1")
    unknown = html_to_markdown(b"<p>caf\xc3\xa9</p>", "no-such-charset")
    assert "caf\u00e9" in unknown  # an unknown charset falls back to UTF-8
