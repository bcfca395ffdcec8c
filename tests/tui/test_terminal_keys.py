"""New-line keys as a terminal sends them, through the real `ccx` in tmux at 80x24.

Pilot hands the app key names; here the bytes go through Textual's parser
(and ccx's naming of the Enter keys it loses): kitty's and xterm's shift+enter,
Esc then Enter (Alt+Enter), and what tmux itself forwards for S-Enter and M-Enter.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from tests.tui.test_terminal import CCX, Terminal, ccx_in_clean_env, terminal  # noqa: F401  (the fixture)
from tui.fake_api import FakeApi, text_reply

pytestmark = pytest.mark.e2e

SEQUENCES = {
    "kitty shift+enter": ["-H", *(f"{b:02x}" for b in b"\x1b[13;2u")],
    "xterm shift+enter": ["-H", *(f"{b:02x}" for b in b"\x1b[27;2;13~")],
    "esc enter": ["-H", "1b", "0d"],
    "tmux S-Enter": ["S-Enter"],
    "tmux M-Enter": ["M-Enter"],
}


def two_rows(screen: str) -> bool:
    lines = screen.splitlines()
    return any("first" in a and "second" in b for a, b in pairwise(lines))


def start_ccx(terminal: Terminal, repo: Path) -> None:  # noqa: F811
    command = f"{ccx_in_clean_env()}; sleep 30"
    terminal.tmux("new-session", "-d", "-s", "ccx", "-x", "80", "-y", "24", "-c", str(repo))
    # tmux forwards S-Enter as xterm's modified key only with extended keys on
    terminal.tmux("set-option", "-s", "extended-keys", "always")
    terminal.tmux("respawn-pane", "-k", "-t", "ccx", command)
    terminal.wait(lambda s: "% until auto-compact" in s, timeout=30)


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_raw_new_line_sequences_add_a_line(
    terminal: Terminal,  # noqa: F811
    api: FakeApi,
    repo: Path,
    name: str,
) -> None:
    assert CCX.exists(), f"{CCX} is missing; install the project (pip install -e .)"
    api.add(text_reply("Both lines arrived."))
    start_ccx(terminal, repo)
    terminal.type("first")
    terminal.keys(*SEQUENCES[name])
    terminal.type("second")
    terminal.wait(two_rows, timeout=10)  # "second" on the prompt box's row under "first"
    assert [r for r in api.requests if r.path.endswith("/messages")] == []
    terminal.keys("Enter")
    terminal.wait(lambda s: "Both lines arrived." in s)
    sent = [r.last_user_text() for r in api.requests if r.path.endswith("/messages")]
    assert sent[0].endswith("first\nsecond")
