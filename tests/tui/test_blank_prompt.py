"""A prompt of whitespace in the app: said in the transcript, nothing sent, the session goes on."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text
from tui.commands.slash import BLANK_PROMPT
from tui.fake_api import FakeApi, text_reply
from tui.fullscreen.widgets.prompt_box import PromptInput


async def test_a_blank_prompt_is_said_not_sent(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("Hello."))
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "")  # Enter on an empty prompt: nothing at all
        await pilot.pause()
        assert BLANK_PROMPT not in screen_text(app)
        await submit(pilot, "  \n\t ")
        await wait_for(pilot, lambda: BLANK_PROMPT in screen_text(app))
        assert app.query_one(PromptInput).text == ""
        assert app.running is None and api.requests == []
        await submit(pilot, "hello")
        await wait_idle(pilot)
        assert "Hello." in screen_text(app)
    (request,) = api.requests
    assert request.last_user_text().startswith("hello")
