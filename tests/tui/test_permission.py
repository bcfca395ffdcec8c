"""The permission modal: allow once, always allow (saved as a rule), deny; Esc stops the turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.core.messages import INTERRUPTED_BY_USER
from agent.loop.tool_runner import STOPPED_AT_PROMPT
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text, screen_words, widget_text
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fullscreen.screens.permission import PermissionScreen, edit_diff, permission_preview
from tui.fullscreen.widgets.status_line import StatusLine
from tui.fullscreen.widgets.tool_block import ToolBlock

EDIT = (
    "Edit",
    {"file_path": "src/app.py", "old_string": "RETRY_LIMIT = 3", "new_string": "RETRY_LIMIT = 5"},
)


def script(api: FakeApi) -> None:
    api.add(
        tool_reply(("Read", {"file_path": "src/app.py"})),
        tool_reply(EDIT),
        text_reply("done"),
    )


async def run_until_asked(pilot, app) -> PermissionScreen:  # type: ignore[no-untyped-def]
    await wait_for(pilot, lambda: app.ready)
    await submit(pilot, "raise the limit")
    screen = await wait_for(
        pilot, lambda: app.screen if isinstance(app.screen, PermissionScreen) else None
    )
    await wait_for(
        pilot, lambda: "Why ccx asks" in screen_text(app) and "RETRY_LIMIT" in screen_text(app)
    )
    await pilot.pause()
    return screen


@pytest.mark.parametrize("key", ["y", "1", "enter"])
async def test_allow_once_runs_the_edit(api: FakeApi, repo: Path, key: str) -> None:
    script(api)
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_until_asked(pilot, app)
        shown = screen_text(app)
        assert "-RETRY_LIMIT = 3" in shown and "+RETRY_LIMIT = 5" in shown  # the diff
        assert "Why ccx asks:" in shown
        await pilot.press(key)
        await wait_idle(pilot)
        edit = next(b for b in app.query(ToolBlock) if b.tool_name == "Edit")
        assert edit.status == "done" and "+RETRY_LIMIT = 5" in widget_text(app, edit)
    assert (repo / "src" / "app.py").read_text().startswith("RETRY_LIMIT = 5")
    assert not (repo / ".claude" / "settings.local.json").exists()
    assert api.errors == []


async def test_always_allow_saves_the_rule(api: FakeApi, repo: Path) -> None:
    script(api)
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_until_asked(pilot, app)
        await pilot.press("a")
        await wait_idle(pilot)
    settings = json.loads((repo / ".claude" / "settings.local.json").read_text())
    (rule,) = settings["permissions"]["allow"]
    assert rule.startswith("Edit(") and "src/app.py" in rule
    assert (repo / "src" / "app.py").read_text().startswith("RETRY_LIMIT = 5")


@pytest.mark.parametrize("key", ["n", "3"])
async def test_deny_leaves_the_file_and_tells_the_model(api: FakeApi, repo: Path, key: str) -> None:
    script(api)
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_until_asked(pilot, app)
        await pilot.press(key)
        await wait_idle(pilot)
        edit = next(b for b in app.query(ToolBlock) if b.tool_name == "Edit")
        assert edit.status == "denied" and "denied" in widget_text(app, edit)
        assert not isinstance(app.screen, PermissionScreen)
        assert "done" in screen_text(app)
    assert (repo / "src" / "app.py").read_text().startswith("RETRY_LIMIT = 3")
    assert "denied permission" in api.requests[-1].all_text()


TWO_CALLS = tool_reply(
    ("Bash", {"command": "touch one", "description": "first"}),
    ("Bash", {"command": "touch two", "description": "second"}),
)


async def test_esc_in_the_dialog_stops_the_turn(api: FakeApi, repo: Path) -> None:
    """Esc at the first of two asks: no second dialog, no request until the user speaks, and
    the next request tells the model the call never ran and the user stopped the turn."""
    api.add(TWO_CALLS, text_reply("what now?"))
    app = make_app(repo)
    asked: list[object] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "make two files")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        asked.append(app.screen)
        block = next(b for b in app.query(ToolBlock) if b.tool_name == "Bash")
        await wait_for(pilot, lambda: "waiting for permission" in widget_text(app, block))
        await pilot.press("escape")
        await wait_idle(pilot)
        for _ in range(10):  # a second dialog would show within these
            await pilot.pause(0.02)
            if isinstance(app.screen, PermissionScreen) and app.screen not in asked:
                asked.append(app.screen)
        assert len(asked) == 1
        assert len(api.requests) == 1
        shown = screen_text(app)
        assert block.status == "error" and "interrupted" in widget_text(app, block)
        assert "running…" not in shown and "Waiting for permission" not in shown
        assert "Interrupted" in shown
        await submit(pilot, "never mind")
        await wait_idle(pilot)
        assert "what now?" in screen_text(app)
    assert len(api.requests) == 2
    sent = api.requests[-1].all_text()
    assert STOPPED_AT_PROMPT in sent and INTERRUPTED_BY_USER in sent
    assert not (repo / "one").exists() and not (repo / "two").exists()


async def test_an_approved_call_shows_it_runs(api: FakeApi, repo: Path) -> None:
    """After yes, the block and the status line say the call runs, with its time."""
    api.add(
        tool_reply(("Bash", {"command": "sleep 2 && touch waited", "description": "wait"})),
        text_reply("ok"),
    )
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "wait a bit")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("y")
        block = next(b for b in app.query(ToolBlock) if b.tool_name == "Bash")
        await wait_for(pilot, lambda: block.status == "running")
        block.started -= 5  # as if it had run for five seconds (a tick redraws it each 0.5 s)
        block.refresh_content()
        await pilot.pause()
        assert "running… 5s" in widget_text(app, block)
        status = app.query_one(StatusLine)
        assert "Running" in widget_text(app, status) and "Waiting" not in screen_text(app)
        await wait_idle(pilot)
        assert block.status == "done"


async def test_bash_ask_shows_the_command(api: FakeApi, repo: Path) -> None:
    api.add(
        tool_reply(("Bash", {"command": "touch made-by-bash", "description": "make a file"})),
        text_reply("ok"),
    )
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "make a file")
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await wait_for(pilot, lambda: "$ touch made-by-bash" in screen_text(app))
        await pilot.press("y")
        await wait_idle(pilot)
    assert (repo / "made-by-bash").exists()


async def test_esc_on_the_main_screen_while_asked_withdraws_nothing_else(
    api: FakeApi, repo: Path
) -> None:
    """An interrupt while the modal is open (ctrl+c) closes it and answers the call."""
    script(api)
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_until_asked(pilot, app)
        app.action_interrupt()
        await wait_idle(pilot)
        await wait_for(pilot, lambda: not isinstance(app.screen, PermissionScreen))
    assert (repo / "src" / "app.py").read_text().startswith("RETRY_LIMIT = 3")


async def test_every_answer_shows_at_80x24(api: FakeApi, repo: Path) -> None:
    script(api)
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await run_until_asked(pilot, app)
        shown = screen_words(app)
        for choice in ("1. Yes, allow once (y)", "(a)", "3. No, deny (n)"):
            assert choice in shown, screen_text(app)
        assert "@@ -1,4 +1,4 @@" in shown  # the real place, 3 lines after
        assert "Edit src/app.py" in shown and "+++ " not in shown  # the title names the file
        assert "def main():" in shown and "always allow Edit(src/app.py)" in shown
        assert str(repo) not in shown  # paths as the user reads them: relative


async def test_the_keyboard_scrolls_the_preview_at_60x16(api: FakeApi, repo: Path) -> None:
    script(api)
    app = make_app(repo)
    async with app.run_test(size=(60, 16)) as pilot:
        screen = await run_until_asked(pilot, app)
        preview = screen.query_one("#permission-preview")
        await wait_for(pilot, lambda: "PgUp/PgDn to scroll" in screen_text(app))
        assert "@@ -1,4 +1,4 @@" in screen_text(app) and "def main():" not in screen_text(app)
        for choice in ("(y)", "(a)", "3. No, deny (n)"):
            assert choice in screen_words(app)
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: "def main():" in screen_text(app))
        assert preview.scroll_y > 0
        await pilot.press("pageup")
        await wait_for(pilot, lambda: "@@ -1,4 +1,4 @@" in screen_text(app))
        await pilot.press("shift+down")
        await wait_for(pilot, lambda: preview.scroll_y == 1)
        assert isinstance(app.screen, PermissionScreen)  # scrolling answers nothing
        await pilot.press("n")
        await wait_idle(pilot)
    assert (repo / "src" / "app.py").read_text().startswith("RETRY_LIMIT = 3")


async def test_always_allow_names_the_edited_file(api: FakeApi, repo: Path) -> None:
    script(api)
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_until_asked(pilot, app)
        await pilot.press("a")
        await wait_idle(pilot)
    settings = json.loads((repo / ".claude" / "settings.local.json").read_text())
    (rule,) = settings["permissions"]["allow"]
    assert str(repo / "src" / "app.py") in rule, rule


def test_previews() -> None:
    diff = edit_diff(EDIT[1])
    assert (
        "--- a/src/app.py" in diff and "-RETRY_LIMIT = 3\n" in diff and "+RETRY_LIMIT = 5\n" in diff
    )
    write = permission_preview(
        "Write", {"file_path": "x.py", "content": "\n".join(map(str, range(50)))}
    )
    assert "x.py" in write.plain and "30 more lines" in write.plain
    assert permission_preview("Bash", {"command": "rm -rf build"}).plain.startswith(
        "$ rm -rf build"
    )


def test_the_edit_preview_shows_the_real_place_with_context(tmp_path: Path) -> None:
    lines = [f"line {n}" for n in range(1, 41)]
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("\n".join(lines) + "\n")
    edit = {"file_path": "pkg/m.py", "old_string": "line 20", "new_string": "line twenty"}
    diff = edit_diff(edit, tmp_path)
    assert diff.splitlines()[:3] == ["--- a/pkg/m.py", "+++ b/pkg/m.py", "@@ -17,7 +17,7 @@"]
    assert " line 17" in diff and " line 23" in diff and " line 24" not in diff
    # An edit that would not apply still shows the strings, under the relative name.
    missing = edit_diff({**edit, "old_string": "no such text"}, tmp_path)
    assert missing.startswith("--- a/pkg/m.py") and "-no such text" in missing
    write = permission_preview(
        "Write", {"file_path": str(tmp_path / "n.py"), "content": "x"}, tmp_path
    )
    assert write.plain.startswith("n.py\n")
