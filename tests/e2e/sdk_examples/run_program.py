"""Run one of the Agent SDK's example programs unchanged, with the CLI named by CCX_SDK_CLI.

The SDK starts its bundled Claude Code unless told otherwise, and the example programs do
not say: this runner points the SDK's CLI lookup at CCX_SDK_CLI (ccx, or a Claude Code
binary), then runs the program as ``__main__`` with the remaining arguments.

    python run_program.py PROGRAM.py [ARGS...]
"""

from __future__ import annotations

import os
import runpy
import sys

from claude_agent_sdk._internal.transport import subprocess_cli


def main() -> None:
    cli = os.environ["CCX_SDK_CLI"]
    subprocess_cli.SubprocessCLITransport._find_cli = lambda self: cli  # type: ignore[method-assign]
    program, *args = sys.argv[1:]
    sys.argv = [program, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
