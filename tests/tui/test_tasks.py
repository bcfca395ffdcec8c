"""/tasks in the full-screen app: a dialog of the session's jobs; enter stops the chosen one."""

from __future__ import annotations

from pathlib import Path

from tests.host_pids import new_tag, pids_tagged, tagged_sleep, wait_tagged_gone
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fullscreen.screens.tasks import TasksScreen

SLOW_S = 60.0  # the first turn of an app on a loaded machine (CI, several runs at once)


async def test_tasks_dialog_lists_jobs_and_stops_one_from_the_keyboard(
    api: FakeApi, repo: Path
) -> None:
    tag = new_tag()
    command = tagged_sleep(tag)
    tool_input = {"command": command, "description": "serve docs", "run_in_background": True}
    api.add(tool_reply(("Bash", tool_input)), text_reply("Started."))
    app = make_app(repo, permission_mode="bypassPermissions")
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, "start the docs server")
        await wait_idle(pilot, SLOW_S)
        await wait_for(pilot, lambda: bool(pids_tagged(tag)))
        await submit(pilot, "/tasks")
        await wait_for(pilot, lambda: isinstance(app.screen, TasksScreen))
        assert "serve docs" in screen_text(app) and "running" in screen_text(app)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Stopped job" in screen_text(app))
        assert wait_tagged_gone(tag, within=5) == []
        await submit(pilot, "/tasks")
        await wait_for(pilot, lambda: "killed" in screen_text(app))
        assert not isinstance(app.screen, TasksScreen)  # nothing running: the list, no dialog
    assert api.errors == []


async def test_a_job_ending_while_the_app_is_idle_is_told_to_the_model_at_once(
    api: FakeApi, repo: Path
) -> None:
    tool_input = {
        "command": "sleep 0.5; echo built",
        "description": "build",
        "run_in_background": True,
    }
    api.add(
        tool_reply(("Bash", tool_input)), text_reply("Started."), text_reply("The build is done.")
    )
    app = make_app(repo, permission_mode="bypassPermissions")
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, "build it in the background")
        await wait_for(pilot, lambda: "The build is done." in screen_text(app), SLOW_S)
        await wait_idle(pilot, SLOW_S)
    assert len(api.requests) == 3
    told = api.requests[-1]
    assert "<job-notification>" in told.last_user_text()
    assert "<status>completed</status>" in told.last_user_text()
    assert told.all_text().count("<job-notification>") == 1
    assert api.errors == []
