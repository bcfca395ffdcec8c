"""ExitPlanMode's question: approve the plan (leave plan mode) or keep planning."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static


class PlanApprovalScreen(ModalScreen[bool]):
    """Dismissed with True (approve, plan mode off) or False (keep planning)."""

    DEFAULT_CSS = """
    PlanApprovalScreen {
        align: center middle;
    }
    PlanApprovalScreen > #plan-dialog {
        width: 90%;
        max-width: 110;
        height: auto;
        max-height: 90%;
        border: thick $accent;
        background: $surface;
        padding: 1 2;
    }
    PlanApprovalScreen #plan-body {
        height: auto;
        max-height: 30;
        border: round $primary 40%;
    }
    PlanApprovalScreen #plan-keys {
        margin-top: 1;
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
            yield Static("y: approve and start · n / esc: keep planning", id="plan-keys")

    def action_answer(self, approved: bool) -> None:
        self.dismiss(bool(approved))

    def on_plan_approval_screen_withdrawn(self, _event: Withdrawn) -> None:
        self.dismiss(False)
