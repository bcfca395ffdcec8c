"""Esc Esc in a real terminal (tmux at 80x24): two Esc keys as a person presses them open
the rewind picker on an idle, empty prompt, and Enter rewinds; what tmux shows is checked."""

from __future__ import annotations

import time
from pathlib import Path

from tests.tui.test_terminal import CCX, Terminal, ccx_in_clean_env, pytestmark, terminal  # noqa: F401
from tui.fake_api import FakeApi, text_reply


def test_esc_esc_rewinds_in_tmux(terminal: Terminal, api: FakeApi, repo: Path) -> None:  # noqa: F811
    assert CCX.exists(), f"{CCX} is missing; install the project (pip install -e .)"
    api.add(text_reply("Hello there."), text_reply("The second answer."))
    terminal.tmux(
        "new-session", "-d", "-s", "ccx", "-x", "80", "-y", "24", "-c", str(repo),
        "sh", "-c", f"{ccx_in_clean_env()}; sleep 30",
    )  # fmt: skip
    terminal.wait(lambda s: "% until auto-compact" in s)
    for prompt, answer in (("say hello", "Hello there."), ("ask again", "The second answer.")):
        terminal.type(prompt)
        terminal.keys("Enter")
        terminal.wait(lambda s, answer=answer: answer in s)
    time.sleep(0.3)
    terminal.keys("Escape")
    time.sleep(0.25)  # a person's two presses, not one escape sequence
    terminal.keys("Escape")
    screen = terminal.wait(lambda s: "Rewind" in s and "1. ask again" in s)
    assert screen.index("1. ask again") < screen.index("2. say hello")
    assert all(len(line) <= 80 for line in screen.splitlines())
    terminal.keys("Enter")
    screen = terminal.wait(lambda s: "Rewound to before" in s)
    assert "The second answer." not in screen and "Hello there." in screen
    assert "│ ask again" in screen  # the prompt's text back in the input box
    assert screen.rstrip().splitlines()[-1].rstrip().endswith("until auto-compact")
