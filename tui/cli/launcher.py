"""The `ccx` console script: `ccx demo`, `ccx doctor`, headless runs (tui.cli.main) and the
interactive front ends.

Nothing heavy is imported at module level: `ccx --version` must stay fast.
Which interactive front end runs is ``tui.cli.interactive``'s choice.
"""

from __future__ import annotations

import os
import sys

from tui.cli.asyncio_only import mark_trio_absent
from tui.cli.interactive import plain_reason, start_interactive
from tui.cli.main import run

# Arguments that need parsing before anything is drawn (another front end, or output only).
NOT_DEFERRABLE = {"-p", "--print", "-h", "--help", "--version", "-v", "-V", "--plain", "--cwd"}


def deferrable(argv: list[str]) -> bool:
    """Whether the full-screen app may paint before the arguments are parsed (the fast path)."""
    flags = {arg.split("=", 1)[0] for arg in argv if arg.startswith("-")}
    return not (flags & NOT_DEFERRABLE) and plain_reason() is None


def run_fast_interactive(argv: list[str]) -> int | None:
    """The app first, typer after the first paint; None when the normal path must run instead."""
    from pathlib import Path

    from tui.session.credentials import check_credentials

    if check_credentials(Path.cwd(), os.environ) is not None:
        return None  # the normal path says how to set a key, without a flash of the app
    try:
        from tui.fullscreen.run import run_app_from_argv
    except ImportError:
        return None
    code, handed_back = run_app_from_argv(argv)
    if handed_back is None:
        return code
    from tui.cli.main import dispatch

    return dispatch(handed_back, interactive=start_interactive)


def main() -> None:
    mark_trio_absent()
    argv = sys.argv[1:]
    if argv and argv[0] == "demo":
        from tui.demo.tour import main as demo_main

        exit_now(demo_main(argv[1:]))
    if argv and argv[0] == "doctor":
        from tui.cli.doctor import main as doctor_main

        exit_now(doctor_main(argv[1:]))
    if deferrable(argv) and (code := run_fast_interactive(argv)) is not None:
        exit_now(code)
    exit_now(run(argv, interactive=start_interactive))


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
