"""Whether the full-screen app fits this terminal: both streams terminals, and big enough.

Kept apart from tui.cli.interactive (which starts the front ends) so that ``ccx doctor``
and the in-session /doctor can ask without importing a front end.
"""

from __future__ import annotations

import sys

MIN_COLUMNS = 60
MIN_LINES = 16


def plain_reason() -> str | None:
    """Why the full-screen app cannot run here, or None when it can."""
    streams = (("stdin", sys.stdin), ("stdout", sys.stdout))
    for name, stream in streams:
        try:
            tty = stream is not None and stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        if not tty:
            return f"{name} is not a terminal"
    import shutil

    size = shutil.get_terminal_size((80, 24))
    if size.columns < MIN_COLUMNS or size.lines < MIN_LINES:
        return (
            f"the terminal is {size.columns}x{size.lines}, smaller than {MIN_COLUMNS}x{MIN_LINES}"
        )
    return None
