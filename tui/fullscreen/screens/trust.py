"""The trust question for a project that ships things that act or steer ccx (tui.session.folder_trust)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static

if TYPE_CHECKING:
    from tui.session.folder_trust import TrustQuestion

ANSWERS = ("trust", "untrusted", "exit")


class TrustScreen(ModalScreen[str]):
    """Dismissed with "trust" (remembered), "untrusted" (continue without what trust would
    turn on) or "exit"."""

    DEFAULT_CSS = """
    TrustScreen {
        align: center middle;
    }
    TrustScreen > #trust-dialog {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 100%;
        border: thick $warning;
        background: $surface;
        padding: 0 1;
    }
    TrustScreen #trust-items {
        height: auto;
        max-height: 10;
    }
    TrustScreen #trust-keys {
        margin-top: 1;
    }
    """

    BINDINGS = [
        Binding("y,1", "answer('trust')", "Trust"),
        Binding("n,2", "answer('untrusted')", "Continue without"),
        Binding("q,3,escape", "answer('exit')", "Exit"),
    ]

    class Withdrawn(Message):
        """The session closed while the question was open."""

    def __init__(self, question: TrustQuestion) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="trust-dialog"):
            yield Static(Text(self.question.headline, style="bold"))
            yield Static(self.question.LEAD, markup=False)
            with VerticalScroll(id="trust-items"):
                yield Static(self._item_list())
            yield Static(
                "1. Yes, trust this folder (y)\n"
                "2. No, continue without them (n)\n"
                "3. Exit (q / esc)",
                id="trust-keys",
                markup=False,
            )

    def _item_list(self) -> Table:
        """One bullet per item; a line too long for the dialog wraps under its own text."""
        grid = Table.grid(padding=(0, 1, 0, 0))
        grid.add_column(no_wrap=True)
        grid.add_column()
        for item in self.question.items:
            grid.add_row("•", Text(item))
        return grid

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer)

    def on_trust_screen_withdrawn(self, _event: Withdrawn) -> None:
        self.dismiss("exit")
