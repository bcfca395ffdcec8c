"""Which interactive front end runs: the full-screen app when it fits, else the plain REPL.

The full-screen app (``tui.fullscreen.app.run_app``) is imported only when it is about
to run; the plain REPL takes over when asked (``--plain``), when stdin or
stdout is not a terminal, when the terminal is too small, or when the app
cannot be loaded. (Input piped in without ``--plain`` never comes here: it is one
prompt run, ``tui.cli.main``.)
"""

from __future__ import annotations

import os
import sys
from typing import Any

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


def _note(text: str) -> None:
    print(f"ccx: {text}; using the plain REPL", file=sys.stderr)


def start_interactive(options: Any, prompt: str | None, plain: bool, check: bool = True) -> int:
    """Open an interactive session: the full-screen app when it fits, else the plain REPL."""
    if check:
        from tui.session.credentials import check_credentials

        message = check_credentials(options.cwd, os.environ)
        if message is not None:
            print(message, file=sys.stderr)
            return 1
    if not plain:
        reason = plain_reason()
        if reason is None:
            try:
                from tui.fullscreen.run import run_app
            except ImportError as exc:
                reason = f"the full-screen app could not be loaded ({exc})"
            else:
                return run_app(options, prompt)
        _note(reason)
    from tui.plain.repl import run_plain

    return run_plain(options, prompt)
