"""A subagent in the app: its calls nested in its Agent block, collapsible, with its figures."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from agent.core.messages import INTERRUPTED_BY_USER
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text, widget_text
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fake_api.recording import RecordedRequest
from tui.fullscreen.app import CcxApp
from tui.fullscreen.screens.permission import PermissionScreen
from tui.fullscreen.widgets.tool_block import ToolBlock


def briefed(marker: str, turn: int) -> Callable[[RecordedRequest], bool]:
    """A route predicate: the subagent's request after ``turn`` rounds of its own."""

    def match(request: RecordedRequest) -> bool:
        first = request.messages[0]["content"]
        text = first if isinstance(first, str) else " ".join(b.get("text", "") for b in first)
        return marker in text and len(request.messages) == 2 * turn + 1

    return match


async def test_subagent_calls_show_inside_the_agent_block(api: FakeApi, repo: Path) -> None:
    reads = [("Read", {"file_path": str(repo / name)}) for name in ("README.md", "src/app.py")]
    api.on(briefed("NESTED", 0), tool_reply(reads[0]))
    api.on(briefed("NESTED", 1), tool_reply(reads[1]))
    api.on(briefed("NESTED", 2), tool_reply(("Glob", {"pattern": "*.md"})))
    api.on(briefed("NESTED", 3), tool_reply(("Grep", {"pattern": "RETRY"})))
    api.on(briefed("NESTED", 4), text_reply("The limit is 3, set in src/app.py.", delay_s=3.0))
    api.add(
        tool_reply(("Agent", {"description": "find the limit", "prompt": "NESTED: find it"})),
        text_reply("A subagent found it: 3."),
    )
    app = make_app(repo)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "what is the retry limit?")
        running = await wait_for(pilot, lambda: _running_block(app))
        # While it runs: the latest three calls, the earlier one counted.
        live = await wait_for(pilot, lambda: _text_with(app, running, "Grep"))
        assert "1 earlier calls" in live and "src/app.py" in live and "README.md" not in live
        await wait_idle(pilot)
        (block,) = app.query(ToolBlock)  # the subagent's calls are not blocks of their own
        assert block.status == "done"
        text = widget_text(app, block)
        assert "Agent general-purpose: find the limit" in text
        assert "4 tool uses" in text and "tokens" in text
        assert "Read README.md" not in text  # collapsed: the figures only
        block.action_toggle()
        await pilot.pause()
        text = widget_text(app, block)
        for label in ("README.md", "src/app.py", "Glob", "Grep"):
            assert label in text
        assert "The limit is 3, set in src/app.py." in text
        assert "A subagent found it: 3." in widget_text(app, app.screen)
    assert api.errors == []


async def test_esc_interrupts_the_subagent_with_its_parent(api: FakeApi, repo: Path) -> None:
    """The parent's allow rule holds for the subagent's Bash; Esc stops the subagent's
    `sleep 30` at once, every tool call (the parent's and the subagent's) is answered, and
    the session goes on."""
    api.on(briefed("SLEEPY", 0), tool_reply(("Bash", {"command": "sleep 30"})))
    api.add(tool_reply(("Agent", {"description": "wait", "prompt": "SLEEPY: wait"})))
    app = make_app(repo, allowed_tools=["Bash(sleep *)"])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "wait a while")
        block = await wait_for(pilot, lambda: _text_with_block(app, "sleep 30"))
        started = time.monotonic()
        await pilot.press("escape")
        await wait_idle(pilot)
        assert time.monotonic() - started < 5, "the subagent's sleep was not killed"
        assert block.status == "error" and "Interrupted" in screen_text(app)
        driver = app.bridge.driver
        assert driver is not None
        assert INTERRUPTED_BY_USER in driver.messages[-1].text()
        api.add(text_reply("Stopped, as you asked."))
        await submit(pilot, "never mind")
        await wait_idle(pilot)
        assert "Stopped, as you asked." in screen_text(app)
    assert api.errors == []
    assert len(api.requests) == 3  # parent, subagent, the next prompt: nothing re-sent


async def test_a_subagent_asks_the_user_like_its_parent(api: FakeApi, repo: Path) -> None:
    """In default mode the subagent's Edit goes to the same permission dialog; allowed, it runs."""
    edit = {"file_path": str(repo / "src/app.py"), "old_string": "= 3", "new_string": "= 5"}
    api.on(briefed("EDITOR", 0), tool_reply(("Read", {"file_path": edit["file_path"]})))
    api.on(briefed("EDITOR", 1), tool_reply(("Edit", edit)))
    api.on(briefed("EDITOR", 2), text_reply("Raised it to 5."))
    api.add(
        tool_reply(("Agent", {"description": "edit", "prompt": "EDITOR: raise the limit"})),
        text_reply("Done."),
    )
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "raise the limit")
        await wait_for(
            pilot, lambda: app.screen if isinstance(app.screen, PermissionScreen) else None
        )
        await wait_for(pilot, lambda: "RETRY_LIMIT" in screen_text(app))
        await pilot.press("y")
        await wait_idle(pilot)
        assert "Done." in screen_text(app)
    assert (repo / "src/app.py").read_text().startswith("RETRY_LIMIT = 5")
    assert api.errors == []


def _text_with_block(app: CcxApp, needle: str) -> ToolBlock | None:
    for block in app.query(ToolBlock):
        if needle in widget_text(app, block):
            return block
    return None


def _running_block(app: CcxApp) -> ToolBlock | None:
    blocks = [b for b in app.query(ToolBlock) if b.status == "running"]
    return blocks[0] if blocks else None


def _text_with(app: CcxApp, block: ToolBlock, needle: str) -> str | None:
    text = widget_text(app, block)
    return text if needle in text and block.status == "running" else None
