"""What the app imports before its first paint: nothing heavy (the agent loads after)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "anthropic",
    "pydantic",
    "tui.session.runtime",
    "agent.model.client",
    "rich.markdown",
    "markdown_it",
)


def test_importing_the_app_loads_nothing_heavy() -> None:
    code = f"import sys\nimport tui.fullscreen.app\nprint([m for m in {HEAVY!r} if m in sys.modules])\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "[]"
