"""The `ccx` console script: `ccx demo`, headless runs (agent.cli) and the interactive front ends.

Nothing heavy is imported at module level: `ccx --version` must stay fast.
The full-screen app (``tui.app.run_app``) is imported only when it is about
to run; the plain REPL takes over when asked (``--plain``), when stdin or
stdout is not a terminal, when the terminal is too small, or when the app
cannot be loaded.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from agent.cli import run

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
        from agent.credentials import check_credentials

        message = check_credentials(options.cwd, os.environ)
        if message is not None:
            print(message, file=sys.stderr)
            return 1
    if not plain:
        reason = plain_reason()
        if reason is None:
            try:
                from tui.app import run_app
            except ImportError as exc:
                reason = f"the full-screen app could not be loaded ({exc})"
            else:
                return run_app(options, prompt)
        _note(reason)
    from tui.plain import run_plain

    return run_plain(options, prompt)


def _interactive(options: Any, prompt: str | None, plain: bool) -> int:
    return start_interactive(options, prompt, plain)


# Arguments that need parsing before anything is drawn (another front end, or output only).
NOT_DEFERRABLE = {"-p", "--print", "-h", "--help", "--version", "-v", "-V", "--plain", "--cwd"}


def deferrable(argv: list[str]) -> bool:
    """Whether the full-screen app may paint before the arguments are parsed (the fast path)."""
    flags = {arg.split("=", 1)[0] for arg in argv if arg.startswith("-")}
    return not (flags & NOT_DEFERRABLE) and plain_reason() is None


def run_fast_interactive(argv: list[str]) -> int | None:
    """The app first, typer after the first paint; None when the normal path must run instead."""
    from pathlib import Path

    from agent.credentials import check_credentials

    if check_credentials(Path.cwd(), os.environ) is not None:
        return None  # the normal path says how to set a key, without a flash of the app
    try:
        from tui.app import run_app_from_argv
    except ImportError:
        return None
    code, handed_back = run_app_from_argv(argv)
    if handed_back is None:
        return code
    from agent.cli import dispatch

    return dispatch(handed_back, interactive=_interactive)


def main() -> None:
    argv = sys.argv[1:]
    if argv and argv[0] == "demo":
        from tui.demo import main as demo_main

        exit_now(demo_main(argv[1:]))
    if deferrable(argv) and (code := run_fast_interactive(argv)) is not None:
        exit_now(code)
    exit_now(run(argv, interactive=_interactive))


def exit_now(code: int) -> None:
    """Exit without tearing down the interpreter.

    By now the session is closed (the transcript is written unbuffered, the
    watcher and shell processes are stopped); what remains is Python freeing
    some 1,500 pydantic classes of the SDK one by one, which took 0.8 s of
    every `ccx -p`. Standard streams are flushed first.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
