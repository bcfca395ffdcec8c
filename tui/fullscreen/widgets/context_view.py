"""/context as a widget: where the tokens go, one bar per category, and what compaction keeps."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from tui.words import relative

if TYPE_CHECKING:
    from compaction.breakdown import Breakdown

BAR_WIDTH = 32
STACK_WIDTH = 60
FREE_SPACE = "Free space"
BUFFER = "Auto-compact buffer"
COLOURS = {
    "System prompt": "bright_black",
    "Tools": "cyan",
    "Memory files": "magenta",
    "Skills": "yellow",
    "Messages": "blue",
    "Thinking": "medium_purple",
    FREE_SPACE: "grey35",
    BUFFER: "dark_orange3",
}
RESULT_COLOURS = ["green", "bright_green", "spring_green3", "sea_green3", "chartreuse3"]


def _format(tokens: int) -> str:
    from compaction.thresholds import format_tokens

    return format_tokens(tokens)


def category_colours(names: list[str]) -> dict[str, str]:
    colours: dict[str, str] = {}
    results = 0
    for name in names:
        if name in COLOURS:
            colours[name] = COLOURS[name]
        else:  # "Tool results: <tool>"
            colours[name] = RESULT_COLOURS[results % len(RESULT_COLOURS)]
            results += 1
    return colours


def stacked_bar(categories: list[dict[str, Any]], window: int, width: int = STACK_WIDTH) -> Text:
    """The whole window as one line, each category a run of cells in its colour."""
    colours = category_colours([c["name"] for c in categories])
    text = Text()
    used_cells = 0
    for category in categories:
        if window <= 0:
            break
        cells = round(category["tokens"] * width / window)
        if category["tokens"] > 0:
            cells = max(1, cells)
        cells = min(cells, width - used_cells)
        glyph = "░" if category["name"] in (FREE_SPACE, BUFFER) else "█"
        text.append(glyph * cells, style=colours[category["name"]])
        used_cells += cells
    if used_cells < width:
        text.append("░" * (width - used_cells), style=COLOURS[FREE_SPACE])
    return text


def breakdown_table(categories: list[dict[str, Any]], window: int) -> Table:
    colours = category_colours([c["name"] for c in categories])
    table = Table.grid(padding=(0, 2))
    table.add_column()
    table.add_column()
    table.add_column(justify="right")
    table.add_column(justify="right")
    for category in categories:
        tokens = category["tokens"]
        filled = round(tokens * BAR_WIDTH / window) if window > 0 else 0
        filled = min(BAR_WIDTH, max(1, filled) if tokens > 0 else 0)
        bar = Text()
        bar.append("█" * filled, style=colours[category["name"]])
        bar.append("░" * (BAR_WIDTH - filled), style="grey23")
        percent = tokens * 100 / window if window > 0 else 0.0
        table.add_row(
            Text(category["name"], style=colours[category["name"]]),
            bar,
            _format(tokens),
            f"{percent:.1f}%",
        )
    return table


class ContextView(Vertical):
    """Built from ``CommandResult.data["context"]``, the /context command's Breakdown."""

    DEFAULT_CSS = """
    ContextView {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border: round $primary 50%;
    }
    ContextView > Static {
        height: auto;
    }
    ContextView > .context-keep {
        margin-top: 1;
    }
    """

    def __init__(self, breakdown: Breakdown, cwd: Path | None = None) -> None:
        super().__init__()
        self.breakdown = breakdown
        self.cwd = cwd

    def compose(self) -> ComposeResult:
        data = self.breakdown.to_json()  # the rows below read the categories as plain values
        categories = data["categories"]
        window, used = self.breakdown.window, self.breakdown.used
        percent = used * 100 / window if window > 0 else 0.0
        title = Text()
        title.append("Context usage ", style="bold")
        title.append(f"{_format(used)} / {_format(window)} ({percent:.1f}%)")
        title.append(f" · auto-compact at {_format(self.breakdown.auto_compact)}", "dim")
        yield Static(title, classes="context-title")
        yield Static(stacked_bar(categories, window), classes="context-stack")
        yield Static(breakdown_table(categories, window), classes="context-table")
        keep = self.breakdown.keep_preview or {}
        if keep:
            text = Text("A compaction now would keep:\n", style="bold")
            for index, (key, value) in enumerate(keep.items()):
                text.append(f"  {key}: ", style="dim")
                text.append(relative(str(value), self.cwd))
                if index < len(keep) - 1:
                    text.append("\n")
            yield Static(text, classes="context-keep")
