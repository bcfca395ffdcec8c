"""The real `ccx` command in a real terminal (tmux) at 80x24: a task, /compact, ctrl+d to quit.

What is checked is what tmux shows: the header, the whole meter, the tool and
compaction lines within 80 columns, and the resume line left after the exit.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from tui.fake_api import FakeApi, text_reply, tool_reply

CCX = Path(sys.executable).with_name("ccx")
TMUX = shutil.which("tmux")

pytestmark = [
    pytest.mark.e2e,  # the real `ccx` command, in tmux
    pytest.mark.skipif(
        TMUX is None, reason="tmux is not installed, so there is no real terminal to drive"
    ),
]


class Terminal:
    """A tmux server of our own (its own socket), one window 80x24."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "ccx")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "ccx", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "ccx", "-l", text)

    def wait(self, condition: Callable[[str], bool], timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if condition(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; the screen shows:\n{screen}")
            time.sleep(0.1)


def ccx_in_clean_env() -> str:
    """The shell command that starts `ccx` with only what a test session needs: the fake
    API, a test key, the test's config folder and home, a terminal type and PATH."""
    env = {
        "ANTHROPIC_BASE_URL": os.environ["ANTHROPIC_BASE_URL"],
        "ANTHROPIC_API_KEY": "test-key",
        "CCX_CONFIG_DIR": os.environ["CCX_CONFIG_DIR"],
        "HOME": os.environ["HOME"],
        "TERM": "xterm-256color",
        "PATH": os.environ.get("PATH", ""),
    }
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    return f"env -i {assignments} {shlex.quote(str(CCX))}"


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(f"ccx-test-{os.getpid()}-{tmp_path.name}")
    yield term
    term.tmux("kill-server")


def test_task_compact_and_quit_in_tmux(
    terminal: Terminal, api: FakeApi, repo: Path, tmp_path: Path
) -> None:
    assert CCX.exists(), f"{CCX} is missing; install the project (pip install -e .)"
    api.add(
        tool_reply(("Read", {"file_path": "src/app.py"})),
        text_reply("The retry limit is 3, set in src/app.py."),
    )
    api.on(
        lambda r: SUMMARY_MARK in r.last_user_text(),
        text_reply("<analysis>notes</analysis><summary>RETRY_LIMIT is 3.</summary>"),
    )
    exit_file = tmp_path / "exit-code"
    command = (
        f"{ccx_in_clean_env()}; echo $? > {shlex.quote(str(exit_file))}; "
        "sleep 30"  # keep the pane, so the line printed after the exit can be read
    )
    terminal.tmux(
        "new-session",
        "-d",
        "-s",
        "ccx",
        "-x",
        "80",
        "-y",
        "24",
        "-c",
        str(repo),
        "sh",
        "-c",
        command,
    )
    screen = terminal.wait(lambda s: "% until auto-compact" in s, timeout=30)
    assert "ccx 0.1.0" in screen and "/help for commands" in screen

    terminal.type("what is the retry limit?")
    terminal.keys("Enter")
    screen = terminal.wait(lambda s: "The retry limit is 3" in s)
    assert "Read src/app.py" in screen

    terminal.type("/compact")
    terminal.keys("Enter")
    screen = terminal.wait(lambda s: "Compacted (manual)" in s)
    assert "% until auto-compact" in screen and "restored files" in screen
    assert all(len(line) <= 80 for line in screen.splitlines())
    assert screen.rstrip().splitlines()[-1].rstrip().endswith("until auto-compact")

    terminal.keys("C-d")
    deadline = time.monotonic() + 15
    while not exit_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert exit_file.read_text().strip() == "0"
    screen = terminal.wait(lambda s: "Resume with: ccx -r " in s, timeout=5)
    assert api.errors == []
