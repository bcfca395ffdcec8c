"""WebSearch's searcher: one request that gives the fast model the API's web search tool.

The API runs the searches (the server tool ``web_search_20250305``, with the tool's
domain filters) and the model sums up what it found; the result blocks give the links.
Counted under the purpose ``web_search`` in /cost and the json result; the API bills
each search on top of the tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from agent.loop.cost import CostTracker
from tools.base import Tool
from tools.web_search import SearchOutcome, WebSearchTool
from tui.session.page_reader import FastModelCall

PURPOSE = "web_search"
SEARCH_TOOL_TYPE = "web_search_20250305"
MAX_SEARCHES = 5  # searches the API may run for one WebSearch call
SEARCHER_MAX_TOKENS = 4_096
SEARCHER_SYSTEM = (
    "You search the web on behalf of a coding agent. Search for what it asks, then sum up "
    "what the results say that bears on it, in a few short paragraphs, citing each result "
    "you use. Quote little; never reproduce long passages."
)


def search_tool(allowed: list[str], blocked: list[str]) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "type": SEARCH_TOOL_TYPE,
        "name": "web_search",
        "max_uses": MAX_SEARCHES,
    }
    if allowed:
        tool["allowed_domains"] = allowed
    if blocked:
        tool["blocked_domains"] = blocked
    return tool


def outcome_of(content: list[Any]) -> SearchOutcome:
    """The links of the result blocks (each once, in order) and the model's text."""
    links: list[tuple[str, str]] = []
    seen: set[str] = set()
    texts: list[str] = []
    searches = 0
    failures: list[str] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            texts.append(block.get("text", ""))
        elif kind == "server_tool_use":
            searches += 1
        elif kind == "web_search_tool_result":
            results = block.get("content")
            if isinstance(results, dict):  # web_search_tool_result_error
                failures.append(str(results.get("error_code", "unknown error")))
                continue
            for result in results or []:
                url = result.get("url")
                if isinstance(url, str) and url not in seen:
                    seen.add(url)
                    links.append((str(result.get("title") or ""), url))
    summary = "".join(texts).strip()
    if not links and failures:
        raise RuntimeError(f"the search service answered {', '.join(failures)}")
    return SearchOutcome(summary, links, searches)


class WebSearcher:
    """Runs WebSearch's query through the API; built once per session."""

    def __init__(self, sdk_client: Callable[[], Any], costs: Callable[[], CostTracker]) -> None:
        self.call = FastModelCall(sdk_client, costs, PURPOSE)

    async def __call__(self, query: str, allowed: list[str], blocked: list[str]) -> SearchOutcome:
        response = await self.call.stream(
            SEARCHER_SYSTEM,
            f"Search the web for: {query}",
            SEARCHER_MAX_TOKENS,
            tools=[search_tool(allowed, blocked)],
        )
        return outcome_of([*response.server_blocks, *response.content])


def connect_web_search(tools: Iterable[Tool[Any]], searcher: WebSearcher) -> None:
    """Give the session's WebSearch tool its searcher."""
    for tool in tools:
        if isinstance(tool, WebSearchTool):
            tool.search = searcher
