"""Issue 21: what a session does with the settings at start-up and after: notices, refusals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import Event, Notice
from tests.fake_env import use_fake_api
from tui.fake_api import FakeApi
from tui.session.driver import SessionDriver
from tui.session.options import RunOptions


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


def user_settings(tmp_path: Path, data: dict[str, Any]) -> None:
    path = tmp_path / "home" / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def notices(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.text, e.level) for e in events if isinstance(e, Notice)]


async def test_start_up_notices(api: FakeApi, repo: Path, tmp_path: Path) -> None:
    user_settings(
        tmp_path,
        {
            "companyAnnouncements": ["Welcome to Example Corp's setup"],
            "permissions": {"additionalDirectories": ["no/such/folder"]},
            "cleanupPeriodDays": 0,
            "someTypo": True,
        },
    )
    events: list[Event] = []
    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), events.append)
    try:
        said = notices(events)
        assert ("Welcome to Example Corp's setup", "info") in said
        assert any("no/such/folder is not a folder" in text for text, _ in said)
        assert any("Ignoring cleanupPeriodDays 0" in text for text, _ in said)
        typo = [text for text, _ in said if "someTypo" in text]
        assert len(typo) == 1 and "unknown: someTypo" in typo[0]
    finally:
        await driver.aclose()


async def test_bypass_cannot_be_switched_on_when_disabled(
    api: FakeApi, repo: Path, tmp_path: Path
) -> None:
    user_settings(tmp_path, {"permissions": {"disableBypassPermissionsMode": "disable"}})
    events: list[Event] = []
    options = RunOptions(cwd=repo, watch_files=False, permission_mode="bypassPermissions")
    driver = SessionDriver(options, events.append)
    try:
        assert driver.mode == "default"
        assert any("Bypass permissions mode is turned off" in t for t, _ in notices(events))
        with pytest.raises(ValueError, match="turned off by permissions"):
            driver.set_mode("bypassPermissions")
        driver.set_mode("acceptEdits")
        assert driver.mode == "acceptEdits"
    finally:
        await driver.aclose()
