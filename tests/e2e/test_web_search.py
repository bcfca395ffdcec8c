"""WebSearch through `ccx -p`: the search request offers the API's web search tool, the
session's model gets the links, and the call is asked about unless allowed."""

from __future__ import annotations

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply
from tui.fake_api.script import Reply


def found(*links: tuple[str, str]) -> Reply:
    results = [
        {"type": "web_search_result", "title": title, "url": url, "encrypted_content": "e"}
        for title, url in links
    ]
    return Reply(
        content=[
            {"type": "server_tool_use", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": results},
            {"type": "text", "text": "Both pages describe the 2.0 release."},
        ]
    )


def test_web_search_runs_the_server_tool_and_cites(ccx: Ccx) -> None:
    ccx.api.add(
        tool_reply(("WebSearch", {"query": "httpx2 release", "allowed_domains": ["pypi.org"]})),
        found(
            ("httpx2 · PyPI", "https://pypi.org/project/httpx2/"), ("Docs", "https://pypi.org/d")
        ),
        text_reply("httpx2 2.0 is out [PyPI](https://pypi.org/project/httpx2/)."),
    )
    run = ccx.run("-p", "is httpx2 out?", "--allowedTools", "WebSearch", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    result = run.json()
    assert result["result"].startswith("httpx2 2.0 is out")
    search = ccx.api.requests[1].body
    (tool,) = search["tools"]
    assert tool["type"] == "web_search_20250305" and tool["allowed_domains"] == ["pypi.org"]
    assert "httpx2 release" in ccx.api.requests[1].last_user_text()
    told = ccx.api.requests[2].all_text()
    assert "- [httpx2 · PyPI](https://pypi.org/project/httpx2/)" in told
    assert "Both pages describe the 2.0 release." in told
    assert "web_search" in result.get("cost_by_purpose", {"web_search": 1})
    assert ccx.api.errors == []


def test_web_search_is_asked_about(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("WebSearch", {"query": "secret project name"})), text_reply("ok"))
    run = ccx.run("-p", "search it", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    denials = run.json()["permission_denials"]
    assert [d["tool_name"] for d in denials] == ["WebSearch"]
    assert len(ccx.api.requests) == 2  # no search request went out
