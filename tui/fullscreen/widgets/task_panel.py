"""The model's task list above the prompt, while it has work left (TaskCreate / TaskUpdate).

Hidden when the list is empty or every task is done; at most ``MAX_ROWS`` rows, the task
in progress first, so a long list never pushes the prompt off an 80x24 screen.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

MAX_ROWS = 5
MARKS = {"completed": "☒", "in_progress": "▶", "pending": "☐"}


class TaskPanel(Static):
    DEFAULT_CSS = """
    TaskPanel {
        height: auto;
        padding: 0 1;
        display: none;
    }
    TaskPanel.-shown {
        display: block;
    }
    """

    def show_tasks(self, rows: list[dict[str, Any]]) -> None:
        shown = any(row.get("status") != "completed" for row in rows)
        self.set_class(shown, "-shown")
        self.update(panel_text(rows) if shown else "")


def panel_text(rows: list[dict[str, Any]]) -> Text:
    done = sum(row.get("status") == "completed" for row in rows)
    order = {"in_progress": 0, "pending": 1, "completed": 2}
    ranked = sorted(rows, key=lambda row: order.get(str(row.get("status")), 1))
    text = Text(f"Tasks {done}/{len(rows)}", style="bold")
    for row in ranked[:MAX_ROWS]:
        status = str(row.get("status"))
        words = row.get("active_form") if status == "in_progress" else row.get("subject")
        style = {"in_progress": "bold", "completed": "dim strike"}.get(status, "")
        text.append("\n")
        text.append(f"{MARKS.get(status, '☐')} {words}", style=style)
    if len(ranked) > MAX_ROWS:
        text.append(f"\n… {len(ranked) - MAX_ROWS} more (/todos)", style="dim")
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text
