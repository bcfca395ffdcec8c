"""A session in the app: prompt -> tools -> answer, errors, queueing, quitting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

from tests.tui.conftest import make_app, submit, wait_for, wait_idle, whole_transcript_shown
from tests.tui.screen import screen_strips, screen_text, widget_text
from tui.fake_api import Drop, FakeApi, Fault, text_reply, tool_reply
from tui.fullscreen.app import CcxApp
from tui.fullscreen.screens.plan_approval import PlanApprovalScreen
from tui.fullscreen.widgets.footer import ContextMeter, StatusFooter
from tui.fullscreen.widgets.prompt_box import PromptInput
from tui.fullscreen.widgets.reply import StreamingReply
from tui.fullscreen.widgets.status_line import StatusLine
from tui.fullscreen.widgets.tool_block import ToolBlock
from tui.fullscreen.widgets.warning_bar import WarningBar


async def test_prompt_tools_then_the_answer(api: FakeApi, repo: Path) -> None:
    api.add(
        tool_reply(("Read", {"file_path": "src/app.py"}), text="Let me look."),
        tool_reply(("Bash", {"command": "echo hello-from-bash"})),
        text_reply("The retry limit is **3**."),
    )
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "what is the retry limit?")
        await wait_idle(pilot)
        text = screen_text(app)
        assert "> what is the retry limit?" in text
        assert "Let me look." in text and "The retry limit is 3." in text  # Markdown, rendered
        assert bold_cells(app, "3.") == ["3"]
        read, bash = app.query(ToolBlock)
        assert read.status == "done" and "Read src/app.py" in widget_text(app, read)
        assert "Read 5 lines" in widget_text(app, read)
        assert bash.status == "done" and "hello-from-bash" in widget_text(app, bash)
        meter = widget_text(app, app.query_one(ContextMeter))
        assert "% until auto-compact" in meter and " / " in meter
    assert api.errors == []
    assert "RETRY_LIMIT = 3" in api.requests[1].all_text()


def bold_cells(app: CcxApp, ending: str) -> list[str]:
    """The bold runs of text on the row whose text ends with ``ending``."""
    (row,) = [s for s in screen_strips(app) if s.text.rstrip().endswith(ending)]
    return [seg.text for seg in row if seg.style is not None and seg.style.bold]


async def test_api_error_is_a_red_line_and_the_session_goes_on(api: FakeApi, repo: Path) -> None:
    api.add(Fault(400, message="bad thing happened"), text_reply("recovered"))
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "first")
        await wait_idle(pilot)
        assert "Error: " in screen_text(app) and "bad thing happened" in screen_text(app)
        await submit(pilot, "second")
        await wait_idle(pilot)
        assert "recovered" in screen_text(app)


async def test_unknown_resume_id_starts_a_new_session_with_a_red_line(
    api: FakeApi, repo: Path
) -> None:
    api.add(text_reply("hello there"))
    app = make_app(repo, resume="no-such-session")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: "No session with id 'no-such-session'" in screen_text(app))
        await submit(pilot, "hi")
        await wait_idle(pilot)
        assert "hello there" in screen_text(app)


async def test_initial_prompt_is_submitted_at_start(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("answer to the first prompt"))
    app = make_app(repo, prompt="from the command line")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: "answer to the first prompt" in screen_text(app))
    assert api.requests[-1].last_user_text().startswith("from the command line")


async def test_ctrl_d_on_an_empty_prompt_quits_with_0(api: FakeApi, repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("x", "ctrl+d")  # not empty: deletes forward, stays
        await pilot.pause()
        assert app.is_running
        await pilot.press("backspace", "ctrl+d")
        await pilot.pause()
    assert app.return_code == 0


async def test_exit_command_quits_with_0(api: FakeApi, repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "/exit")
        await pilot.pause()
    assert app.return_code == 0


async def test_shift_tab_cycles_the_permission_mode(api: FakeApi, repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        footer = app.query_one(StatusFooter)
        seen = []
        for _ in range(3):
            await pilot.press("shift+tab")
            await wait_for(pilot, lambda: app.bridge.driver.mode == footer.mode)  # type: ignore[union-attr]
            seen.append(footer.mode)
        assert seen == ["acceptEdits", "plan", "default"]
        await pilot.press("shift+tab")
        await pilot.pause()
        assert "accept edits" in widget_text(app, app.query_one("#footer-mode", Static))


async def test_plan_command_shows_in_the_footer(api: FakeApi, repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(120, 50)) as pilot:  # /help's list, /compact included
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "/plan")
        await wait_idle(pilot)
        assert app.query_one(StatusFooter).mode == "plan"
        assert "Plan mode on" in screen_text(app)
        for command, expected in (
            ("/help", "/compact"),
            ("/cost", "Total cost"),
            ("/model opus", "Model set to"),
        ):
            await submit(pilot, command)
            await wait_idle(pilot)
            assert expected in screen_text(app), command


async def test_clear_empties_the_transcript(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("something to forget"))
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "hi")
        await wait_idle(pilot)
        first = app.session_id
        await submit(pilot, "/clear")
        await wait_idle(pilot)
        whole_transcript_shown(app)
        text = screen_text(app)
        assert "something to forget" not in text and "Cleared. New session" in text
        driver = app.bridge.driver
        assert driver is not None and list(driver.messages) == [] and driver.session_id != first


async def test_completion_and_history(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("one"))
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        prompt = app.query_one(PromptInput)
        await pilot.press("/", "c", "o", "n")
        await pilot.pause()
        hints = widget_text(app, app.query_one("#prompt-hints", Static))
        assert "/context" in hints and "/compact" not in hints
        await pilot.press("tab")
        assert prompt.text == "/context"
        await pilot.press("ctrl+u")  # clear the line
        prompt.text = ""
        await pilot.press("/", "c")
        await pilot.pause()
        assert {"/compact", "/context", "/clear", "/cost"} <= set(
            widget_text(app, app.query_one("#prompt-hints", Static)).split()
        )
        await pilot.press("tab", "tab")
        first, second = prompt.matches[0][0], prompt.matches[1][0]
        assert prompt.text == f"/{second}" and first != second
        prompt.text = ""
        await pilot.press("h", "i", "shift+enter", "t", "h", "e", "r", "e")
        assert prompt.text == "hi\nthere"
        await pilot.press("ctrl+j")
        assert prompt.text.count("\n") == 2
        await pilot.press("backspace", "enter")
        await wait_idle(pilot)
        assert prompt.text == ""
        await pilot.press("up")
        assert prompt.text == "hi\nthere"
        await pilot.press("down", "down")
        assert prompt.text == ""


async def test_retries_show_as_a_status_and_the_answer_arrives(api: FakeApi, repo: Path) -> None:
    api.add(Fault(529), Fault(529), text_reply("after the retries"))
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "hi")
        await wait_idle(pilot)
        whole_transcript_shown(app)
        text = screen_text(app)
        assert "after the retries" in text and "Error:" not in text


async def test_a_retry_names_its_cause_and_counts_down(api: FakeApi, repo: Path) -> None:
    api.add(Fault(529, retry_after=2), text_reply("after the wait"))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "hi")
        status = app.query_one(StatusLine)
        await wait_for(pilot, lambda: "retrying in 2s" in widget_text(app, status))
        assert "The API is overloaded (529)" in widget_text(app, status)
        await wait_for(pilot, lambda: "retrying in 1s" in widget_text(app, status))
        await wait_idle(pilot)
        assert "after the wait" in screen_text(app)


async def test_the_warning_bar_appears_as_the_context_fills(api: FakeApi, repo: Path) -> None:
    (repo / "big.py").write_text("value = 1.0\n" * 3_000)
    api.add(tool_reply(("Read", {"file_path": "big.py"})), text_reply("read it"))
    app = make_app(repo, autocompact="30000")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        bar = app.query_one(WarningBar)
        assert not bar.has_class("-shown")
        await submit(pilot, "read big.py")
        await wait_idle(pilot)
        state = app.query_one(StatusFooter).state
        assert state is not None and state.level != "ok", state
        assert bar.has_class("-shown") and "/compact" in widget_text(app, bar)


async def test_plan_approval_modal_approves_and_leaves_plan_mode(api: FakeApi, repo: Path) -> None:
    api.add(
        tool_reply(("ExitPlanMode", {"plan": "1. Raise RETRY_LIMIT to 5\\n2. Run the tests"})),
        text_reply("Plan approved; starting."),
    )
    app = make_app(repo, permission_mode="plan")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert app.query_one(StatusFooter).mode == "plan"
        await submit(pilot, "plan the change")
        await wait_for(pilot, lambda: isinstance(app.screen, PlanApprovalScreen))
        await pilot.press("y")
        await wait_idle(pilot)
        assert app.query_one(StatusFooter).mode == "default"
        assert "Plan approved; starting." in screen_text(app)
    assert api.errors == []


async def test_text_of_a_retried_response_is_not_shown_twice(api: FakeApi, repo: Path) -> None:
    api.add(Drop(after_events=6), text_reply("The whole answer, once."))
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "hi")
        await wait_idle(pilot)
        whole_transcript_shown(app)
        text = screen_text(app)
        assert "The whole answer, once." in text
        assert "This answer" not in text  # the dropped attempt's partial text
        assert len(app.query(StreamingReply)) == 1


async def test_bare_model_opens_a_picker_that_switches_model_and_effort(
    api: FakeApi, repo: Path
) -> None:
    """/model alone: a picker on the current model; Down, Right, Enter switch to the next
    model with a higher effort, through the /model command (the footer says so); Esc
    leaves the model as it was."""
    from tui.fullscreen.screens.model_picker import ModelPicker

    app = make_app(repo, model="claude-opus-5-5")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.ready and app.status is not None)
        await submit(pilot, "/model")
        picker = await wait_for(
            pilot, lambda: app.screen if isinstance(app.screen, ModelPicker) else None
        )
        assert picker.chosen().name == "default" and "medium" in screen_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ModelPicker))
        assert app.query_one(StatusFooter).model == "claude-opus-5-5 · medium"

        await submit(pilot, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPicker))
        await pilot.press("down", "down", "right", "enter")  # Sonnet, high
        await wait_idle(pilot)
        await wait_for(pilot, lambda: "Model set to" in screen_text(app))
        footer = app.query_one(StatusFooter)
        await wait_for(pilot, lambda: footer.model == "claude-sonnet-5-5 · high")


async def test_the_theme_setting_colours_the_app_and_its_code_blocks(
    api: FakeApi, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``"theme": "light"`` in the user's settings: the light theme from the first frame, and
    replies' code blocks in a light code theme (a dark one stripes a light terminal); an
    unknown value keeps the dark theme and says so."""
    from tui.fullscreen.widgets.reply import CODE_THEME

    config = tmp_path / "theme-config"
    config.mkdir()
    monkeypatch.setenv("CCX_CONFIG_DIR", str(config))
    (config / "settings.json").write_text(json.dumps({"theme": "light"}))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == "textual-light" and not app.current_theme.dark
        assert CODE_THEME["name"] == "default"
        await wait_for(pilot, lambda: app.ready)

    (config / "settings.json").write_text(json.dumps({"theme": "sepia"}))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == "textual-dark" and CODE_THEME["name"] == "monokai"
        await wait_for(pilot, lambda: "'sepia'" in screen_text(app))


async def test_the_first_frame_shows_the_model_the_session_starts_with(
    api: FakeApi, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settings' model and effort are in the footer from the first frame: it never shows
    the default first and then the session's (and the welcome names the same model)."""
    config = tmp_path / "model-config"
    config.mkdir()
    monkeypatch.setenv("CCX_CONFIG_DIR", str(config))
    (config / "settings.json").write_text(json.dumps({"model": "sonnet", "effortLevel": "high"}))
    app = make_app(repo)
    async with app.run_test(size=(100, 30)) as pilot:
        footer = app.query_one(StatusFooter)
        assert footer.model == "claude-sonnet-5-5 · high"  # before the session is up
        assert "claude-sonnet-5-5" in screen_text(app)
        await wait_for(pilot, lambda: app.ready and app.status is not None)
        assert footer.model == "claude-sonnet-5-5 · high"  # and the session agrees
