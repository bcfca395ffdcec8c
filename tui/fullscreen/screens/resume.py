"""The /resume picker: this directory's sessions, newest first."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.events import Resize
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.fullscreen.screens.fit import fit_body
from tui.words import session_line

if TYPE_CHECKING:
    from agent.sessions.session import SessionInfo


class ResumeScreen(ModalScreen["str | None"]):
    """Dismissed with the chosen session id, or None."""

    DEFAULT_CSS = """
    ResumeScreen {
        align: center middle;
    }
    ResumeScreen > #resume-dialog {
        width: 100%;
        max-width: 120;
        height: auto;
        max-height: 100%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    ResumeScreen OptionList {
        height: auto;
        max-height: 30;
    }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, sessions: list[SessionInfo], current: str | None = None) -> None:
        super().__init__()
        self.sessions = [s for s in sessions if s.id != current]

    def compose(self) -> ComposeResult:
        now = time.time()
        with Vertical(id="resume-dialog"):
            yield Static("[b]Resume a session[/b] (enter to open, esc to cancel)")
            if not self.sessions:
                yield Static("No other sessions in this directory.")
                return
            options = [Option(session_line(info, now), id=info.id) for info in self.sessions]
            yield OptionList(*options, id="resume-options")

    def on_mount(self) -> None:
        if self.sessions:
            self.query_one(OptionList).focus()
        self.call_after_refresh(self._fit)

    def on_resize(self, _event: Resize) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        if self.sessions:
            fit_body(self, self.query_one("#resume-dialog"), self.query_one(OptionList), 30)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
