"""What WebFetch makes of a response body: HTML as Markdown, text and JSON as they are, binary refused.

HTML goes through markdownify (on BeautifulSoup, which also finds a charset
declared inside the page) after scripts, styles and other non-content are
dropped. Text types (plain, Markdown, CSV, JSON, XML, YAML, code) pass
through decoded. Anything else, or a "text" body holding NUL bytes, is binary.
"""

from __future__ import annotations

import codecs
import re
from typing import Literal

Kind = Literal["html", "text", "binary"]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_APPLICATION_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-javascript",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/x-sh",
        "application/sql",
        "application/graphql",
        "application/x-ndjson",
        "application/rss+xml",
        "application/atom+xml",
    }
)
BINARY_PREFIXES = ("image/", "audio/", "video/", "font/", "model/")
# Elements that hold no reading matter (scripts, styles, embedded frames and forms' widgets).
NON_CONTENT = ("script", "style", "noscript", "template", "svg", "iframe", "object", "embed")
_SNIFF_BYTES = 8_192


def media_type(header: str) -> tuple[str, str | None]:
    """A Content-Type header as (media type lowercased, charset or None)."""
    kind, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'").lower()
    return kind.strip().lower(), charset


def is_text_type(content_type: str) -> bool:
    return (
        content_type.startswith("text/")
        or content_type in TEXT_APPLICATION_TYPES
        or content_type.endswith(("+json", "+xml"))
    )


def declared_binary(content_type: str) -> bool:
    """Whether the header alone says the body is not text (so it need not be downloaded)."""
    if not content_type or is_text_type(content_type) or content_type in HTML_TYPES:
        return False
    return content_type.startswith(BINARY_PREFIXES) or content_type.startswith("application/")


def kind_of(content_type: str, body: bytes) -> Kind:
    head = body[:_SNIFF_BYTES]
    if b"\x00" in head:
        return "binary"
    if content_type in HTML_TYPES:
        return "html"
    if is_text_type(content_type):
        return "text"
    if declared_binary(content_type):
        return "binary"
    # No type, or one not known: look at the bytes.
    start = head.lstrip().lower()
    if start.startswith((b"<!doctype html", b"<html")):
        return "html"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut at the sniff boundary
            return "binary"
    return "text"


def page_text(content_type: str, charset: str | None, body: bytes) -> str | None:
    """The body as text for the model (HTML as Markdown); None when it is binary."""
    kind = kind_of(content_type, body)
    if kind == "binary":
        return None
    if kind == "html":
        return html_to_markdown(body, charset)
    return body.decode(_codec(charset), errors="replace")


def html_to_markdown(html: bytes, charset: str | None = None) -> str:
    """Markdown of an HTML document, without its scripts, styles and other non-content."""
    from bs4 import BeautifulSoup  # imported on first use: WebFetch is rare, start-up is not
    from markdownify import ATX, MarkdownConverter

    soup = BeautifulSoup(html, "html.parser", from_encoding=_codec(charset) if charset else None)
    for element in soup.find_all(NON_CONTENT):
        element.decompose()
    markdown = MarkdownConverter(heading_style=ATX, bullets="-").convert_soup(soup)
    return re.sub(r"\n{3,}", "\n\n", markdown).strip() + "\n"


def binary_message(url: str, content_type: str, size: int | None) -> str:
    what = content_type or "of no declared type"
    sized = f", {human_size(size)}" if size is not None else ""
    return (
        f"{url} is binary content ({what}{sized}), which WebFetch does not read: it reads web "
        "pages and text. To get the file, download it with curl through Bash "
        "(e.g. `curl -L -o FILE URL`)."
    )


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _codec(charset: str | None) -> str:
    """A codec Python knows for ``charset``; UTF-8 when there is none or it is unknown."""
    if charset:
        try:
            return codecs.lookup(charset).name
        except LookupError:
            pass
    return "utf-8"
