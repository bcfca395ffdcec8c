"""The app's start in tmux at 80x24 when its session starts before the first frame is drawn:
the arguments parsed on the session's thread still reach the app (a prompt given as an
argument is sent; a usage error is printed once the terminal is back)."""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.tui.test_terminal import CCX, Terminal, ccx_in_clean_env, pytestmark, terminal  # noqa: F401
from tui.fake_api import FakeApi, text_reply


def launch(terminal: Terminal, repo: Path, args: list[str]) -> None:  # noqa: F811
    line = " ".join(shlex.quote(a) for a in args)
    command = f"{ccx_in_clean_env()} {line}; echo exit=$?; sleep 30"
    terminal.tmux(
        "new-session", "-d", "-s", "ccx", "-x", "80", "-y", "24", "-c", str(repo),
        "sh", "-c", command,
    )  # fmt: skip


def test_a_prompt_given_as_an_argument_is_sent_and_answered(
    terminal: Terminal,  # noqa: F811
    api: FakeApi,
    repo: Path,
) -> None:
    assert CCX.exists(), f"{CCX} is missing; install the project (pip install -e .)"
    api.add(text_reply("Hello from the start."))
    launch(terminal, repo, ["say hello"])
    screen = terminal.wait(lambda s: "Hello from the start." in s)
    assert "say hello" in screen and "% until auto-compact" in screen
    assert [r.last_user_text() for r in api.requests] == ["say hello"]


def test_a_usage_error_is_printed_after_the_app_has_closed(
    terminal: Terminal,  # noqa: F811
    api: FakeApi,
    repo: Path,
) -> None:
    launch(terminal, repo, ["--max-turns", "sideways"])
    screen = terminal.wait(lambda s: "exit=" in s)
    assert "exit=2" in screen and "Invalid value for '--max-turns'" in screen
    assert api.requests == []
