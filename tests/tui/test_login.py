"""/login in the full-screen app: a masked field; a bad key keeps the dialog open with the
reason; a good one is stored 0600 and used from the next request; Esc cancels."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agent.model.stored_key import stored_key_path
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text
from tui.fake_api import FakeApi, text_reply
from tui.fullscreen.screens.login import LoginScreen

KEY = "sk-ant-api03-" + "Z" * 40


def credential(headers: dict[str, str]) -> str | None:
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


async def test_login_is_masked_checked_stored_and_used(
    api: FakeApi, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ccx-local-endpoint")  # no real key: a local stand-in
    api.add(text_reply("hi there"))
    app = make_app(repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "/login")
        await wait_for(pilot, lambda: isinstance(app.screen, LoginScreen))
        await pilot.press(*"sk-nope")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Not stored:" in screen_text(app))
        assert "sk-nope" not in screen_text(app)  # masked
        assert isinstance(app.screen, LoginScreen) and not stored_key_path().exists()
        await pilot.press(*["backspace"] * 7)
        await pilot.press(*KEY)
        assert KEY not in screen_text(app)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "API key stored in" in screen_text(app))
        assert not isinstance(app.screen, LoginScreen)
        await submit(pilot, "hello")
        await wait_idle(pilot)
    assert credential(api.requests[-1].headers) == KEY
    assert stat.S_IMODE(stored_key_path().stat().st_mode) == 0o600
    assert api.errors == []


async def test_escape_cancels_and_stores_nothing(api: FakeApi, repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await submit(pilot, "/login")
        await wait_for(pilot, lambda: isinstance(app.screen, LoginScreen))
        await pilot.press(*KEY[:10])
        await pilot.press("escape")
        await wait_for(pilot, lambda: "Login cancelled" in screen_text(app))
    assert not stored_key_path().exists()
