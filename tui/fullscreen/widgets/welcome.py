"""The first lines of the transcript: ccx and its version, the model, the folder, the keys."""

from __future__ import annotations

import os
from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from agent import __version__

KEYS = "/help for commands · ctrl+o expands · esc interrupts · ctrl+c twice quits"


def home_relative(path: Path) -> str:
    """``path`` with the home folder written as ``~``."""
    home = os.path.expanduser("~")
    text = str(path)
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home) :]
    return text


def welcome_text(model: str, cwd: Path, banner: str | None = None) -> Text:
    text = Text()
    if banner:
        text.append(banner + "\n", style="bold cyan")
    text.append(f"ccx {__version__}", style="bold")
    text.append(f" · {model or '…'} · {home_relative(cwd)}\n")
    text.append(KEYS, style="dim")
    return text


class Welcome(Static):
    """Drawn in the first paint; stays at the top of the transcript through /clear and /resume."""

    DEFAULT_CSS = """
    Welcome {
        height: auto;
        padding: 0 1;
        margin: 0 0 1 0;
        border-left: thick $primary;
    }
    """

    def __init__(self, model: str, cwd: Path, banner: str | None = None) -> None:
        super().__init__(welcome_text(model, cwd, banner), id="welcome")
        self.cwd, self.banner = cwd, banner

    def show_model(self, model: str) -> None:
        self.update(welcome_text(model, self.cwd, self.banner))
