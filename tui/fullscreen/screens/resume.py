"""The /resume picker: this directory's sessions, newest first, narrowed as the user types.

The search field keeps the keyboard: typed words narrow the list (every word must appear
in the session's first prompt or id, case aside), Up/Down move the highlight, Enter opens
the highlighted session, Esc cancels.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.events import Resize
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
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
    ResumeScreen #resume-search {
        border: none;
        height: 1;
        padding: 0;
    }
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "move(1)", show=False),
        Binding("up", "move(-1)", show=False),
        Binding("pagedown", "move(10)", show=False),
        Binding("pageup", "move(-10)", show=False),
    ]

    def __init__(self, sessions: list[SessionInfo], current: str | None = None) -> None:
        super().__init__()
        self.sessions = [s for s in sessions if s.id != current]
        self.shown = list(self.sessions)
        self._now = time.time()

    def compose(self) -> ComposeResult:
        with Vertical(id="resume-dialog"):
            yield Static("[b]Resume a session[/b] (type to search, enter to open, esc to cancel)")
            if not self.sessions:
                yield Static("No other sessions in this directory.")
                return
            yield Input(placeholder="Search the sessions' first prompts", id="resume-search")
            yield OptionList(*self._options(), id="resume-options")
            yield Static("", id="resume-none")

    def _options(self) -> list[Option]:
        return [Option(session_line(info, self._now), id=info.id) for info in self.shown]

    def on_mount(self) -> None:
        if self.sessions:
            self.query_one(OptionList).highlighted = 0
            self.query_one(Input).focus()
        self.call_after_refresh(self._fit)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.shown = matching(self.sessions, event.value)
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._options())
        options.highlighted = 0 if self.shown else None
        none = "" if self.shown else f"No session matches {event.value.strip()!r}."
        self.query_one("#resume-none", Static).update(none)
        self.call_after_refresh(self._fit)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        index = self.query_one(OptionList).highlighted
        if index is not None and 0 <= index < len(self.shown):
            self.dismiss(self.shown[index].id)

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if not self.shown:
            return
        current = options.highlighted if options.highlighted is not None else 0
        options.highlighted = max(0, min(len(self.shown) - 1, current + step))

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


def matching(sessions: list[SessionInfo], query: str) -> list[SessionInfo]:
    """The sessions whose first prompt or id holds every word of ``query`` (case aside)."""
    words = query.lower().split()
    return [
        info
        for info in sessions
        if all(word in f"{info.first_prompt}\n{info.id}".lower() for word in words)
    ]
