"""/context as a widget: where the tokens go, one bar per category, and what compaction keeps."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from compaction.breakdown import (
    AUTO_COMPACT_BUFFER,
    FREE_SPACE,
    THINKING,
    Breakdown,
    Category,
    bar_cells,
)
from compaction.thresholds import format_tokens
from tui.words import relative

BAR_WIDTH = 32
STACK_WIDTH = 60
COLOURS = {
    "System prompt": "bright_black",
    "Tools": "cyan",
    "MCP tools": "bright_cyan",
    "Memory files": "magenta",
    "Skills": "yellow",
    "Messages": "blue",
    THINKING: "medium_purple",
    FREE_SPACE: "grey35",
    AUTO_COMPACT_BUFFER: "dark_orange3",
}
RESULT_COLOURS = ["green", "bright_green", "spring_green3", "sea_green3", "chartreuse3"]


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


def stacked_bar(categories: list[Category], window: int, width: int = STACK_WIDTH) -> Text:
    """The whole window as one line, each category a run of cells in its colour."""
    colours = category_colours([c.name for c in categories])
    text = Text()
    used_cells = 0
    for category in categories:
        if window <= 0:
            break
        cells = min(bar_cells(category.tokens, window, width), width - used_cells)
        glyph = "░" if category.name in (FREE_SPACE, AUTO_COMPACT_BUFFER) else "█"
        text.append(glyph * cells, style=colours[category.name])
        used_cells += cells
    if used_cells < width:
        text.append("░" * (width - used_cells), style=COLOURS[FREE_SPACE])
    return text


def breakdown_table(breakdown: Breakdown) -> Table:
    """One row per category: its name, its bar, its tokens and its share of the window."""
    colours = category_colours([c.name for c in breakdown.categories])
    table = Table.grid(padding=(0, 2))
    table.add_column()
    table.add_column()
    table.add_column(justify="right")
    table.add_column(justify="right")
    for category in breakdown.categories:
        filled = bar_cells(category.tokens, breakdown.window, BAR_WIDTH)
        bar = Text()
        bar.append("█" * filled, style=colours[category.name])
        bar.append("░" * (BAR_WIDTH - filled), style="grey23")
        table.add_row(
            Text(category.name, style=colours[category.name]),
            bar,
            format_tokens(category.tokens),
            f"{breakdown.percent(category.tokens):.1f}%",
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
        breakdown = self.breakdown
        title = Text()
        title.append("Context usage ", style="bold")
        title.append(
            f"{format_tokens(breakdown.used)} / {format_tokens(breakdown.window)} "
            f"({breakdown.percent(breakdown.used):.1f}%)"
        )
        title.append(f" · auto-compact at {format_tokens(breakdown.auto_compact)}", "dim")
        yield Static(title, classes="context-title")
        yield Static(stacked_bar(breakdown.categories, breakdown.window), classes="context-stack")
        yield Static(breakdown_table(breakdown), classes="context-table")
        keep = self.breakdown.keep_preview or {}
        if keep:
            text = Text("A compaction now would keep:\n", style="bold")
            for index, (key, value) in enumerate(keep.items()):
                text.append(f"  {key}: ", style="dim")
                text.append(relative(str(value), self.cwd))
                if index < len(keep) - 1:
                    text.append("\n")
            yield Static(text, classes="context-keep")
