"""`ccx --help` at 80 columns: every option named in full, no line wider than the terminal."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.import_graph import ROOT


def test_help_is_readable_at_80_columns() -> None:
    env = {**os.environ, "COLUMNS": "80", "LINES": "24", "TERM": "xterm-256color"}
    code = "import sys; from tui.cli.launcher import main; sys.exit(main())"
    run = subprocess.run(
        [sys.executable, "-c", code, "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in run.stdout  # no name or word cut short
    for name in ("--include-partial-messages", "--disallowed-tools", "--no-sandbox-network"):
        assert name in run.stdout
