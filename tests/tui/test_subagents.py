"""A subagent in the app: its calls nested in its Agent block, collapsible, with its figures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent.fake_api import FakeApi, text_reply, tool_reply
from agent.fake_api.recording import RecordedRequest
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import widget_text
from tui.app import CcxApp
from tui.widgets.tool_block import ToolBlock


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
    api.on(briefed("NESTED", 4), text_reply("The limit is 3, set in src/app.py.", delay_s=1.5))
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


def _running_block(app: CcxApp) -> ToolBlock | None:
    blocks = [b for b in app.query(ToolBlock) if b.status == "running"]
    return blocks[0] if blocks else None


def _text_with(app: CcxApp, block: ToolBlock, needle: str) -> str | None:
    text = widget_text(app, block)
    return text if needle in text and block.status == "running" else None
