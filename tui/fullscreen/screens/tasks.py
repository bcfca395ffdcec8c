"""The /tasks dialog: the session's background jobs; enter stops the one chosen, esc closes.

The stop itself goes through the session driver as ``/tasks stop ID`` (posted
as the prompt box's own Submitted message), so the TUI, the plain REPL and
``-p`` share one way of stopping a job.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tools.jobs import format_runtime


def job_line(row: dict[str, Any]) -> str:
    runtime = format_runtime(float(row["runtime_s"]))
    return f"{row['id']}  {row['kind']:<5}  {row['status']:<9}  {runtime:>7}  {row['description']}"


class TasksScreen(ModalScreen["str | None"]):
    """Dismissed with the id of a running job to stop, or None."""

    DEFAULT_CSS = """
    TasksScreen {
        align: center middle;
    }
    TasksScreen > #tasks-dialog {
        width: 100%;
        max-width: 120;
        height: auto;
        max-height: 100%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    TasksScreen OptionList {
        height: auto;
        max-height: 20;
    }
    """

    BINDINGS = [Binding("escape", "cancel", "Close")]

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(id="tasks-dialog"):
            yield Static("[b]Background jobs[/b] (enter stops a running one, esc closes)")
            options = [
                Option(job_line(row), id=row["id"], disabled=row["status"] != "running")
                for row in self.rows
            ]
            yield OptionList(*options, id="tasks-options")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
