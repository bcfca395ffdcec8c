"""WebFetch's page cache: a fetched page's text, kept 15 minutes per URL, within a size budget.

Asking another question of a page just read costs no second download; a page
older than the time-to-live is fetched again. The oldest pages leave first when
the texts held pass the budget.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

CACHE_TTL_S = 15 * 60.0
CACHE_BUDGET_CHARS = 20_000_000


@dataclass(frozen=True)
class Page:
    """What WebFetch keeps of a fetched page."""

    url: str  # where the text came from (after same-host redirects)
    status: int
    reason: str
    content_type: str
    size: int  # bytes downloaded
    text: str  # Markdown for HTML, the text itself otherwise


class PageCache:
    def __init__(
        self,
        ttl_s: float = CACHE_TTL_S,
        budget_chars: int = CACHE_BUDGET_CHARS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = ttl_s
        self.budget_chars = budget_chars
        self.clock = clock
        self._pages: OrderedDict[str, tuple[float, Page]] = OrderedDict()
        self._chars = 0

    def get(self, url: str) -> Page | None:
        entry = self._pages.get(url)
        if entry is None:
            return None
        stored_at, page = entry
        if self.clock() - stored_at > self.ttl_s:
            self._drop(url)
            return None
        return page

    def put(self, url: str, page: Page) -> None:
        if url in self._pages:
            self._drop(url)
        if len(page.text) > self.budget_chars:
            return
        self._pages[url] = (self.clock(), page)
        self._chars += len(page.text)
        while self._chars > self.budget_chars:
            self._drop(next(iter(self._pages)))

    def __len__(self) -> int:
        return len(self._pages)

    def _drop(self, url: str) -> None:
        _, page = self._pages.pop(url)
        self._chars -= len(page.text)
