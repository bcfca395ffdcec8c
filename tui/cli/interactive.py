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


def _log_in_first(message: str, cwd: Any) -> bool:
    """No credential: at a terminal, offer to store a key as /login does (True once one is
    stored); else say how to set one."""
    print(message, file=sys.stderr)
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    import getpass

    from tui.session.login import LOGIN_PROMPT, login

    print(f"\nOr log in now. {LOGIN_PROMPT}", file=sys.stderr)
    for _attempt in range(3):
        try:
            key = getpass.getpass("key: ", stream=sys.stderr)
        except (EOFError, KeyboardInterrupt):
            return False
        if not key.strip():
            return False
        try:
            print(login(key, cwd), file=sys.stderr)
            return True
        except (ValueError, OSError) as error:
            print(f"Not stored: {error}", file=sys.stderr)
    return False


def start_interactive(options: Any, prompt: str | None, plain: bool, check: bool = True) -> int:
    """Open an interactive session: the full-screen app when it fits, else the plain REPL."""
    if check:
        from tui.session.credentials import check_credentials

        message = check_credentials(options.cwd, os.environ)
        if message is not None and not _log_in_first(message, options.cwd):
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
