"""``@`` completion and a bracketed paste through the real `ccx` in tmux at 80x24.

The keys and the paste go through Textual's parser as a terminal sends them: ``@`` and
letters list the project's paths, Tab puts one in; ``tmux paste-buffer -p`` sends a
bracketed paste, which shows folded and goes to the fake API whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.test_terminal import CCX, Terminal, terminal  # noqa: F401  (the fixture)
from tests.tui.test_terminal_keys import start_ccx
from tui.fake_api import FakeApi, text_reply

pytestmark = pytest.mark.e2e


def test_at_completion_and_a_folded_paste_in_a_real_terminal(
    terminal: Terminal,  # noqa: F811
    api: FakeApi,
    repo: Path,
    tmp_path: Path,
) -> None:
    assert CCX.exists(), f"{CCX} is missing; install the project (pip install -e .)"
    (repo / ".gitignore").write_text("dist/\n")
    (repo / "dist").mkdir()
    (repo / "dist" / "app.min.js").write_text("x\n")
    api.add(text_reply("Read both."))
    start_ccx(terminal, repo)
    terminal.type("look at @app")
    screen = terminal.wait(lambda s: "@src/app.py" in s, timeout=20)
    assert "dist/app.min.js" not in screen
    terminal.keys("Tab")
    terminal.wait(lambda s: "look at @src/app.py" in s and "@src/app.py\n" not in s)
    log = "".join(f"line {i} of the log\n" for i in range(1, 101))
    paste = tmp_path / "paste.txt"
    paste.write_text(log)
    terminal.tmux("load-buffer", "-b", "log", str(paste))
    terminal.tmux("paste-buffer", "-p", "-b", "log", "-t", "ccx")
    screen = terminal.wait(lambda s: "[Pasted text #1 +100 lines]" in s)
    assert "line 50 of the log" not in screen
    terminal.keys("Enter")
    terminal.wait(lambda s: "Read both." in s)
    (request,) = [r for r in api.requests if r.path.endswith("/messages")]
    texts = [b["text"] for b in request.body["messages"][-1]["content"] if b["type"] == "text"]
    assert texts[0].startswith("look at @src/app.py line 1 of the log\nline 2 of the log\n")
    assert texts[0].rstrip().endswith("line 100 of the log")
    assert "RETRY_LIMIT = 3" in texts[1]  # the file went with it
