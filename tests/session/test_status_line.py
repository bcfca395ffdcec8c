"""The statusLine command: the setting checked, the command run for real with its payload."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from tests.fake_env import use_fake_api
from tui.fake_api import FakeApi
from tui.session.driver import SessionDriver
from tui.session.options import RunOptions
from tui.session.status_line import (
    StatusLineConfig,
    display_name,
    first_line,
    run_status_command,
    status_line_config,
)


@pytest.mark.parametrize(
    ("value", "command", "problem"),
    [
        (None, None, None),
        ({"type": "command", "command": "echo hi", "padding": 2}, "echo hi", None),
        ({"command": "  echo hi  "}, "echo hi", None),
        ({"type": "static", "text": "x"}, None, "statusLine must be"),
        ("echo hi", None, "statusLine must be"),
        ({"type": "command"}, None, "no command"),
        ({"type": "command", "command": 3}, None, "no command"),
    ],
)
def test_the_setting(value: object, command: str | None, problem: str | None) -> None:
    config, why = status_line_config(value)
    assert (config.command if config else None) == command
    assert (problem in why) if problem else why is None


def test_first_line_and_display_name() -> None:
    assert first_line(b"\n  \n\x1b[1mbold\x1b[0m  \nsecond\n") == "\x1b[1mbold\x1b[0m"
    assert first_line(b"\xff\xfe") == "\ufffd\ufffd"
    assert first_line(b"") == ""
    assert display_name("claude-sonnet-4-5") == "Sonnet 4.5"
    assert display_name("claude-opus-4-1-20250805") == "Opus 4.1"
    assert display_name("my-gateway/model") == "My"  # best effort on names it does not know


def test_the_command_reads_the_payload_and_its_first_line_is_the_text(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text(
        "import json, os, sys\n"
        "d = json.load(sys.stdin)\n"
        "print(d['model']['id'], os.getcwd(), os.environ['CLAUDE_PROJECT_DIR'])\n"
        "print('more')\n"
    )
    config = StatusLineConfig(f"{sys.executable} {script}")
    text = asyncio.run(run_status_command(config, {"model": {"id": "m1"}}, tmp_path))
    assert text == f"m1 {tmp_path} {tmp_path}"


@pytest.mark.parametrize("command", ["echo nope; exit 1", "true", "/no/such/program"])
def test_a_failing_or_silent_command_gives_nothing(command: str, tmp_path: Path) -> None:
    assert asyncio.run(run_status_command(StatusLineConfig(command), {}, tmp_path)) is None


def test_a_hanging_command_is_killed_at_the_timeout(tmp_path: Path) -> None:
    marker = tmp_path / "late.txt"
    config = StatusLineConfig(f"sleep 5; touch {marker}; echo late")
    started = time.monotonic()
    assert asyncio.run(run_status_command(config, {}, tmp_path, timeout=0.3)) is None
    assert time.monotonic() - started < 3
    time.sleep(0.2)
    assert not marker.exists()


def test_a_command_that_ignores_a_large_payload_still_shows(tmp_path: Path) -> None:
    payload = {"blob": "x" * 2_000_000}
    text = asyncio.run(run_status_command(StatusLineConfig("echo ok"), payload, tmp_path))
    assert text == "ok"
    assert json.dumps(payload)  # the payload itself is plain JSON


async def test_a_sessions_status_line_setting_runs_its_command(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The runner's module is imported only when the setting is there (tui.session.driver).
    settings = {"statusLine": {"type": "command", "command": "echo on the line"}}
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.local.json").write_text(json.dumps(settings))
    with FakeApi([]) as api:
        use_fake_api(api, tmp_path, monkeypatch)
        driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), lambda _event: None)
        bare = SessionDriver(RunOptions(cwd=tmp_path, watch_files=False), lambda _event: None)
        try:
            shown = asyncio.Event()
            driver.refresh_status_line(lambda text: shown.set())
            await asyncio.wait_for(shown.wait(), 15)
            assert driver.status_line_text == "on the line"
            bare.refresh_status_line(lambda text: shown.set())
            assert bare.status_line_text is None
        finally:
            await driver.aclose()
            await bare.aclose()
