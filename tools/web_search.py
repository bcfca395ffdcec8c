"""WebSearch: search the web through the API's server-side web search tool.

The search itself runs on the API's side: a ``Searcher`` handed in by the composition
root (tui/session/web_searcher.py) sends one request that offers the model the
``web_search`` server tool and collects what it found. This tool checks the input,
and gives the session's model the results as links plus the searcher's summary,
with a reminder to cite them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from pydantic import Field, model_validator

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line

MAX_DOMAINS = 50


@dataclass
class SearchOutcome:
    summary: str  # the searcher's words about what it found, citing the results
    links: list[tuple[str, str]] = field(default_factory=list)  # (title, url), in order found
    searches: int = 0  # how many searches the API ran


# (query, allowed domains, blocked domains) -> what the search found; raises when it fails.
Searcher = Callable[[str, list[str], list[str]], Awaitable[SearchOutcome]]


class WebSearchParams(ToolParams):
    query: str = Field(min_length=2)
    allowed_domains: list[str] | None = None
    blocked_domains: list[str] | None = None

    @model_validator(mode="after")
    def _one_filter(self) -> WebSearchParams:
        if self.allowed_domains and self.blocked_domains:
            raise ValueError("give allowed_domains or blocked_domains, not both")
        for domains in (self.allowed_domains, self.blocked_domains):
            if domains and len(domains) > MAX_DOMAINS:
                raise ValueError(f"at most {MAX_DOMAINS} domains")
        return self


class WebSearchTool(Tool[WebSearchParams]):
    name = "WebSearch"
    deferred = True  # loaded with ToolSearch when needed
    is_mutating = False  # changes nothing here, but the query leaves the machine: the gate asks

    def __init__(self, search: Searcher | None = None) -> None:
        self.search = search  # the runtime connects it once the model client exists

    def label(self, params: WebSearchParams, cwd: StrPath | None = None) -> str:
        return f'Web search "{one_line(params.query)}"'

    async def run(self, params: WebSearchParams, ctx: ToolContext) -> ToolResult:
        if self.search is None:
            return ToolResult.error("Web search is not available in this session.")
        try:
            outcome = await self.search(
                params.query.strip(), params.allowed_domains or [], params.blocked_domains or []
            )
        except Exception as exc:  # the API refused or failed: the model can go on without it
            return ToolResult.error(f"The web search failed: {exc}")
        lines = [f'Web search results for "{params.query.strip()}":']
        if outcome.links:
            lines += [f"- [{title or url}]({url})" for title, url in outcome.links]
        else:
            lines.append("(no results)")
        if outcome.summary:
            lines += ["", outcome.summary]
        if outcome.links:
            lines += ["", "Cite the pages you use as Markdown links in your answer."]
        count = len(outcome.links)
        display = f"{count} result{'s' if count != 1 else ''}"
        return ToolResult(
            output="\n".join(lines),
            display=display,
            meta={"links": [url for _title, url in outcome.links], "display": display},
        )
