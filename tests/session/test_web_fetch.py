"""WebFetch in a whole session: permission rules, the fast model reading the page, its cost,
and the fallback to the page's text when that call fails. A web site on 127.0.0.1 serves
the pages; the fake Messages API answers both the session's model and the fast model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import Event, PermissionDenied
from agent.model.catalog import ALIASES
from tests.fake_env import use_fake_api
from tests.web_server import WebSite, web_site
from tui.commands import builtin as commands
from tui.fake_api import FakeApi, Fault, RecordedRequest, text_reply, tool_reply
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions
from tui.session.runtime import Runtime

FAST = ALIASES["haiku"]
PROMPT = "What are the retry limits?"


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    monkeypatch.delenv("ANTHROPIC_SMALL_FAST_MODEL", raising=False)
    monkeypatch.delenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", raising=False)
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


@pytest.fixture
def site() -> Iterator[WebSite]:
    with web_site() as running:
        yield running


def is_page_reading(request: RecordedRequest) -> bool:
    return request.model == FAST and not request.body.get("tools")


def allow(repo: Path, *rules: str, deny: tuple[str, ...] = ()) -> None:
    permissions = {"allow": list(rules), "deny": list(deny)}
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"permissions": permissions}))


async def run(repo: Path, events: list[Event], prompt: str = "read the page", **kw: Any) -> Runtime:
    runtime = assemble_runtime(
        RunOptions(cwd=repo, watch_files=False, headless=False), events.append, **kw
    )
    try:
        await runtime.agent.submit(prompt)
    finally:
        await runtime.aclose()
    return runtime


def tool_results(runtime: Runtime) -> list[dict[str, Any]]:
    return [b for m in runtime.agent.messages if m.kind == "tool_result" for b in m.content]


def fetch_call(url: str) -> Any:
    return tool_reply(("WebFetch", {"url": url, "prompt": PROMPT}))


async def test_the_fast_model_reads_the_markdown_and_its_answer_is_the_result(
    api: FakeApi, repo: Path, site: WebSite
) -> None:
    allow(repo, "WebFetch(domain:127.0.0.1)")
    api.on(is_page_reading, text_reply("Three retries, backing off 1 s then 2 s."))
    api.add(fetch_call(site.url("/page.html")), text_reply("It retries three times."))
    runtime = await run(repo, [])

    (reading,) = [r for r in api.requests if is_page_reading(r)]
    text = reading.last_user_text()
    assert "# Retry limits" in text and "The client retries **three** times" in text
    assert "<h1>" not in text and "SCRIPT-TEXT" not in text
    assert PROMPT in text and site.url("/page.html") in text
    (result,) = tool_results(runtime)
    assert result["content"] == "Three retries, backing off 1 s then 2 s."
    assert not result.get("is_error")
    # the page reached the session's model only as the answer
    assert "# Retry limits" not in api.requests[-1].all_text()

    costs = runtime.agent.costs
    assert costs.by_purpose["web_fetch"]["requests"] == 1
    assert costs.by_purpose["agent"]["requests"] == 2
    assert costs.cost_by_purpose["web_fetch"] > 0
    shown = await commands.run_command(runtime, "/cost")
    assert "WebFetch page reading: $" in shown.text
    assert shown.data["cost_by_purpose"]["web_fetch"]["requests"] == 1
    assert api.errors == []


async def test_a_failing_fast_model_falls_back_to_the_page_text(
    api: FakeApi, repo: Path, site: WebSite
) -> None:
    allow(repo, "WebFetch(domain:127.0.0.1)")
    api.on(is_page_reading, Fault(404, "not_found_error", f"model: {FAST}"))
    api.add(fetch_call(site.url("/page.html")), text_reply("Read it myself."))
    runtime = await run(repo, [])

    assert len([r for r in api.requests if is_page_reading(r)]) == 1  # a 404 is not retried
    (result,) = tool_results(runtime)
    content = result["content"]
    assert not result.get("is_error")
    assert "the page reader failed" in content and FAST in content
    assert "# Retry limits" in content and "<h1>" not in content
    assert "# Retry limits" in api.requests[-1].all_text()
    assert "web_fetch" not in runtime.agent.costs.by_purpose  # no answer, nothing billed


async def test_without_a_rule_a_fetch_asks_and_a_refusal_fetches_nothing(
    api: FakeApi, repo: Path, site: WebSite
) -> None:
    asked: list[Any] = []

    async def refuse(request: Any) -> str:
        asked.append(request)
        return "deny"

    api.add(fetch_call(site.url("/page.html")), text_reply("Could not read it."))
    events: list[Event] = []
    runtime = await run(repo, events, ask=refuse)

    (request,) = asked
    assert request.tool_name == "WebFetch"
    assert str(request.suggestion) == "WebFetch(domain:127.0.0.1)"
    assert site.hits["/page.html"] == 0
    (result,) = tool_results(runtime)
    assert result["is_error"] and "denied" in result["content"]
    assert any(isinstance(e, PermissionDenied) for e in events)


async def test_a_deny_rule_for_the_domain_beats_allowing_the_tool(
    api: FakeApi, repo: Path, site: WebSite
) -> None:
    allow(repo, "WebFetch", deny=("WebFetch(domain:127.0.0.1)",))
    api.add(
        tool_reply(
            ("WebFetch", {"url": site.url("/page.html"), "prompt": PROMPT}),
            ("WebFetch", {"url": site.url("/other", host="localhost"), "prompt": PROMPT}),
        ),
        text_reply("One of two."),
    )
    api.on(is_page_reading, text_reply("The other page."))
    runtime = await run(repo, [])

    denied, allowed = tool_results(runtime)
    assert denied["is_error"] and "WebFetch(domain:127.0.0.1)" in denied["content"]
    assert allowed["content"] == "The other page."
    assert site.hits == {"/other": 1}


async def test_a_redirect_to_another_host_is_left_to_the_model(
    api: FakeApi, repo: Path, site: WebSite
) -> None:
    allow(repo, "WebFetch(domain:127.0.0.1)")  # localhost is not allowed: it must not be reached
    api.add(fetch_call(site.url("/other-host")), text_reply("It moved."))
    runtime = await run(repo, [])

    (result,) = tool_results(runtime)
    assert "to another host: " + site.url("/page.html", host="localhost") in result["content"]
    assert site.hits["/page.html"] == 0
    assert not [r for r in api.requests if is_page_reading(r)]


async def test_a_subagents_web_fetch_reads_pages_with_the_sessions_fast_model(
    repo: Path, api: FakeApi
) -> None:
    runtime = assemble_runtime(
        RunOptions(cwd=repo, watch_files=False, headless=False), lambda e: None
    )
    try:
        parent = next(t for t in runtime.tools if t.name == "WebFetch")
        definition = runtime.subagents.definitions["general-purpose"]
        fetch = next(t for t in runtime.subagents.tools_for(definition) if t.name == "WebFetch")
        assert fetch is not parent  # its own cache and state
        assert fetch.read_page is parent.read_page is not None
    finally:
        await runtime.aclose()
