"""/help as a table both front ends print: the usage column stays put, the words wrap beside it."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tui.commands.slash import INTERACTIVE_COMMANDS

USAGE_WIDTH = 28  # a longer usage (/compact's options) wraps inside its own column


def help_table(rows: list[tuple[str, str]], keys: str = "") -> RenderableType:
    """The session's commands, then the front end's own (/resume), then ``keys`` below."""
    table = Table.grid(padding=(0, 2))
    table.add_column(max_width=USAGE_WIDTH, style="bold")
    table.add_column(ratio=1)
    known = {usage.split()[0] for usage, _words in rows}
    extra = [row for row in INTERACTIVE_COMMANDS if row[0].split()[0] not in known]
    for usage, words in [*rows, *extra]:
        table.add_row(Text(usage), Text(words))  # never markup: "[id]" is text
    if not keys:
        return table
    return Group(table, Text(keys, style="dim"))
