"""Reading and copying in the app: a long tool output says how much is hidden and expands to all
of it; /copy and a drag put text on the clipboard (Textual records it in ``app.clipboard``)."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_words, widget_lines, widget_text
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fullscreen.widgets.prompt_box import PromptInput
from tui.fullscreen.widgets.reply import StreamingReply
from tui.fullscreen.widgets.tool_block import ToolBlock
from tui.fullscreen.widgets.transcript import NEW_OUTPUT, Transcript, UserPrompt


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


REPLY = "The answer is forty two, said the machine."


async def test_copy_puts_the_last_reply_on_the_clipboard(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("An earlier reply."), text_reply(REPLY))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "/copy")
        await wait_idle(pilot)
        assert "There is no reply to copy yet." in screen_words(app)
        assert app.clipboard == ""
        for prompt in ("first", "second"):
            await submit(pilot, prompt)
            await wait_idle(pilot)
        await submit(pilot, "/copy")
        await wait_idle(pilot)
        assert app.clipboard == REPLY
        words = screen_words(app)
        assert f"Copied the last reply to the clipboard ({len(REPLY)} characters, 1 line)." in words


async def test_a_drag_across_a_reply_copies_what_it_selected(api: FakeApi, repo: Path) -> None:
    api.add(text_reply(REPLY))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "ask")
        await wait_idle(pilot)
        prompt = app.query_one(PromptInput)
        prompt.text = "draft"  # (moving the prompt's cursor ends a selection: set it first)
        reply = app.query_one(StreamingReply)
        row = next(i for i, line in enumerate(widget_lines(app, reply)) if "forty" in line)
        column = widget_lines(app, reply)[row].index("forty")
        await pilot.mouse_down(reply, offset=(column, row))
        await pilot.hover(reply, offset=(column + len("forty two") - 1, row))
        await pilot.mouse_up(reply, offset=(column + len("forty two") - 1, row))
        await wait_for(pilot, lambda: app.clipboard == "forty two")
        await wait_for(pilot, lambda: "Copied the selection" in screen_words(app))
        # ctrl+c over a selection copies it again and neither quits nor clears the prompt.
        app.copy_to_clipboard("")
        await pilot.press("ctrl+c")
        assert app.clipboard == "forty two" and prompt.text == "draft" and app.is_running
        assert not app.screen.selections  # the copy ends the selection


async def test_a_drag_over_a_tool_block_selects_without_toggling_it(
    api: FakeApi, repo: Path
) -> None:
    api.add(tool_reply(("Bash", {"command": "seq 1 300"})), text_reply("Counted."))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "count to 300")
        await wait_idle(pilot)
        (block,) = app.query(ToolBlock)
        rows = widget_lines(app, block)
        last = len(rows) - 1
        assert rows[last].strip() == "300"
        await pilot.mouse_down(block, offset=(0, last - 1))
        await pilot.hover(block, offset=(20, last))
        await pilot.mouse_up(block, offset=(20, last))
        await wait_for(pilot, lambda: "299" in app.clipboard and "300" in app.clipboard)
        await pilot.pause()
        assert not block.expanded


LONG = "\n\n".join(f"Paragraph {n} of the answer." for n in range(1, 41))


async def test_a_send_while_scrolled_up_brings_the_new_turn_into_view(
    api: FakeApi, repo: Path
) -> None:
    api.add(text_reply(LONG), text_reply("Short answer."))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "a long answer please")
        await wait_idle(pilot)
        transcript = app.query_one(Transcript)
        await pilot.press("pageup", "pageup")
        await wait_for(pilot, lambda: transcript.scroll_y < transcript.max_scroll_y - 10)
        await submit(pilot, "and the next one")
        await wait_idle(pilot)
        prompts = list(app.query(UserPrompt))
        await wait_for(pilot, lambda: "and the next one" in widget_text(app, prompts[-1]))
        await wait_for(pilot, lambda: "Short answer." in screen_words(app))
        assert transcript.scroll_y == transcript.max_scroll_y
        assert NEW_OUTPUT not in screen_words(app)


async def test_scrolling_up_while_a_reply_streams_stays_put_and_says_more_is_below(
    api: FakeApi, repo: Path
) -> None:
    api.add(text_reply(LONG), text_reply(LONG, chunk_chars=12, tokens_per_s=150))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "a long answer please")
        await wait_idle(pilot)
        await submit(pilot, "again, slowly")
        await wait_for(pilot, lambda: "Paragraph 3 of" in screen_words(app))
        transcript = app.query_one(Transcript)
        assert app.running is not None and transcript.following  # it follows the stream
        await pilot.press("pageup")
        await wait_for(pilot, lambda: not transcript.following)
        await wait_for(pilot, lambda: NEW_OUTPUT in screen_words(app))
        where = transcript.scroll_y
        seen = transcript.max_scroll_y
        await wait_for(pilot, lambda: transcript.max_scroll_y > seen + 2)  # more arrived ...
        assert transcript.scroll_y == where  # ... and the view stayed where the user reads
        await pilot.press("ctrl+end")  # back to the end: following again, the hint gone
        await wait_for(pilot, lambda: transcript.following and NEW_OUTPUT not in screen_words(app))
        await wait_idle(pilot, timeout=30)
        await wait_for(pilot, lambda: "Paragraph 40 of the answer." in screen_words(app))
