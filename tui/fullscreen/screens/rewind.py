"""The rewind picker (Esc twice on an empty prompt): go back to before one of your prompts.

The prompts still in the conversation are listed latest first; Up/Down move, Enter picks,
Esc cancels. When Edit or Write changed files since the picked prompt, a second list asks
whether to put those files back too or rewind only the conversation.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.events import Resize
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent.permissions.paths import is_within
from tui.fullscreen.screens.fit import fit_body
from tui.session.rewind import first_line

if TYPE_CHECKING:
    from tui.session.rewind import RewindPoint

Choice = tuple[int, bool]  # the point's number, and whether its files go back too
MAX_FILES_NAMED = 3


class RewindScreen(ModalScreen["Choice | None"]):
    """Dismissed with (number, files) or None."""

    DEFAULT_CSS = """
    RewindScreen {
        align: center bottom;
    }
    RewindScreen > #rewind-dialog {
        width: 100%;
        height: auto;
        max-height: 100%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
        margin-bottom: 1;
    }
    RewindScreen OptionList, RewindScreen OptionList:focus {
        height: auto;
        max-height: 20;
        border: none;
        padding: 0;
    }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, points: list[RewindPoint], cwd: Path | None = None) -> None:
        super().__init__()
        self.points = points
        self.cwd = cwd  # files under it are named relative to it
        self.picked: RewindPoint | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind-dialog"):
            yield Static(
                "[b]Rewind[/b]: go back to before one of your prompts (enter picks, esc cancels)",
                id="rewind-title",
            )
            yield OptionList(*self._prompt_options(), id="rewind-options")
            yield Static(
                "It and everything after it leave the conversation; its text comes back "
                "to the prompt.",
                id="rewind-hint",
            )

    def _prompt_options(self) -> list[Option]:
        width = max(20, self.app.size.width - 10)
        return [
            Option(f"{p.number}. {first_line(p.text, width)}", id=str(p.number))
            for p in self.points
        ]

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0
        options.focus()
        self.call_after_refresh(self._fit)

    def on_resize(self, _event: Resize) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        fit_body(self, self.query_one("#rewind-dialog"), self.query_one(OptionList), 20)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = event.option.id or ""
        if self.picked is not None:  # the second list: what goes back
            self.dismiss((self.picked.number, chosen == "files"))
            return
        point = next(p for p in self.points if str(p.number) == chosen)
        if not point.files:
            self.dismiss((point.number, False))
            return
        self.picked = point
        self._ask_about_files(point)

    def _ask_about_files(self, point: RewindPoint) -> None:
        names = ", ".join(self._shown_path(path) for path in point.files[:MAX_FILES_NAMED])
        if len(point.files) > MAX_FILES_NAMED:
            names += f" and {len(point.files) - MAX_FILES_NAMED} more"
        count = f"{len(point.files)} file{'s' if len(point.files) != 1 else ''}"
        self.query_one("#rewind-title", Static).update(
            f"[b]Rewind[/b] to before “{first_line(point.text, 40)}”: and the files?"
        )
        self.query_one("#rewind-hint", Static).update(
            f"Edit and Write changed {count} since then: {names}. "
            "Changes made by Bash commands are not tracked."
        )
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(
            [
                Option("Conversation only (the files stay as they are now)", id="conversation"),
                Option(f"Conversation and files (put back {count})", id="files"),
            ]
        )
        options.highlighted = 0
        self.call_after_refresh(self._fit)

    def _shown_path(self, path: str) -> str:
        if self.cwd is not None and is_within(path, str(self.cwd)):
            return os.path.relpath(path, self.cwd)
        return path

    def action_cancel(self) -> None:
        self.dismiss(None)
