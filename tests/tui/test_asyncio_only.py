"""tui.cli.asyncio_only: a `ccx` process marks trio absent, unless it is loaded already."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.import_graph import ROOT


def run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_trio_is_not_imported_and_the_http_client_still_works() -> None:
    pytest.importorskip("trio")  # installed with the test extras: what makes the mark matter
    code = (
        "from tui.cli.asyncio_only import mark_trio_absent\n"
        "mark_trio_absent()\n"
        "try:\n    import trio\nexcept ImportError:\n    print('absent')\n"
        "import asyncio, httpx2\n"
        "async def main():\n"
        "    async with httpx2.AsyncClient() as client:\n"
        "        return type(client).__name__\n"
        "print(asyncio.run(main()))\n"
    )
    assert run(code).splitlines() == ["absent", "AsyncClient"]


def test_a_trio_already_loaded_stays() -> None:
    pytest.importorskip("trio")
    code = (
        "import trio\n"
        "from tui.cli.asyncio_only import mark_trio_absent\n"
        "mark_trio_absent()\n"
        "import trio as again\n"
        "print(again is trio)\n"
    )
    assert run(code) == "True"
