"""The full-screen app as a program: run it, then print what belongs on the restored terminal."""

from __future__ import annotations

import gc
import sys
from typing import TYPE_CHECKING, Any

from agent.core.gc_pause import pause_for_start_up, start_up_done
from tui.session.start_up_caches import StartUpCaches

if TYPE_CHECKING:
    from tui.fullscreen.app import CcxApp
    from tui.session.options import RunOptions


def run_app_from_argv(argv: list[str]) -> tuple[int, Any]:
    """Paint first, parse the command line after: (exit code, arguments to hand back or None).

    Typer builds pydantic adapters for every option (~250 ms), so on the
    interactive path the app draws before the arguments are parsed. A usage
    error is printed once the terminal is restored; arguments asking for
    another front end (-p, --plain) are handed back to the launcher.
    """
    pause_for_start_up()  # until the first paint (see CcxApp._first_paint)
    _use_compiled_code()
    from tui.fullscreen.app import CcxApp

    app = CcxApp(None, None, gc_paused=True, argv=argv)
    try:
        app.run()
    finally:
        start_up_done()  # the app ended before its first paint
        gc.enable()
    _print_resume_hint(app)
    if app.argument_error is not None:
        message, code = app.argument_error
        if message:
            print(message, file=sys.stderr)
        return code, None
    return app.return_code or 0, app.handed_back


def run_app(options: RunOptions, prompt: str | None = None) -> int:
    """Run the app until the user quits; returns the process exit code."""
    pause_for_start_up()  # until the first paint (see CcxApp._first_paint)
    _use_compiled_code()
    from tui.fullscreen.app import CcxApp

    app = CcxApp(options, prompt, gc_paused=True)
    try:
        app.run()
    finally:
        start_up_done()  # the app ended before its first paint
        gc.enable()
    _print_resume_hint(app)
    return app.return_code or 0


def _use_compiled_code() -> None:
    """Before the app's imports: their code and their dataclasses' methods from the last
    start's compilation (tui.session.start_up_caches); the agent bridge keeps both when the
    session is up."""
    StartUpCaches("app").use_compiled_code()


def _print_resume_hint(app: CcxApp) -> None:
    hint = app.resume_hint()
    if hint:
        print(hint, flush=True)
