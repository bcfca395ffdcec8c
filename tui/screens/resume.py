"""The /resume picker: this directory's sessions, newest first."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from agent.sessions.session import SessionInfo


def age(seconds: float) -> str:
    if seconds < 90:
        return "just now"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 86400:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} days ago"


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
            options = []
            for info in self.sessions:
                count = f"{'~' if info.count_estimated else ''}{info.message_count} messages"
                label = f"{age(now - info.modified):>12}  {count:>14}  {info.first_prompt or '(no prompt)'}"
                options.append(Option(label, id=info.id))
            yield OptionList(*options, id="resume-options")

    def on_mount(self) -> None:
        if self.sessions:
            self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
