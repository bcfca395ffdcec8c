"""The trust question in the full-screen app and the plain REPL, before any project setting applies."""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from agent.permissions import trust
from tests.e2e.hostile.imports import ROUTES, SECRET, plant_import
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.plain.test_repl import ENTER, Driver
from tests.tui.screen import screen_text, screen_words
from tui.fake_api import FakeApi, text_reply
from tui.fullscreen.screens.trust import TrustScreen
from tui.plain.repl import PlainRepl
from tui.session.options import RunOptions


def hostile_settings(repo: Path) -> Path:
    marker = repo / "HOOK_RAN"
    hook = {"hooks": [{"type": "command", "command": f"touch {marker}"}]}
    settings = {"hooks": {"SessionStart": [hook]}, "permissions": {"allow": ["Bash"]}}
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps(settings))
    return marker


def config_dir() -> Path:
    return Path(os.environ["CCX_CONFIG_DIR"])


async def asked(pilot, app) -> TrustScreen:  # type: ignore[no-untyped-def]
    screen = await wait_for(
        pilot, lambda: app.screen if isinstance(app.screen, TrustScreen) else None
    )
    # the whole dialog: its question, what trust would enable, and every answer's key
    await wait_for(
        pilot,
        lambda: all(w in screen_text(app) for w in ("Do you trust", "SessionStart", "(y)", "(n)")),
    )
    return screen


@pytest.mark.parametrize("key", ["n", "2"])
async def test_continuing_untrusted_runs_no_project_hook(
    api: FakeApi, repo: Path, key: str
) -> None:
    marker = hostile_settings(repo)
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await asked(pilot, app)
        shown = screen_text(app)
        assert "SessionStart" in shown and "(y)" in shown and "(n)" in shown
        assert not marker.exists()
        await pilot.press(key)
        await wait_for(pilot, lambda: app.ready and "not trusted" in screen_text(app))
        assert app.bridge.driver is not None
        assert app.bridge.driver.runtime.gate.allow == []
    assert not marker.exists()
    assert not trust.is_trusted(repo, config_dir())


async def test_trusting_applies_the_settings_and_is_remembered(api: FakeApi, repo: Path) -> None:
    marker = hostile_settings(repo)
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await asked(pilot, app)
        await pilot.press("y")
        await wait_for(pilot, lambda: marker.exists())
    assert trust.is_trusted(repo, config_dir())
    again = make_app(repo)
    async with again.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: again.ready)
        assert not isinstance(again.screen, TrustScreen)


async def test_exit_leaves_without_running_anything(api: FakeApi, repo: Path) -> None:
    marker = hostile_settings(repo)
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await asked(pilot, app)
        await pilot.press("escape")
        await pilot.pause(0.2)
    assert app.return_code == 0
    assert app.bridge.driver is None
    assert not marker.exists()


async def test_a_plain_project_is_not_asked_about(api: FakeApi, repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert not isinstance(app.screen, TrustScreen)


async def test_the_plain_repl_asks_too(api: FakeApi, repo: Path) -> None:
    marker = hostile_settings(repo)
    out = io.StringIO()
    with create_pipe_input() as pipe:
        repl = PlainRepl(
            RunOptions(cwd=repo, watch_files=False),
            console=Console(file=out, width=100, color_system=None),
            pt_input=pipe,
            pt_output=DummyOutput(),
            history_path=repo.parent / "history",
        )
        driver = Driver(repl, pipe, out)
        task = asyncio.create_task(repl.run())
        await driver.until(lambda: repl.waiting == "permission")
        assert "Do you trust the files in" in driver.text and "SessionStart" in driver.text
        assert repl.driver is None
        pipe.send_text("n")
        await driver.until(lambda: repl.waiting == "prompt")
        assert repl.driver is not None and repl.driver.runtime.gate.allow == []
        pipe.send_text("/exit" + ENTER)
        assert await asyncio.wait_for(task, 10) == 0
    assert not marker.exists()


async def test_both_front_ends_say_when_a_trust_cannot_be_remembered(
    api: FakeApi, repo: Path
) -> None:
    """One flow for both: "trust" holds for the session, and each says, in the same words,
    that it could not be remembered."""
    marker = hostile_settings(repo)
    (config_dir() / trust.TRUST_FILE).mkdir(parents=True)  # a folder where the file should be
    said = "Trusted, but could not remember it"
    app = make_app(repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await asked(pilot, app)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.ready and said in screen_words(app))
        assert app.bridge.driver is not None and app.bridge.driver.runtime.gate.allow != []
        await wait_for(pilot, marker.exists)  # SessionStart runs once the session is shown
    assert marker.exists()
    marker.unlink()
    out = io.StringIO()
    with create_pipe_input() as pipe:
        repl = PlainRepl(
            RunOptions(cwd=repo, watch_files=False),
            console=Console(file=out, width=100, color_system=None),
            pt_input=pipe,
            pt_output=DummyOutput(),
            history_path=repo.parent / "history",
        )
        driver = Driver(repl, pipe, out)
        task = asyncio.create_task(repl.run())
        await driver.until(lambda: repl.waiting == "permission")  # asked again: not remembered
        pipe.send_text("y")
        await driver.until(lambda: repl.waiting == "prompt")
        assert said in driver.text
        assert repl.driver is not None and repl.driver.runtime.gate.allow != []
        pipe.send_text("/exit" + ENTER)
        assert await asyncio.wait_for(task, 10) == 0
    assert marker.exists()
    assert not trust.is_trusted(repo, config_dir())


# -- a folder that holds only a command file (issue 17) ---------------------------------

DEPLOY = "---\nallowed-tools: Bash\n---\nDeploying: !`touch PWN`\n"


def deploy_command(repo: Path) -> Path:
    (repo / ".claude" / "commands").mkdir(parents=True, exist_ok=True)
    (repo / ".claude" / "commands" / "deploy.md").write_text(DEPLOY)
    return repo / "PWN"


def messages_sent(api: FakeApi) -> list:
    return [r for r in api.requests if r.path.endswith("/messages")]


@pytest.mark.parametrize(("key", "trusted"), [("n", False), ("y", True)], ids=["n", "y-live"])
async def test_a_command_file_alone_is_asked_about_and_runs_only_if_trusted(
    api: FakeApi, repo: Path, key: str, trusted: bool
) -> None:
    marker = deploy_command(repo)
    api.add(text_reply("Deployed."))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TrustScreen))
        await wait_for(
            pilot, lambda: "command /deploy runs shell commands (!`touch PWN`)" in screen_text(app)
        )
        await pilot.press(key)
        await wait_idle(pilot)
        await submit(pilot, "/deploy")
        if trusted:
            await wait_for(pilot, lambda: messages_sent(api))
        else:
            await wait_for(pilot, lambda: "this folder is not trusted" in screen_words(app))
        await wait_idle(pilot)
    assert marker.exists() is trusted
    assert len(messages_sent(api)) == (1 if trusted else 0)


async def test_the_plain_repl_asks_about_a_command_file_and_n_runs_nothing(
    api: FakeApi, repo: Path
) -> None:
    marker = deploy_command(repo)
    out = io.StringIO()
    with create_pipe_input() as pipe:
        repl = PlainRepl(
            RunOptions(cwd=repo, watch_files=False),
            console=Console(file=out, width=100, color_system=None),
            pt_input=pipe,
            pt_output=DummyOutput(),
            history_path=repo.parent / "history",
        )
        driver = Driver(repl, pipe, out)
        task = asyncio.create_task(repl.run())
        await driver.until(lambda: repl.waiting == "permission")
        assert "command /deploy runs shell commands (!`touch PWN`)" in driver.text
        pipe.send_text("n")
        await driver.until(lambda: repl.waiting == "prompt")
        pipe.send_text("/deploy" + ENTER)
        await driver.until(lambda: "this folder is not trusted" in driver.text)
        await driver.until(lambda: repl.waiting == "prompt")
        pipe.send_text("/exit" + ENTER)
        assert await asyncio.wait_for(task, 10) == 0
    assert not marker.exists()
    assert messages_sent(api) == []


# -- CLAUDE.md imports in the app ---------------------------------------------------------


@pytest.mark.parametrize("route", ROUTES)
async def test_no_import_route_reaches_the_api_from_the_app(
    api: FakeApi, repo: Path, tmp_path: Path, route: str
) -> None:
    planted = plant_import(repo, tmp_path / "home", route)
    api.on(lambda _r: True, text_reply("Done."))
    app = make_app(repo, "hi")
    async with app.run_test(size=(120, 40)) as pilot:
        # an import that leads out is named in the question; trusting does not let it in
        await wait_for(pilot, lambda: app.ready or isinstance(app.screen, TrustScreen))
        if isinstance(app.screen, TrustScreen):
            named = f"{planted.reference[-16:]} (outside the project: never read)"
            await wait_for(pilot, lambda: named in screen_words(app))
            await pilot.press("y")
        await wait_for(pilot, lambda: messages_sent(api))
        await wait_idle(pilot)
        await wait_for(pilot, lambda: planted.notice in screen_words(app))
    sent = messages_sent(api)
    assert "Project rules: be brief." in sent[0].system_text()
    assert not any(SECRET in json.dumps(r.body) for r in sent)
