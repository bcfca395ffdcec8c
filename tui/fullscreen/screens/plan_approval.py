"""ExitPlanMode's question: approve the plan (leave plan mode) or keep planning."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.fullscreen.screens.fit import fit_body

PLAN_ROWS = 30


class PlanApprovalScreen(ModalScreen[bool]):
    """Dismissed with True (approve, plan mode off) or False (keep planning)."""

    DEFAULT_CSS = """
    PlanApprovalScreen {
        align: center middle;
    }
    PlanApprovalScreen > #plan-dialog {
        width: 100%;
        max-width: 110;
        height: auto;
        max-height: 100%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    PlanApprovalScreen #plan-body {
        height: auto;
        max-height: 30;
        border: round $primary 40%;
    }
    PlanApprovalScreen #plan-keys {
        color: $text-muted;
    }
    """

    BINDINGS = [
        Binding("y,1", "answer(True)", "Approve"),
        Binding("n,2,escape", "answer(False)", "Keep planning"),
    ]

    class Withdrawn(Message):
        """The turn was interrupted while the plan waited."""

    def __init__(self, plan: str) -> None:
        super().__init__()
        self.plan = plan

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown

        with Vertical(id="plan-dialog"):
            yield Static("[b]Ready to code?[/b] Here is the plan:")
            with VerticalScroll(id="plan-body"):
                yield Markdown(self.plan)
            yield Static("Approve and start (y) · keep planning (n or esc)", id="plan-keys")

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit)

    def on_resize(self, _event: Resize) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        body = self.query_one("#plan-body", VerticalScroll)
        fit_body(self, self.query_one("#plan-dialog"), body, PLAN_ROWS)

    def action_answer(self, approved: bool) -> None:
        self.dismiss(bool(approved))

    def on_plan_approval_screen_withdrawn(self, _event: Withdrawn) -> None:
        self.dismiss(False)
