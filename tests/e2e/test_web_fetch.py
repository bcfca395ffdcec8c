"""`ccx -p` with WebFetch: --allowedTools domain rules, the fast model's cost in the json result."""

from __future__ import annotations

from agent.model.catalog import ALIASES
from tests.e2e.conftest import Ccx
from tests.web_server import web_site
from tui.fake_api import RecordedRequest, text_reply, tool_reply


def is_page_reading(request: RecordedRequest) -> bool:
    return request.model == ALIASES["haiku"] and not request.body.get("tools")


def test_a_fetch_allowed_by_domain_is_read_by_the_fast_model_and_costed(ccx: Ccx) -> None:
    ccx.api.on(is_page_reading, text_reply("It retries three times."))
    with web_site() as site:
        ccx.api.add(
            tool_reply(
                ("WebFetch", {"url": site.url("/page.html"), "prompt": "How often?"}),
                ("WebFetch", {"url": site.url("/data.json", host="localhost"), "prompt": "x"}),
            ),
            text_reply("Three times."),
        )
        run = ccx.run(
            "-p",
            "how often does it retry?",
            "--output-format",
            "json",
            "--allowedTools",
            "WebFetch(domain:127.0.0.1)",
        )
    assert run.returncode == 0, run.stderr
    result = run.json()
    assert result["result"] == "Three times."
    # localhost has no rule, and -p has no one to ask: denied, never fetched
    assert [d["tool_name"] for d in result["permission_denials"]] == ["WebFetch"]
    assert site.hits == {"/page.html": 1}
    reading = result["cost_by_purpose"]["web_fetch"]
    assert reading["requests"] == 1 and reading["cost_usd"] > 0
    assert result["cost_by_purpose"]["agent"]["requests"] == 2
    (page,) = [r for r in ccx.api.requests if is_page_reading(r)]
    assert "# Retry limits" in page.last_user_text()
    results = [
        b for b in ccx.api.requests[-1].messages[-1]["content"] if b["type"] == "tool_result"
    ]
    assert results[0]["content"] == "It retries three times."
    assert results[1]["is_error"] and "WebFetch(domain:localhost)" in results[1]["content"]
    assert ccx.api.errors == []
