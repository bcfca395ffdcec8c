"""/compact, /context and /undo-compact in the app; auto-compaction shows the same way."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agent.core.events import SERVER_CLEARING, Microcompacted
from compaction.notes_writer import NOTES_REQUEST_MARK
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text, screen_words, widget_text
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fullscreen.widgets.compaction_block import CompactionBlock, SummaryToggle
from tui.fullscreen.widgets.context_view import ContextView
from tui.fullscreen.widgets.footer import ContextMeter
from tui.fullscreen.widgets.prompt_box import PromptInput


def summary_route(
    api: FakeApi, text: str = "RETRY_LIMIT is 3 in src/app.py.", **kw: object
) -> None:
    api.on(
        lambda r: SUMMARY_MARK in r.last_user_text(),
        text_reply(f"<analysis>scratch</analysis><summary>{text}</summary>", **kw),  # type: ignore[arg-type]
    )


def summary_requests(api: FakeApi) -> list:
    return [r for r in api.requests if SUMMARY_MARK in r.last_user_text()]


async def test_compact_shows_progress_then_the_result_and_summary(api: FakeApi, repo: Path) -> None:
    api.add(tool_reply(("Read", {"file_path": "src/app.py"})), text_reply("It is 3."))
    summary_route(api, delay_s=0.5)
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "what is the retry limit?")
        await wait_idle(pilot)
        before = widget_text(app, app.query_one(ContextMeter))
        await submit(pilot, "/compact keep every number")
        block = await wait_for(
            pilot,
            lambda: (
                app.query(CompactionBlock).first(CompactionBlock)
                if app.query(CompactionBlock)
                else None
            ),
        )
        await wait_for(pilot, lambda: "Compacting (manual)" in widget_text(app, block))
        assert "summarizing" in widget_text(app, block)
        await wait_idle(pilot)
        line = " ".join(widget_text(app, block.query_one(".compaction-line")).split())
        # One small read is less than what compaction puts back (the summary, the file): the
        # line says the context did not get smaller.
        assert block.state == "finished" and line.startswith("⚠ Compacted (manual):")
        assert "→" in line and "restored files:" in line and "src/app.py" in line
        toggle = block.query_one(SummaryToggle)
        shown = widget_text(app, toggle)
        assert not toggle.expanded and "▸ +1 lines (ctrl+o to expand)" in shown, shown
        assert "RETRY_LIMIT is 3 in src/app.py." not in screen_text(app)  # collapsed
        await pilot.click(toggle)
        await wait_for(pilot, lambda: "RETRY_LIMIT is 3 in src/app.py." in screen_text(app))
        assert toggle.expanded and "▾ (ctrl+o to collapse)" in widget_text(app, toggle)
        assert app.focused is app.query_one(PromptInput)  # the click left the keyboard alone
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: "RETRY_LIMIT is 3" not in screen_text(app))
        assert widget_text(app, app.query_one(ContextMeter)) != before
    (request,) = summary_requests(api)
    assert "keep every number" in request.last_user_text()
    assert api.errors == []


async def test_esc_cancels_a_running_compaction(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("Hello."))
    summary_route(api, delay_s=10)
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "hi")
        await wait_idle(pilot)
        driver = app.bridge.driver
        assert driver is not None
        before = [m.uuid for m in driver.messages]
        await submit(pilot, "/compact")
        block = await wait_for(
            pilot,
            lambda: (
                app.query(CompactionBlock).first(CompactionBlock)
                if app.query(CompactionBlock)
                else None
            ),
        )
        await wait_for(pilot, lambda: summary_requests(api))
        await pilot.press("a")  # the app stays responsive while it runs
        await pilot.press("escape")
        await wait_idle(pilot)
        assert block.state == "cancelled"
        assert "Compaction cancelled" in widget_text(app, block)
        assert [m.uuid for m in driver.messages] == before
        assert "Interrupted" in screen_text(app)


async def test_context_renders_a_breakdown_widget(api: FakeApi, repo: Path) -> None:
    api.add(tool_reply(("Read", {"file_path": "src/app.py"})), text_reply("ok"))
    app = make_app(repo)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "read it")
        await wait_idle(pilot)
        await submit(pilot, "/context")
        await wait_idle(pilot)
        view = app.query_one(ContextView)
        names = [c.name for c in view.breakdown.categories]
        for label in (
            "System prompt",
            "Tools",
            "Memory files",
            "Skills",
            "Messages",
            "Tool results: Read",
            "Free space",
            "Auto-compact buffer",
        ):
            assert label in names
        shown = widget_text(app, view)
        assert "A compaction now would keep:" in shown and "src/app.py" in shown
        assert "█" in shown  # bars, not just numbers
        for label in ("System prompt", "Tool results: Read", "Free space"):
            assert label in shown


async def test_undo_compact_and_auto_compaction(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("first"), text_reply("second"))
    summary_route(api)
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "hello")
        await wait_idle(pilot)
        await submit(pilot, "/compact")
        await wait_idle(pilot)
        await submit(pilot, "/undo-compact")
        await wait_idle(pilot)
        assert "Restored the conversation from before the last compaction" in screen_words(app)
    assert api.errors == []


async def test_auto_compaction_shows_as_a_block(api: FakeApi, repo: Path) -> None:
    body = "value = 1\n" * 1_800
    for index in range(4):
        (repo / f"big{index}.py").write_text(body)
    summary_route(api)
    api.add(
        *[tool_reply(("Read", {"file_path": f"big{i}.py"})) for i in range(4)],
        text_reply("read them all"),
        text_reply("after"),
    )
    app = make_app(repo, autocompact="20000")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "read the big files")
        await wait_idle(pilot, timeout=30)
        blocks = list(app.query(CompactionBlock))
        assert blocks and blocks[0].trigger == "auto"
        line = blocks[0].query_one(".compaction-line")
        assert widget_text(app, line).startswith("✓ Compacted (auto)")
    assert api.errors == []


async def test_clearing_by_ccx_and_by_the_api_read_differently(api: FakeApi, repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await app.view.show(Microcompacted("cost", 3, 4_500))
        await app.view.show(Microcompacted(SERVER_CLEARING, 12, 34_000))
        await pilot.pause()
        text = screen_words(app)
        assert (
            "Cleared 3 old tool results, freed 4.5K tokens (cheaper than sending them again)"
            in text
        )
        assert "The API clears 12 old tool results from what the model sees (34K tokens)" in text


async def test_compact_that_grows_the_context_says_so(api: FakeApi, repo: Path) -> None:
    """A short conversation and a long summary: the result line says the context did not get
    smaller and how to have it back, in yellow rather than as a success."""
    api.add(text_reply("Hello."))
    summary_route(api, "The user said hello. " * 400)
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "hi")
        await wait_idle(pilot)
        await submit(pilot, "/compact")
        await wait_idle(pilot)
        block = app.query_one(CompactionBlock)
        line = " ".join(widget_text(app, block.query_one(".compaction-line")).split())
        assert line.startswith("⚠ Compacted (manual):"), line
        assert "did not get smaller" in line and "/undo-compact" in line


def long_steps(api: FakeApi, repo: Path, steps: int = 20) -> None:
    """Steps whose words (which no clearing removes) fill the context: compaction comes soon."""
    (repo / "f.py").write_text("value = 1\n")
    api.add(
        *[
            tool_reply(("Read", {"file_path": "f.py"}), text=f"step {i} " + "word " * 3000)
            for i in range(steps)
        ],
        text_reply("all read"),
    )


async def test_esc_during_an_automatic_compaction_keeps_the_conversation(
    api: FakeApi, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CCX_SESSION_MEMORY", "0")  # a full compaction: its own summary request
    release = threading.Event()

    def held(request: object) -> object:
        release.wait(30)
        return text_reply("<summary>read f.py</summary>")

    api.on(lambda r: SUMMARY_MARK in r.last_user_text(), held)
    long_steps(api, repo)
    app = make_app(repo, autocompact="30000")
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.ready)
            await submit(pilot, "read it again and again")
            block = await wait_for(
                pilot,
                lambda: app.query(CompactionBlock).first() if app.query(CompactionBlock) else None,
            )
            await wait_for(pilot, lambda: summary_requests(api))
            driver = app.bridge.driver
            assert driver is not None
            before = [m.uuid for m in driver.messages]
            sent = len(api.requests)
            await pilot.press("escape")
            await wait_idle(pilot, timeout=5)
            assert block.state == "cancelled"
            assert "Compaction cancelled" in widget_text(app, block)
            assert [m.uuid for m in driver.messages][: len(before)] == before
            assert not [m for m in driver.messages if m.kind == "summary"]
            assert "Interrupted" in screen_text(app)
            assert len(api.requests) == sent
    finally:
        release.set()


async def test_esc_while_a_compaction_waits_for_the_notes_returns_at_once(
    api: FakeApi, repo: Path
) -> None:
    release = threading.Event()
    held: list[float] = []

    def notes(request: object) -> object:
        held.append(time.monotonic())
        release.wait(30)
        return text_reply("<summary>1. Goal: read f.py.</summary>")

    api.on(lambda r: NOTES_REQUEST_MARK in r.last_user_text(), notes)
    api.on(lambda r: SUMMARY_MARK in r.last_user_text(), text_reply("<summary>read f.py</summary>"))
    long_steps(api, repo)
    # Room for a notes update to start before the threshold. The steps are coarse (3.75K
    # tokens each) against the tools' definitions, so whether a notes update starts at all
    # depends on where the threshold falls between two steps: with Monitor and the worktree
    # tools' definitions, 40K-42K and 48K-52K leave it room (45K and 38K do not).
    app = make_app(repo, autocompact="50000")
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.ready)
            await submit(pilot, "read it again and again")
            await wait_for(pilot, lambda: held)
            count, since = len(api.requests), time.monotonic()
            while time.monotonic() - since < 0.6:  # until the turn waits on the held update
                assert app.running is not None, screen_text(app)
                await pilot.pause(0.05)
                if len(api.requests) != count:
                    count, since = len(api.requests), time.monotonic()
            driver = app.bridge.driver
            assert driver is not None
            before = [m.uuid for m in driver.messages]
            started = time.monotonic()
            await pilot.press("escape")
            await wait_idle(pilot, timeout=5)
            assert time.monotonic() - started < 1.0
            assert [m.uuid for m in driver.messages][: len(before)] == before
            assert not [m for m in driver.messages if m.kind == "summary"]
            assert not app.query(CompactionBlock)  # none was started, none shows
            assert len(api.requests) == count
            assert "Interrupted" in screen_text(app)
    finally:
        release.set()
