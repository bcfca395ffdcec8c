"""The statusLine command in the full-screen app: its first line in the footer, the meter whole."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_lines
from tui.fake_api import FakeApi, text_reply
from tui.fullscreen.widgets.footer import StatusFooter

# Prints what it was given, to show the payload reached it; a second line that must not show.
SCRIPT = """import json, sys
data = json.load(sys.stdin)
print("\\x1b[32mST\\x1b[0m " + data["model"]["id"].removeprefix("claude-") + " " + data["session_id"][:4]
      + " " + data["output_style"]["name"] + " " + sys.argv[1])
print("SECOND-LINE")
"""


def user_settings(tmp_path: Path, status_line: dict[str, object]) -> None:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"statusLine": status_line}))


def status_command(tmp_path: Path, tag: str) -> str:
    script = tmp_path / "status.py"
    script.write_text(SCRIPT)
    return f"{sys.executable} {script} {tag}"


async def test_the_status_line_shows_in_the_footer_and_the_meter_stays_whole(
    api: FakeApi, repo: Path, tmp_path: Path
) -> None:
    user_settings(tmp_path, {"type": "command", "command": status_command(tmp_path, "ok")})
    api.add(text_reply("Hello."))
    app = make_app(repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_idle(pilot)
        footer = app.query_one(StatusFooter)
        await wait_for(pilot, lambda: footer.status_text)
        session = app.bridge.driver.session_id  # type: ignore[union-attr]
        assert footer.status_text.endswith(f" {session[:4]} default ok")
        assert "\x1b[32m" in footer.status_text  # colours are kept for the footer to draw
        await submit(pilot, "hi")
        await wait_idle(pilot)
        lines = await wait_for(
            pilot,
            lambda: (
                (rows := screen_lines(app))
                and any("ST " in row for row in rows)
                and any("until auto-compact" in row for row in rows)
                and rows
            ),
        )
        status = [line for line in lines if "ST " in line]
        assert status and "SECOND-LINE" not in "\n".join(lines)
        (meter,) = [line for line in lines if "until auto-compact" in line]
        assert "%" in meter and "/" in meter and "\x1b" not in meter
        # at 80 columns the whole status does not fit beside the meter: it has its own line
        model = footer.model.split(" · ")[0]  # the footer's label adds the effort level
        assert status[0] != meter and f"ST {model.removeprefix('claude-')}" in status[0]


async def test_a_failing_or_hanging_command_shows_nothing(
    api: FakeApi, repo: Path, tmp_path: Path
) -> None:
    user_settings(tmp_path, {"type": "command", "command": "echo WRONG; exit 1"})
    app = make_app(repo)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_idle(pilot)
        await pilot.pause(0.5)
        assert app.query_one(StatusFooter).status_text == ""
        assert "WRONG" not in "\n".join(screen_lines(app))


async def test_a_project_status_line_needs_a_trusted_folder(
    api: FakeApi, repo: Path, tmp_path: Path
) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    marker = tmp_path / "ran.txt"
    settings.write_text(
        json.dumps({"statusLine": {"type": "command", "command": f"touch {marker}; echo HI"}})
    )
    app = make_app(repo)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_for(pilot, lambda: "status line command" in "\n".join(screen_lines(app)))
        await pilot.press("n")  # continue without the project's settings
        await wait_idle(pilot)
        await pilot.pause(0.5)
        assert app.query_one(StatusFooter).status_text == ""
    assert not marker.exists()
