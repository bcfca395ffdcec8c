"""Helpers that start the test MCP server (tests/mcp/mcp_test_server.py) for real."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))


def stdio_entry(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """An ``mcpServers`` entry that runs the test server over stdio with this Python."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [SERVER, *args]}
    if env:
        entry["env"] = env
    return entry


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def http_server(mode: str = "http") -> Iterator[str]:
    """The test server over streamable HTTP (or SSE) on 127.0.0.1; yields its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, SERVER, mode, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"the test MCP server exited with {proc.returncode}"
                    ) from None
                time.sleep(0.05)
        path = "/mcp" if mode == "http" else "/sse"
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        proc.terminate()
        proc.wait(10)
