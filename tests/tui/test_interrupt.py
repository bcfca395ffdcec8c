"""Esc interrupts the running turn: every tool call is answered and the session goes on."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from agent.core.messages import INTERRUPTED_BY_USER
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text, widget_text
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fullscreen.widgets.prompt_box import PromptInput
from tui.fullscreen.widgets.tool_block import ToolBlock
from tui.fullscreen.widgets.transcript import UserPrompt


async def test_esc_during_a_bash_sleep_interrupts_and_the_session_continues(
    api: FakeApi, repo: Path
) -> None:
    api.add(tool_reply(("Bash", {"command": "sleep 30"})))
    app = make_app(repo, allowed_tools=["Bash(sleep *)"])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "wait a while")
        block = await wait_for(
            pilot, lambda: app.query(ToolBlock).first() if app.query(ToolBlock) else None
        )
        assert block.status == "running"
        started = time.monotonic()
        await pilot.press("escape")
        await wait_idle(pilot)
        assert time.monotonic() - started < 5, "the sleep was not killed"
        assert "Interrupted" in screen_text(app)
        assert block.status == "error" and "interrupted" in widget_text(app, block)
        assert "running…" not in screen_text(app)
        assert app.bridge.driver is not None
        runtime = app.bridge.driver.runtime
        assert INTERRUPTED_BY_USER in runtime.agent.messages[-1].text()

        api.add(text_reply("Fine, stopped."))
        await submit(pilot, "never mind")
        await wait_idle(pilot)
        assert "Fine, stopped." in screen_text(app)
    assert api.errors == []  # the interrupted tool_use was answered
    records = [json.loads(line) for line in runtime.session.path.read_text().splitlines()]
    assert any(INTERRUPTED_BY_USER in json.dumps(r) for r in records)


async def test_a_running_bash_shows_its_time_and_lines_so_far(api: FakeApi, repo: Path) -> None:
    command = "for i in 1 2 3; do echo $i; done; sleep 30"
    api.add(tool_reply(("Bash", {"command": command})), text_reply("stopped"))
    app = make_app(repo, permission_mode="bypassPermissions")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "count")
        block = await wait_for(
            pilot, lambda: app.query(ToolBlock).first() if app.query(ToolBlock) else None
        )
        await wait_for(pilot, lambda: "· 3 lines" in widget_text(app, block))
        await wait_for(
            pilot, lambda: re.search(r"running… \d+s · 3 lines", widget_text(app, block))
        )
        await pilot.press("escape")
        await wait_idle(pilot)
        assert "interrupted" in widget_text(app, block) and "running…" not in screen_text(app)


async def test_a_prompt_sent_while_busy_is_queued_then_runs(api: FakeApi, repo: Path) -> None:
    api.add(
        text_reply("first answer " * 200, tokens_per_s=300), text_reply("second answer")
    )  # ~2 s: time to queue
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "one")
        await submit(pilot, "two")
        await pilot.pause()
        prompts = [(w.prompt, w.has_class("-queued")) for w in app.query(UserPrompt)]
        assert prompts == [("one", False), ("two", True)], (prompts, app.running, app.queue)
        one, two = app.query(UserPrompt)
        assert "queued" in widget_text(app, two) and "queued" not in widget_text(app, one)
        assert two.styles.color != one.styles.color  # dim until sent
        await wait_idle(pilot)
        assert not any(w.has_class("-queued") for w in app.query(UserPrompt))
        assert "queued" not in widget_text(app, two)
        assert "second answer" in screen_text(app)
    assert [
        r.last_user_text().split("\n")[0] for r in api.requests if r.path.endswith("/messages")
    ][-1] == "two"


async def test_esc_returns_queued_prompts_to_the_input(api: FakeApi, repo: Path) -> None:
    api.add(tool_reply(("Bash", {"command": "sleep 30"})))
    app = make_app(repo, allowed_tools=["Bash(sleep *)"])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "wait")
        await wait_for(pilot, lambda: app.query(ToolBlock))
        await submit(pilot, "then this")
        await pilot.press("escape")
        await wait_idle(pilot)
        assert app.query_one(PromptInput).text == "then this"
        assert [w.prompt for w in app.query(UserPrompt)] == ["wait"]
