"""Reading and copying with real keys in tmux at 80x24: a 300-line output collapsed with its
count, ctrl+o expanding it, and /copy reaching the terminal's clipboard (tmux keeps what an
application copies with OSC 52 as a paste buffer when set-clipboard is on)."""

from __future__ import annotations

from pathlib import Path

from tests.tui.test_terminal import CCX, Terminal, ccx_in_clean_env, pytestmark, terminal  # noqa: F401
from tui.fake_api import FakeApi, text_reply, tool_reply


def launch(terminal: Terminal, repo: Path) -> None:  # noqa: F811
    command = f"{ccx_in_clean_env()}; sleep 30"
    terminal.tmux(
        "new-session", "-d", "-s", "ccx", "-x", "80", "-y", "24", "-c", str(repo),
        "sh", "-c", command,
    )  # fmt: skip
    terminal.tmux("set-option", "-g", "set-clipboard", "on")


def test_a_long_output_expands_with_ctrl_o_and_copy_reaches_the_clipboard(
    terminal: Terminal,  # noqa: F811
    api: FakeApi,
    repo: Path,
) -> None:
    assert CCX.exists(), f"{CCX} is missing; install the project (pip install -e .)"
    api.add(tool_reply(("Bash", {"command": "seq 1 300"})), text_reply("Counted to 300."))
    launch(terminal, repo)
    terminal.wait(lambda s: "% until auto-compact" in s, timeout=30)

    terminal.type("count to 300")
    terminal.keys("Enter")
    screen = terminal.wait(lambda s: "Counted to 300." in s)
    assert "… +295 lines (ctrl+o to expand)" in screen
    rows = [row.strip() for row in screen.splitlines()]
    assert "300" in rows and "1" not in rows

    terminal.keys("C-o")
    screen = terminal.wait(lambda s: "(ctrl+o to collapse)" in s)
    rows = [row[:70].strip() for row in screen.splitlines()]  # (the scrollbar on the right)
    label = next(i for i, row in enumerate(rows) if "(ctrl+o to collapse)" in row)
    assert rows[label + 1 : label + 4] == ["1", "2", "3"]  # read from its first line down
    assert "+295 lines" not in screen

    terminal.type("/copy")
    terminal.keys("Enter")
    terminal.wait(lambda s: "Copied the last reply to the clipboard" in s)
    assert terminal.tmux("show-buffer") == "Counted to 300."
    assert api.errors == []
