"""Editing the prompt with the keys a Claude Code user has in their fingers (Pilot).

New lines (shift+enter, alt+enter, Esc then Enter, ctrl+j, a backslash before
Enter) never send; Enter does. Readline's ctrl+a/e/u/k/w work on the current line
of a multi-line prompt. Pilot hands the app key names, past the terminal parser:
tests/tui/test_terminal_keys.py sends the raw sequences through a real terminal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.conftest import make_app, wait_for, wait_idle
from tests.tui.screen import screen_text
from tui.fake_api import FakeApi, text_reply
from tui.fullscreen.widgets.prompt_box import PromptInput


def sent_prompts(api: FakeApi) -> list[str]:
    """The last user text of each Messages request the fake API received."""
    return [r.last_user_text() for r in api.requests if r.path.endswith("/messages")]


async def type_text(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*("space" if c == " " else c for c in text))


@pytest.mark.parametrize(
    "keys",
    [["shift+enter"], ["alt+enter"], ["ctrl+j"], ["escape", "enter"], ["backslash", "enter"]],
)
async def test_new_line_keys_add_a_line_and_enter_sends_it_all(
    api: FakeApi, repo: Path, keys: list[str]
) -> None:
    api.add(text_reply("Two lines read."))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        prompt = app.query_one(PromptInput)
        await type_text(pilot, "first")
        await pilot.press(*keys)
        await type_text(pilot, "second")
        assert prompt.text == "first\nsecond"
        assert sent_prompts(api) == []  # nothing went out on the new-line key
        await pilot.press("enter")
        await wait_for(pilot, lambda: sent_prompts(api))
        await wait_idle(pilot)
        assert sent_prompts(api)[0].endswith("first\nsecond")
        assert prompt.text == ""


async def test_enter_sends_and_a_late_enter_after_esc_sends_too(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("Sent."))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        prompt = app.query_one(PromptInput)
        await type_text(pilot, "a\\b")  # a backslash inside the line is text
        await pilot.press("escape")
        await pilot.pause(0.6)  # longer than Esc-then-Enter's window
        await pilot.press("enter")
        await wait_for(pilot, lambda: sent_prompts(api))
        assert sent_prompts(api)[0].endswith("a\\b")
        assert prompt.text == ""


async def test_readline_keys_edit_the_current_line(api: FakeApi, repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        prompt = app.query_one(PromptInput)
        prompt.text = "top line\nfix the retry limit now\nlast line"
        prompt.move_cursor((1, 14))  # just before "limit"
        await pilot.press("ctrl+u")
        assert prompt.text == "top line\nlimit now\nlast line"
        assert prompt.cursor_location == (1, 0)
        await pilot.press("ctrl+e")
        assert prompt.cursor_location == (1, 9)
        await pilot.press("ctrl+w")
        assert prompt.text == "top line\nlimit \nlast line"
        await pilot.press("ctrl+w")  # back over the blank, then the word
        assert prompt.text == "top line\n\nlast line"
        await pilot.press("ctrl+w")  # at a line's start: the line break before it
        assert prompt.text == "top line\nlast line" and prompt.cursor_location == (0, 8)
        await pilot.press("ctrl+a")
        assert prompt.cursor_location == (0, 0)
        await pilot.press("right", "right", "right", "ctrl+k")
        assert prompt.text == "top\nlast line"
        await pilot.press("ctrl+k")  # at a line's end: the line break after it
        assert prompt.text == "toplast line"
        await pilot.press("ctrl+u", "ctrl+a", "ctrl+k")
        assert prompt.text == ""
        assert app.is_running and sent_prompts(api) == []


async def test_ctrl_a_and_ctrl_e_go_to_the_ends_of_a_wrapped_line(api: FakeApi, repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(40, 24)) as pilot:
        await wait_idle(pilot)
        prompt = app.query_one(PromptInput)
        long = "word " * 20  # wraps over several rows of the box
        prompt.text = long
        prompt.move_cursor((0, 50))
        await pilot.press("ctrl+e")
        assert prompt.cursor_location == (0, len(long))
        await pilot.press("ctrl+u")
        assert prompt.text == ""


async def sent_three(pilot, api: FakeApi) -> PromptInput:  # type: ignore[no-untyped-def]
    """Three prompts sent (and answered), so the history has them, newest last."""
    for text in ("fix the retry limit", "explain the parser", "fix the tests"):
        await type_text(pilot, text)
        await pilot.press("enter")
        await wait_idle(pilot)
    return pilot.app.query_one(PromptInput)


async def test_ctrl_r_searches_back_and_enter_keeps_the_match(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("one"), text_reply("two"), text_reply("three"), text_reply("four"))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        prompt = await sent_three(pilot, api)
        hints = app.query_one("#prompt-hints")
        await pilot.press("ctrl+r")
        assert prompt.search is not None and "search prompts:" in str(hints.render())
        await type_text(pilot, "fix")
        assert prompt.text == "fix the tests"  # the newest holding "fix"
        await pilot.press("ctrl+r")  # further back
        assert prompt.text == "fix the retry limit"
        await pilot.press("ctrl+r")  # nothing older: the match stays, "no match" shows
        assert prompt.text == "fix the retry limit"
        await pilot.pause()
        assert "no match" in str(hints.render())
        await pilot.press("backspace", "backspace", "backspace")
        await type_text(pilot, "PARS")  # case does not matter
        assert prompt.text == "explain the parser"
        await pilot.press("enter")  # keeps the match in the prompt, sends nothing
        assert prompt.search is None and prompt.text == "explain the parser"
        assert len(sent_prompts(api)) == 3
        await pilot.press("space", "a", "g", "a", "i", "n", "enter")
        await wait_for(pilot, lambda: len(sent_prompts(api)) == 4)
        assert sent_prompts(api)[-1].endswith("explain the parser again")


async def test_esc_cancels_the_search_and_brings_the_draft_back(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("one"), text_reply("two"), text_reply("three"), text_reply("four"))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        prompt = await sent_three(pilot, api)
        await type_text(pilot, "draft")
        await pilot.press("ctrl+r")
        await type_text(pilot, "retry")
        assert prompt.text == "fix the retry limit"
        await pilot.press("escape")
        assert prompt.search is None and prompt.text == "draft"
        await pilot.press("ctrl+r", "q", "q")  # no match: the draft stays shown
        assert prompt.text == "draft"
        await pilot.press("escape", "enter")  # Esc closed the search; Enter then sends
        await wait_for(pilot, lambda: len(sent_prompts(api)) == 4)
        assert sent_prompts(api)[-1].endswith("draft")


def highlighted(app) -> list[str]:  # type: ignore[no-untyped-def]
    """The command names shown in reverse video under the prompt."""
    from tests.tui.screen import screen_strips

    hints = app.query_one("#prompt-hints")
    region = hints.region
    names = []
    for strip in screen_strips(app)[region.y : region.bottom]:
        for segment in strip:
            if segment.style is not None and segment.style.reverse and segment.text.strip():
                names.append(segment.text.strip())
    return names


async def test_slash_list_moves_with_up_down_and_enter_runs_the_highlighted(
    api: FakeApi, repo: Path
) -> None:
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        prompt = app.query_one(PromptInput)
        await pilot.press("/", "c")
        await pilot.pause()
        names = [name for name, _ in prompt.matches]
        assert len(names) >= 3 and "cost" in names
        assert highlighted(app) == [f"/{names[0]}"]
        await pilot.press("down", "down")
        await pilot.pause()
        assert highlighted(app) == [f"/{names[2]}"] and prompt.text == "/c"
        await pilot.press("up")  # up moves the list, not the history
        await pilot.pause()
        assert highlighted(app) == [f"/{names[1]}"] and prompt.text == "/c"
        await pilot.press("up", "up")  # past the top: round to the last
        await pilot.pause()
        assert highlighted(app) == [f"/{names[-1]}"]
        await pilot.press(*["down"] * (names.index("cost") + 1))
        await pilot.pause()
        assert highlighted(app) == ["/cost"]
        await pilot.press("enter")
        await wait_idle(pilot)
        await wait_for(pilot, lambda: "/cost" in screen_text(app))
        assert prompt.text == "" and sent_prompts(api) == []  # a command ran, no prompt went out


async def test_tab_fills_the_highlighted_and_esc_closes_the_list(api: FakeApi, repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        prompt = app.query_one(PromptInput)
        hints = app.query_one("#prompt-hints")
        await pilot.press("/", "c")
        await pilot.pause()
        names = [name for name, _ in prompt.matches]
        await pilot.press("down", "tab")
        assert prompt.text == f"/{names[1]}"
        await pilot.pause()
        assert highlighted(app) == [f"/{names[1]}"] and hints.has_class("-shown")
        await pilot.press("escape")
        await pilot.pause()
        assert not hints.has_class("-shown") and prompt.text == f"/{names[1]}"
        assert app.is_running
        await pilot.press("backspace")  # the text changes: the list is back
        await pilot.pause()
        assert hints.has_class("-shown")


async def test_the_projects_past_prompts_are_searched_in_a_new_session(
    api: FakeApi, repo: Path, tmp_path: Path
) -> None:
    api.add(text_reply("one"), text_reply("two"))
    async with make_app(repo).run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        await type_text(pilot, "fix the retry limit")
        await pilot.press("enter")
        await wait_idle(pilot)
    other = tmp_path / "other"
    other.mkdir()
    async with make_app(other).run_test(size=(80, 24)) as pilot:  # another project: not its
        await wait_idle(pilot)
        prompt = pilot.app.query_one(PromptInput)
        await pilot.press("ctrl+r", "r", "e", "t", "r", "y")
        assert prompt.text == ""
    async with make_app(repo).run_test(size=(80, 24)) as pilot:  # a new session, same project
        await wait_idle(pilot)
        prompt = pilot.app.query_one(PromptInput)
        await pilot.press("up")
        assert prompt.text == "fix the retry limit"
        await pilot.press("down", "ctrl+r", "r", "e", "t", "r", "y", "enter")
        assert prompt.text == "fix the retry limit" and len(sent_prompts(api)) == 1


async def test_a_match_kept_from_a_search_begun_on_a_slash_draft_is_sent(
    api: FakeApi, repo: Path
) -> None:
    api.add(text_reply("one"), text_reply("two"), text_reply("three"), text_reply("four"))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        prompt = await sent_three(pilot, api)
        await pilot.press("/", "c")  # the command list is open
        await pilot.press("ctrl+r", "p", "a", "r", "s", "e", "r", "enter")
        assert prompt.text == "explain the parser" and not prompt.hints_shown
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(sent_prompts(api)) == 4)
        assert sent_prompts(api)[-1].endswith("explain the parser")
