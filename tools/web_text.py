"""What WebFetch makes of a response body: HTML as Markdown, text and JSON as they are, binary refused.

HTML goes through html-to-markdown (a Rust converter, about ten times
markdownify's speed: bench/web_fetch.py), decoded by the charset the header
or the page itself declares, with scripts, styles, navigation, forms and
embedded frames dropped. Text types (plain, Markdown, CSV, JSON, XML, YAML,
code) pass through decoded. Anything else, or a "text" body holding NUL
bytes, is binary.
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
# Elements that hold no reading matter (navigation and forms go by the converter's own preset).
NON_CONTENT = ("script", "style", "noscript", "template", "svg", "iframe", "object", "embed")
_SNIFF_BYTES = 8_192
_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE
)


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
    """Markdown of an HTML document, without scripts, styles, navigation, forms or frames."""
    import html_to_markdown  # imported on first use: WebFetch is rare, start-up is not

    text = html.decode(_codec(charset or html_charset(html)), errors="replace")
    options = html_to_markdown.ConversionOptions(exclude_selectors=list(NON_CONTENT))
    markdown = html_to_markdown.convert(text, options).content or ""
    return re.sub(r"\n{3,}", "\n\n", markdown).strip() + "\n"


def html_charset(html: bytes) -> str | None:
    """The encoding a page declares for itself: a byte-order mark, else a ``<meta>`` charset."""
    for bom, name in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if html.startswith(bom):
            return name
    match = _META_CHARSET.search(html[:_SNIFF_BYTES])
    return match.group(1).decode("ascii").lower() if match else None


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
