"""Esc twice on an idle, empty prompt: the rewind picker. Picking a prompt takes it and all
after it out of the conversation, redraws the transcript, moves the meter and puts the
prompt's text back in the input; with "conversation and files" the files come back too.
Esc while a turn runs still stops it (tests/tui/test_interrupt.py)."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fullscreen.screens.rewind import RewindScreen
from tui.fullscreen.widgets.footer import StatusFooter
from tui.fullscreen.widgets.prompt_box import PromptInput


async def two_turns(pilot, app, note: Path) -> None:  # type: ignore[no-untyped-def]
    await wait_for(pilot, lambda: app.ready)
    await submit(pilot, "say hello")
    await wait_idle(pilot)
    await submit(pilot, "write the note")
    await wait_idle(pilot)
    await wait_for(pilot, lambda: "Wrote the note." in screen_text(app))
    assert note.exists()


def script(api: FakeApi, note: Path) -> None:
    api.add(
        text_reply("Hello there."),
        tool_reply(("Write", {"file_path": str(note), "content": "written\n"})),
        text_reply("Wrote the note."),
    )


async def test_esc_esc_rewinds_the_conversation_and_gives_the_prompt_back(
    api: FakeApi, repo: Path
) -> None:
    note = repo / "note.txt"
    script(api, note)
    app = make_app(repo, permission_mode="acceptEdits")
    async with app.run_test(size=(80, 24)) as pilot:
        await two_turns(pilot, app, note)
        footer = app.query_one(StatusFooter)
        before = footer.state.used if footer.state else 0
        await pilot.press("escape")
        await pilot.pause()
        assert "Esc again to rewind" in screen_text(app)
        assert not isinstance(app.screen, RewindScreen)  # one Esc alone opens nothing
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen))
        shown = screen_text(app)
        assert shown.index("1. write the note") < shown.index("2. say hello")  # latest first
        await pilot.press("enter")  # the latest prompt; its Write changed a file: which way?
        await wait_for(pilot, lambda: "Conversation only" in screen_text(app))
        assert "Conversation and files (put back 1 file)" in screen_text(app)
        assert "note.txt" in screen_text(app)
        await pilot.press("enter")  # conversation only
        await wait_for(pilot, lambda: app.query_one(PromptInput).text == "write the note")
        await wait_idle(pilot)
        text = screen_text(app)
        assert "Rewound to before “write the note”" in text
        assert "Wrote the note." not in text and "Hello there." in text
        assert note.exists()  # conversation only: the file stays
        driver = app.bridge.driver
        assert driver is not None
        now = driver.status().context
        assert now is not None and now.used < before, (before, now)  # less, by the API's count
        assert now.source == "api"
        await wait_for(pilot, lambda: footer.state == now)  # the meter shows it at once
        assert [m.text() for m in driver.messages] == ["say hello", "Hello there."]


async def test_rewind_with_the_files_puts_them_back(api: FakeApi, repo: Path) -> None:
    note = repo / "note.txt"
    script(api, note)
    app = make_app(repo, permission_mode="acceptEdits")
    async with app.run_test(size=(80, 24)) as pilot:
        await two_turns(pilot, app, note)
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Conversation only" in screen_text(app))
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.query_one(PromptInput).text == "write the note")
        await wait_idle(pilot)
        assert "Files put back:" in screen_text(app)
        assert not note.exists()


async def test_esc_esc_needs_an_empty_prompt_and_esc_cancels_the_picker(
    api: FakeApi, repo: Path
) -> None:
    api.add(text_reply("Hello there."))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: "No prompt to rewind to yet" in screen_text(app))
        await submit(pilot, "say hello")
        await wait_idle(pilot)
        prompt = app.query_one(PromptInput)
        prompt.text = "draft"
        await pilot.press("escape", "escape")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, RewindScreen) and prompt.text == "draft"
        prompt.text = ""
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("escape")  # cancel: nothing changes
        await wait_for(pilot, lambda: not isinstance(app.screen, RewindScreen))
        driver = app.bridge.driver
        assert driver is not None and len(driver.messages) == 2
        assert prompt.text == ""


async def test_bare_rewind_typed_opens_the_same_picker(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("Hello there."))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "say hello")
        await wait_idle(pilot)
        await submit(pilot, "/rewind")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("enter")  # no file changed since: no second question
        await wait_for(pilot, lambda: app.query_one(PromptInput).text == "say hello")
        await wait_idle(pilot)
        driver = app.bridge.driver
        assert driver is not None and list(driver.messages) == []
