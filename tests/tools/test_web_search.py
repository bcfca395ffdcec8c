"""WebSearch: its input rules and what the model is given from a search's outcome."""

from __future__ import annotations

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot
from tools.base import ToolResult
from tools.web_search import SearchOutcome, WebSearchParams, WebSearchTool


def test_schema_and_input_rules() -> None:
    assert_schema_matches_snapshot(WebSearchTool)
    schema = WebSearchTool.input_schema()
    assert schema["required"] == ["query"] and schema["properties"]["query"]["minLength"] == 2
    tool = WebSearchTool()
    assert isinstance(tool.parse({"query": "x"}), ToolResult)
    both = tool.parse({"query": "rust", "allowed_domains": ["a.org"], "blocked_domains": ["b.org"]})
    assert isinstance(both, ToolResult) and "not both" in both.output
    params = tool.parse({"query": "textual 8 release notes"})
    assert isinstance(params, WebSearchParams)
    assert tool.label(params) == 'Web search "textual 8 release notes"'


async def test_results_become_links_and_summary(call: Call) -> None:
    asked: list[tuple[str, list[str], list[str]]] = []

    async def search(query: str, allowed: list[str], blocked: list[str]) -> SearchOutcome:
        asked.append((query, allowed, blocked))
        links = [("Textual 8.0", "https://textual.textualize.io/blog/8"), ("", "https://x.org/")]
        return SearchOutcome("Version 8 changed the key bindings [1].", links, searches=1)

    result = await call(WebSearchTool(search), query=" textual 8 ", allowed_domains=["x.org"])
    assert asked == [("textual 8", ["x.org"], [])]
    assert result.output.splitlines()[:3] == [
        'Web search results for "textual 8":',
        "- [Textual 8.0](https://textual.textualize.io/blog/8)",
        "- [https://x.org/](https://x.org/)",
    ]
    assert "Version 8 changed" in result.output and "Cite the pages" in result.output
    assert result.display == "2 results" and result.meta["links"][1] == "https://x.org/"


async def test_failures_and_no_searcher_are_errors(call: Call) -> None:
    async def broken(query: str, allowed: list[str], blocked: list[str]) -> SearchOutcome:
        raise RuntimeError("the search service answered max_uses_exceeded")

    failed = await call(WebSearchTool(broken), query="anything")
    assert failed.is_error and "max_uses_exceeded" in failed.output
    missing = await call(WebSearchTool(), query="anything")
    assert missing.is_error and "not available" in missing.output


@pytest.mark.parametrize("allowed", [[f"d{n}.org" for n in range(51)]])
def test_domain_lists_are_bounded(allowed: list[str]) -> None:
    assert isinstance(WebSearchTool().parse({"query": "q", "allowed_domains": allowed}), ToolResult)
