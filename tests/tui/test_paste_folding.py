"""Long pastes in the prompt fold to ``[Pasted text #N +L lines]`` (Pilot, the real app).

The placeholder is what the prompt and the transcript show; the pasted text is
what the fake API receives; Backspace after a placeholder deletes it whole; a
1 MB paste leaves the prompt as light as a short one.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual import events

from tests.tui.conftest import wait_for, wait_idle
from tests.tui.screen import screen_text
from tui.fake_api import FakeApi, text_reply
from tui.fullscreen.app import CcxApp
from tui.fullscreen.widgets.prompt_box import PromptInput
from tui.pasted_text import Pastes
from tui.session.options import RunOptions


def make_app(repo: Path) -> CcxApp:
    return CcxApp(RunOptions(cwd=repo, watch_files=False))


def sent_prompts(api: FakeApi) -> list[str]:
    return [r.last_user_text() for r in api.requests if r.path.endswith("/messages")]


async def paste(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    """As a terminal's bracketed paste arrives: at the app, which hands it to the focus."""
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()


async def test_a_long_paste_shows_folded_and_is_sent_whole(api: FakeApi, repo: Path) -> None:
    log = "".join(f"error {i}: retry limit reached\n" for i in range(1, 41))
    api.add(text_reply("Forty errors read."))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        prompt = app.query_one(PromptInput)
        await pilot.press("w", "h", "y", "space")
        await paste(pilot, log)
        assert prompt.text == "why [Pasted text #1 +40 lines]"
        assert "why [Pasted text #1 +40 lines]" in screen_text(app)
        assert "error 2:" not in screen_text(app)
        await pilot.press("enter")
        await wait_for(pilot, lambda: sent_prompts(api))
        await wait_idle(pilot)
        assert sent_prompts(api)[0].rstrip().endswith("why " + log.rstrip())
        text = screen_text(app)
        assert "why [Pasted text #1 +40 lines]" in text  # the transcript shows it folded too
        assert "error 2:" not in text and "Forty errors read." in text


async def test_backspace_deletes_the_fold_and_pastes_are_numbered(api: FakeApi, repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        prompt = app.query_one(PromptInput)
        await paste(pilot, "a\nb\nc\nd\n")
        await pilot.press("space")
        await paste(pilot, "x" * 1_000)
        assert prompt.text == "[Pasted text #1 +4 lines] [Pasted text #2]"
        await pilot.press("backspace")
        assert prompt.text == "[Pasted text #1 +4 lines] "
        await pilot.press("backspace", "backspace")
        assert prompt.text == ""
        await paste(pilot, "one line")  # short: goes in as it is
        assert prompt.text == "one line"
        await paste(pilot, "1\n2\n3\n4\n")
        assert prompt.text == "one line[Pasted text #3 +4 lines]"  # numbers go on


async def test_a_1mb_paste_keeps_the_prompt_light(api: FakeApi, repo: Path) -> None:
    big = "".join(f"log line {i:>8} of a one megabyte paste\n" for i in range(25_000))
    assert len(big) > 1_000_000
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        prompt = app.query_one(PromptInput)
        await paste(pilot, big)
        assert prompt.text == "[Pasted text #1 +25000 lines]"
        started = time.monotonic()
        await pilot.press(*"abcdefghij")
        assert prompt.text.endswith("abcdefghij")
        assert time.monotonic() - started < 2.0  # ten keys, not ten redraws of 1 MB


def test_an_edited_placeholder_stands_for_nothing() -> None:
    pastes = Pastes()
    folded = pastes.fold("a\nb\nc\nd")
    assert pastes.expand(f"see {folded}") == "see a\nb\nc\nd"
    assert pastes.expand("see [Pasted text #1 +9 lines]") == "see [Pasted text #1 +9 lines]"
    assert pastes.expand("see [Pasted text #7]") == "see [Pasted text #7]"
    assert pastes.ending_at(f"x {folded}") == len(folded)
    assert pastes.ending_at(f"x {folded[:-1]}") is None
