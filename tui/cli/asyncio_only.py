"""A `ccx` process runs on asyncio, never on trio: trio is marked absent for it.

httpcore2 (under the SDK's HTTP client) imports trio when it is installed, so that
it could run under it; ccx never does, and that import took about 40 ms of CPU on the
path to a cold ``ccx -p``'s first request wherever trio is installed (the development
environment has it for the Agent SDK's trio example, which runs ccx as a subprocess).
Only the `ccx` command does this, and only when nothing imported trio yet; a program
that imports ccx's modules keeps its own.
"""

from __future__ import annotations

import sys


def mark_trio_absent() -> None:
    """Make ``import trio`` in this process raise ImportError (``sys.modules[name] = None``,
    as the import system documents), unless trio is loaded already."""
    sys.modules.setdefault("trio", None)  # type: ignore[arg-type]
