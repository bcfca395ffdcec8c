"""WebFetch: read a web page and answer a prompt about it, through a small fast model.

The page is fetched (tools/web_page.py), made text (tools/web_text.py: HTML as
Markdown) and kept 15 minutes (tools/web_cache.py). A ``PageReader`` handed in
by the composition root runs the prompt over the text with the fast model; when
there is none, or it fails, the model gets the text itself, cut to a size it
can take, with the offset to read on from. Every failure is a tool error with
words for the model.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable

from pydantic import Field, field_validator

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
from tools.web_cache import Page, PageCache
from tools.web_page import (
    DEFAULT_TIMEOUT_S,
    MAX_DOWNLOAD_BYTES,
    CrossHostRedirect,
    FetchFailure,
    fetch,
    upgraded,
    url_problem,
)
from tools.web_text import binary_message, human_size, page_text

log = logging.getLogger(__name__)

# (page text, prompt, url) -> the fast model's answer; raises when the call fails.
PageReader = Callable[[str, str, str], Awaitable[str]]

MAX_READER_CHARS = 100_000  # page text the fast model reads in one call
MAX_RESULT_CHARS = 25_000  # what reaches the session's model, answer or raw text


class WebFetchParams(ToolParams):
    url: str = Field(
        description="The page to fetch: a full http:// or https:// URL",
        json_schema_extra={"format": "uri"},
    )
    prompt: str = Field(
        description='What to find out from the page, e.g. "what changed in version 2.3?"'
    )
    offset: int | None = Field(
        default=None,
        ge=0,
        description="Character offset into the page's text (default 0): pass the one the previous "
        "result named to read on",
    )

    @field_validator("url")
    @classmethod
    def _fetchable(cls, value: str) -> str:
        value = value.strip()
        if problem := url_problem(value):
            raise ValueError(problem)
        return value


class WebFetchTool(Tool[WebFetchParams]):
    name = "WebFetch"
    deferred = True  # loaded with ToolSearch when needed
    is_mutating = False

    def __init__(
        self,
        read_page: PageReader | None = None,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_bytes: int = MAX_DOWNLOAD_BYTES,
        cache: PageCache | None = None,
    ) -> None:
        self.read_page = read_page  # the runtime connects it once the model client exists
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.cache = cache if cache is not None else PageCache()

    def label(self, params: WebFetchParams, cwd: StrPath | None = None) -> str:
        return f"WebFetch {one_line(params.url, 160)}"

    async def run(self, params: WebFetchParams, ctx: ToolContext) -> ToolResult:
        url = upgraded(params.url)
        page = self.cache.get(url)
        cached = page is not None
        if page is None:
            got = await self._download(url, params.prompt)
            if isinstance(got, ToolResult):
                return got
            page = got
            self.cache.put(url, page)
        return await self._answer(page, params, cached)

    async def _download(self, url: str, prompt: str) -> Page | ToolResult:
        fetched = await fetch(url, timeout_s=self.timeout_s, max_bytes=self.max_bytes)
        if isinstance(fetched, FetchFailure):
            return ToolResult.error(fetched.message)
        if isinstance(fetched, CrossHostRedirect):
            return _redirect_result(fetched, prompt)
        text = await asyncio.to_thread(
            page_text, fetched.content_type, fetched.charset, fetched.body
        )
        size = len(fetched.body)
        if text is None:
            return ToolResult.error(binary_message(fetched.url, fetched.content_type, size))
        return Page(fetched.url, fetched.status, fetched.reason, fetched.content_type, size, text)

    async def _answer(self, page: Page, params: WebFetchParams, cached: bool) -> ToolResult:
        received = f"Received {human_size(page.size)} ({page.status} {page.reason})".rstrip()
        received += " from cache" if cached else ""
        meta = {"url": page.url, "status": page.status, "bytes": page.size, "cached": cached}
        start = params.offset or 0
        total = len(page.text)
        if not page.text.strip():
            note = (
                f"The page at {page.url} has no text (HTTP {page.status}, {human_size(page.size)})."
            )
            return ToolResult(note, display=received, meta=meta)
        if start >= total:
            return ToolResult.error(
                f"offset {start:,} is past the end of the page text ({total:,} characters)."
            )
        answer, failure = await self._read(page, params.prompt, start)
        if answer is not None:
            end = min(start + MAX_READER_CHARS, total)
            output = answer[:MAX_RESULT_CHARS] + _read_on(start, end, total)
            return ToolResult(output, display=received, meta={**meta, "summarized": True})
        end = min(start + MAX_RESULT_CHARS, total)
        why = f"the page reader failed ({failure})" if failure else "no page reader is set up"
        output = (
            f"The text of {page.url} follows as it is ({why}); answer the prompt from it "
            f"yourself.\n\n{page.text[start:end]}" + _read_on(start, end, total)
        )
        return ToolResult(
            output, display=f"{received}, raw text", meta={**meta, "summarized": False}
        )

    async def _read(self, page: Page, prompt: str, start: int) -> tuple[str | None, str | None]:
        """The fast model's answer, or (None, why it failed) to fall back on the text."""
        if self.read_page is None:
            return None, None
        try:
            answer = await self.read_page(
                page.text[start : start + MAX_READER_CHARS], prompt, page.url
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # any failure of the side call falls back to the text
            log.warning("WebFetch page reader failed for %s: %s", page.url, exc)
            return None, one_line(str(exc) or type(exc).__name__, 300)
        if not answer.strip():
            return None, "it returned no text"
        return answer, None


def _read_on(start: int, end: int, total: int) -> str:
    if start == 0 and end >= total:
        return ""
    more = f" Call WebFetch again with offset={end} to read on." if end < total else ""
    return f"\n\n[This covered characters {start:,}-{end:,} of the page's {total:,}.{more}]"


def _redirect_result(redirect: CrossHostRedirect, prompt: str) -> ToolResult:
    output = (
        f"{redirect.url} redirects (HTTP {redirect.status} {redirect.reason}) to another host: "
        f"{redirect.location}\n"
        "WebFetch follows redirects only within one host, so it did not fetch that page. "
        "To read it, call WebFetch again with:\n"
        f"- url: {json.dumps(redirect.location)}\n"
        f"- prompt: {json.dumps(prompt, ensure_ascii=False)}"
    )
    meta = {"url": redirect.url, "status": redirect.status, "redirect": redirect.location}
    return ToolResult(output, display=f"Redirected to {redirect.location}", meta=meta)
