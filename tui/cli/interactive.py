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

from tui.cli.terminal_fit import MIN_COLUMNS, MIN_LINES, plain_reason

__all__ = ["MIN_COLUMNS", "MIN_LINES", "plain_reason", "start_interactive"]


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
