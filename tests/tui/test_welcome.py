"""The welcome header, ctrl+c twice to quit, and the resume line printed on exit."""

from __future__ import annotations

from pathlib import Path

from agent import __version__
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_lines, screen_text, screen_words
from tui.demo.tour import BANNER, demo_options
from tui.fake_api import FakeApi, text_reply
from tui.fullscreen.widgets.welcome import home_relative


async def test_the_header_is_in_the_first_paint_and_names_version_model_and_folder(
    api: FakeApi, repo: Path
) -> None:
    app = make_app(repo, model="claude-sonnet-4-5")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        first = screen_text(app)  # before the runtime is ready
        assert f"ccx {__version__}" in first and "claude-sonnet-4-5" in first
        assert str(repo) in "".join(first.replace("█", "").split())  # wrapped at 80 columns
        assert "/help for commands" in first
        assert all(len(line) <= 80 for line in screen_lines(app))
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "/clear")
        await wait_idle(pilot)
        assert f"ccx {__version__}" in screen_text(app)  # the header stays


async def test_the_demo_header_carries_its_banner(api: FakeApi, repo: Path) -> None:
    from tui.fullscreen.app import CcxApp

    app = CcxApp(demo_options(repo))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert BANNER in screen_words(app)


def test_home_is_written_as_a_tilde(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path))
    assert home_relative(tmp_path / "src" / "x") == "~/src/x"
    assert home_relative(Path("/elsewhere")) == "/elsewhere"
    assert home_relative(Path(str(tmp_path) + "-other")) == str(tmp_path) + "-other"


async def test_ctrl_c_twice_on_an_empty_prompt_quits_and_the_resume_line_is_ready(
    api: FakeApi, repo: Path
) -> None:
    api.add(text_reply("Hello."))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "hi")
        await wait_idle(pilot)
        await pilot.press("x", "ctrl+c")  # clears the prompt, does not quit
        await pilot.press("ctrl+c")  # the first press on an empty prompt only warns
        await wait_for(pilot, lambda: "again to quit" in screen_words(app))
        assert app.is_running
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0
    session = app.session_id
    assert session and app.resume_hint() == f"Resume with: ccx -r {session}"


async def test_no_resume_line_when_nothing_was_said_or_in_the_demo(
    api: FakeApi, repo: Path
) -> None:
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("ctrl+d")
    assert app.resume_hint() is None
    api.add(text_reply("Hello."))
    from tui.fullscreen.app import CcxApp

    demo = CcxApp(demo_options(repo))
    async with demo.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: demo.ready)
        await submit(pilot, "hi")
        await wait_idle(pilot)
        await pilot.press("ctrl+d")
    assert demo.resume_hint() is None


async def test_help_lists_resume_and_wraps_beside_the_usage_at_80_columns(
    api: FakeApi, repo: Path
) -> None:
    app = make_app(repo)
    async with app.run_test(size=(80, 70)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "/help")
        await wait_for(pilot, lambda: "/resume [id]" in screen_text(app))
        lines = screen_lines(app)
        row = next(i for i, line in enumerate(lines) if line.lstrip().startswith("/undo-compact"))
        column = lines[row].index("Bring back")
        assert lines[row + 1].index("last compaction") == column  # wrapped beside, not at 0
        assert "/exit" in screen_text(app)


async def test_the_demo_footer_shows_no_dollars(repo: Path, tmp_path: Path) -> None:
    from tui.demo.tour import demo_session
    from tui.fullscreen.app import CcxApp
    from tui.fullscreen.widgets.footer import StatusFooter

    with demo_session(tmp_path / "demo", pace=0) as session:
        app = CcxApp(session.options, "hello")
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.ready and app.running is None, timeout=30)
            await pilot.pause()
            footer = app.query_one(StatusFooter)
            assert footer.cost_usd == 0 and "$" not in screen_lines(app)[-1]
