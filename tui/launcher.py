"""The `ccx` console script: headless runs go to agent.cli, interactive ones to a front end here."""

from __future__ import annotations

import sys

from agent.cli import run


def _interactive(options: object, prompt: str | None, plain: bool) -> int:
    print(
        "ccx: the interactive app is not built yet; run headless with -p, "
        "e.g. ccx -p 'explain this repo'",
        file=sys.stderr,
    )
    return 2


def main() -> None:
    sys.exit(run(sys.argv[1:], interactive=_interactive))
