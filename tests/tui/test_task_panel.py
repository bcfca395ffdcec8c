"""The task panel above the prompt: the model's open tasks at 80x24, gone once all are done."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fullscreen.widgets.task_panel import MAX_ROWS, TaskPanel, panel_text

SLOW_S = 60.0


async def test_panel_follows_the_task_list(api: FakeApi, repo: Path) -> None:
    api.add(
        tool_reply(
            ("TaskCreate", {"subject": "Read the app"}),
            ("TaskCreate", {"subject": "Fix the bug", "activeForm": "Fixing the bug"}),
        ),
        tool_reply(("TaskUpdate", {"taskId": "2", "status": "in_progress"})),
        text_reply("On it."),
    )
    app = make_app(repo, permission_mode="default")
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "fix the bug")
        await wait_idle(pilot, SLOW_S)
        panel = app.query_one(TaskPanel)
        assert panel.display
        text = screen_text(app)
        assert "Tasks 0/2" in text and "▶ Fixing the bug" in text and "☐ Read the app" in text
        shown = text[text.index("Tasks 0/2") :]  # the panel, below the transcript
        assert shown.index("Fixing the bug") < shown.index("Read the app")  # in progress first

        api.add(
            tool_reply(
                ("TaskUpdate", {"taskId": "1", "status": "completed"}),
                ("TaskUpdate", {"taskId": "2", "status": "completed"}),
            ),
            text_reply("All done."),
        )
        await submit(pilot, "finish")
        await wait_for(pilot, lambda: "All done." in screen_text(app), SLOW_S)
        await wait_idle(pilot, SLOW_S)
        assert not panel.display  # every task done: the panel steps aside

        await submit(pilot, "/todos")
        await wait_for(pilot, lambda: "2 of 2 tasks completed" in screen_text(app))
    assert api.errors == []


def test_a_long_list_is_cut_to_a_few_rows() -> None:
    rows = [{"id": str(n), "subject": f"step {n}", "status": "pending"} for n in range(12)]
    text = panel_text(rows).plain
    assert text.count("\n") == MAX_ROWS + 1 and f"… {12 - MAX_ROWS} more (/todos)" in text
