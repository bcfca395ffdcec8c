"""Reading output in the app: a long tool output says how much is hidden and expands to all of it."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import widget_text
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fullscreen.widgets.tool_block import ToolBlock
from tui.fullscreen.widgets.transcript import Transcript


async def test_a_300_line_output_says_what_is_hidden_and_expands_to_every_line(
    api: FakeApi, repo: Path
) -> None:
    api.add(tool_reply(("Bash", {"command": "seq 1 300"})), text_reply("Counted."))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "count to 300")
        await wait_idle(pilot)
        (block,) = app.query(ToolBlock)
        shown = widget_text(app, block)
        assert "… +295 lines (ctrl+o to expand)" in shown, shown
        rows = [row.strip() for row in shown.splitlines()]
        assert rows[-5:] == ["296", "297", "298", "299", "300"]  # the last lines, unasked
        assert "1" not in rows and "295" not in rows
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: block.expanded)
        transcript = app.query_one(Transcript)
        transcript.scroll_to_widget(block, top=True, animate=False, immediate=True)
        await pilot.pause()
        top = [row.strip() for row in widget_text(app, block).splitlines()]
        assert "seq 1 300" in top[0] and "(ctrl+o to collapse)" in top[0]
        assert top[1:4] == ["1", "2", "3"], top
        transcript.scroll_to(y=block.virtual_region.bottom - 10, animate=False, immediate=True)
        await pilot.pause()
        bottom = [row.strip() for row in widget_text(app, block).splitlines()]
        assert bottom[-3:] == ["298", "299", "300"], bottom
        assert len(block.body.plain.splitlines()) == 300  # type: ignore[union-attr]
