"""WebFetch in the app: the permission modal shows the URL and the prompt; "always" saves the domain."""

from __future__ import annotations

import json
from pathlib import Path

from agent.model.catalog import ALIASES
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text
from tests.web_server import web_site
from tui.fake_api import FakeApi, RecordedRequest, text_reply, tool_reply
from tui.fullscreen.screens.permission import PermissionScreen
from tui.fullscreen.widgets.tool_block import ToolBlock


def is_page_reading(request: RecordedRequest) -> bool:
    return request.model == ALIASES["haiku"] and not request.body.get("tools")


async def test_always_allow_saves_the_domain_and_the_page_is_read(api: FakeApi, repo: Path) -> None:
    api.on(is_page_reading, text_reply("Three retries."))
    with web_site() as site:
        url = site.url("/page.html")
        api.add(
            tool_reply(("WebFetch", {"url": url, "prompt": "How often does it retry?"})),
            text_reply("It retries three times."),
        )
        app = make_app(repo)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.ready)
            await submit(pilot, "read the retry guide")
            await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
            await wait_for(pilot, lambda: "How often does it retry?" in screen_text(app))
            shown = screen_text(app)
            assert url in shown and "WebFetch(domain:127.0.0.1)" in shown
            assert site.hits["/page.html"] == 0  # nothing fetched before the answer
            await pilot.press("a")
            await wait_idle(pilot)
            block = next(b for b in app.query(ToolBlock) if b.tool_name == "WebFetch")
            assert block.status == "done"
        assert site.hits["/page.html"] == 1
    settings = json.loads((repo / ".claude" / "settings.local.json").read_text())
    assert settings["permissions"]["allow"] == ["WebFetch(domain:127.0.0.1)"]
    assert len([r for r in api.requests if is_page_reading(r)]) == 1
    assert api.errors == []
