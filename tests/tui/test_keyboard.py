"""Keyboard first: a click never takes the keyboard from the prompt, and ctrl+o toggles blocks."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text, widget_text
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fullscreen.widgets.prompt_box import PromptInput
from tui.fullscreen.widgets.tool_block import ToolBlock


def script(api: FakeApi) -> None:
    api.add(
        tool_reply(("Grep", {"pattern": "RETRY", "output_mode": "content"})),
        tool_reply(("Glob", {"pattern": "**/*"})),
        text_reply("Found it."),
    )


async def grep_and_glob(pilot) -> list[ToolBlock]:  # type: ignore[no-untyped-def]
    """Ask, let the scripted turn run, and return its two tool blocks."""
    app = pilot.app
    await wait_for(pilot, lambda: app.ready)
    await submit(pilot, "where is the limit?")
    await wait_idle(pilot)
    return list(app.query(ToolBlock))


async def test_typing_after_a_click_on_a_block_goes_to_the_prompt(api: FakeApi, repo: Path) -> None:
    script(api)
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        grep, _glob = await grep_and_glob(pilot)
        await pilot.click(grep)
        await wait_for(pilot, lambda: grep.expanded)
        prompt = app.query_one(PromptInput)
        assert app.focused is prompt
        await pilot.press("h", "i")
        assert prompt.text == "hi"
        # Even with the focus moved to a block by Tab, typed text lands in the prompt.
        grep.focus()
        await pilot.press("x")
        assert prompt.text == "hix" and app.focused is prompt
        await pilot.press("ctrl+d")  # ctrl+d on a non-empty prompt deletes, it does not quit
        assert app.is_running


async def test_ctrl_o_toggles_the_latest_block_and_the_hint_says_so(
    api: FakeApi, repo: Path
) -> None:
    script(api)
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        grep, glob = await grep_and_glob(pilot)
        assert not grep.expanded and not glob.expanded
        lines = glob.hidden_lines()
        assert lines >= 2
        assert f"▸ +{lines} lines (ctrl+o to expand)" in widget_text(app, glob)
        assert "ctrl+o" not in widget_text(app, grep)  # the hint sits on the latest block only
        assert "+1 lines" in widget_text(app, grep) or "+2 lines" in widget_text(app, grep)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: "app.py" in widget_text(app, glob))
        assert glob.expanded and not grep.expanded
        assert "(ctrl+o to collapse)" in widget_text(app, glob)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: not glob.expanded)
        grep.focus()  # Tab's way: the focused block is the one ctrl+o toggles
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: grep.expanded)
        assert "RETRY_LIMIT = 3" in screen_text(app)
