"""The stdio transport: spawned before the mcp package is imported, ended as the spec says,
lines of any length; the command line's early start; the lean import of the package."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.mcp import stdio_transport
from agent.mcp.early_start import claim_early, end_unclaimed, start_named_servers
from agent.mcp.stdio_transport import SpawnSpec, end_server, spawn_server
from tests.mcp.servers import SERVER, stdio_entry
from tests.mcp.test_connection import by_name, call, servers_for

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, tmp_path: Path) -> str:
    """``code`` in a fresh interpreter (nothing of the mcp package imported yet): its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "MARK": str(tmp_path / "started")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_stdio_server_is_running_before_the_mcp_package_is_imported(tmp_path: Path) -> None:
    # The server's command marks its start; start() returns before the loop has run anything,
    # and the loop does not run while this waits: the process was spawned by start() itself.
    code = f"""
import asyncio, os, sys, time
from pathlib import Path
from agent.mcp.config import McpConfig, parse_server
from agent.mcp.servers import McpServers
entry = {{"command": "sh", "args": ["-c", 'touch "$MARK"; exec "$0" "$@"', {sys.executable!r},
         {SERVER!r}], "env": {{"MARK": os.environ["MARK"]}}}}
async def main():
    config = McpConfig({{"calc": parse_server("calc", entry, "dynamic", "test", {{}})}})
    servers = McpServers(config, {{}}, True, Path.cwd(), Path("unused.json"))
    servers.start()
    deadline = time.monotonic() + 10
    while not Path(os.environ["MARK"]).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    print("started", Path(os.environ["MARK"]).exists(), "imported", "mcp.client.session" in sys.modules)
    await servers.wait(60)
    servers.publish()
    print("tools", "mcp__calc__add" in [t.name for t in servers.tools()])
    await servers.aclose()
asyncio.run(main())
"""
    out = run_python(code, tmp_path)
    assert "started True imported False" in out
    assert "tools True" in out


def test_the_lean_import_leaves_out_the_server_side_and_loses_nothing(tmp_path: Path) -> None:
    code = """
import sys
from agent.mcp.client_import import import_client
import_client()
print("server side", "mcp.server" in sys.modules, "session", "mcp.client.session" in sys.modules)
from mcp.client.session import ClientSession
from mcp import ClientSession as again, types
from mcp.client import Client
print("same", again is ClientSession, "types", types.Tool.__name__, "client", Client.__name__)
"""
    out = run_python(code, tmp_path)
    assert "server side False session True" in out
    assert "same True types Tool client Client" in out


async def test_long_lines_and_many_messages_cross_the_pipes_whole(tmp_path: Path) -> None:
    servers = servers_for(tmp_path, calc=stdio_entry())
    servers.start()
    await servers.wait(30)
    try:
        tools = by_name(servers)
        size = stdio_transport.READ_CHUNK * 5 + 17  # one line over several reads
        big = await servers.connections["calc"].call_tool("big", {"size": size})
        assert len(big.content[0].text) == size and not big.is_error
        sums = await asyncio.gather(
            *(call(tools["mcp__calc__add"], tmp_path, a=i, b=1) for i in range(40))
        )
        assert [s.output for s in sums] == [
            json.dumps({"result": i + 1}, separators=(",", ":")) for i in range(40)
        ]
    finally:
        await servers.aclose()


def stubborn(tmp_path: Path) -> SpawnSpec:
    """A server that ignores its stdin's end and SIGTERM (a child of it too)."""
    script = "trap '' TERM; sleep 60 & exec sleep 60"
    return SpawnSpec.of("sh", ["-c", script], {}, tmp_path)


def group_alive(pgid: int) -> bool:
    """Whether a process of the group runs (a zombie, dead and not yet reaped, does not)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":  # state, ppid, pgrp
            return True
    return False


async def test_a_server_that_ignores_the_end_of_stdin_and_sigterm_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stdio_transport, "EXIT_GRACE_S", 0.3)
    monkeypatch.setattr(stdio_transport, "TERM_GRACE_S", 0.3)
    spawned = spawn_server(stubborn(tmp_path))
    assert spawned.process.stdin is not None
    spawned.process.stdin.close()
    started = time.monotonic()
    await end_server(spawned.process)
    assert spawned.process.returncode == -signal.SIGKILL
    assert 0.5 < time.monotonic() - started < 5
    await asyncio.sleep(0.2)  # the background sleep, killed with its group
    assert not group_alive(spawned.process.pid)
    spawned.errlog.close()


async def test_an_ending_cancelled_kills_the_server_at_once(tmp_path: Path) -> None:
    spawned = spawn_server(stubborn(tmp_path))
    ending = asyncio.ensure_future(end_server(spawned.process))
    await asyncio.sleep(0.1)
    ending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await ending
    assert spawned.process.wait(5) == -signal.SIGKILL
    spawned.errlog.close()


async def test_servers_started_early_are_taken_over_or_killed(tmp_path: Path) -> None:
    def logged(name: str, *command: str) -> dict:
        """``command``, writing its pid to ``<name>.log`` as it starts."""
        log = str(tmp_path / f"{name}.log")
        script = 'echo "$$" >> "$LOG"; exec "$0" "$@"'
        return {"command": "sh", "args": ["-c", script, *command], "env": {"LOG": log}}

    calc, idle = logged("calc", sys.executable, SERVER), logged("idle", "sleep", "60")
    values = [
        json.dumps({"mcpServers": {"calc": calc}}),
        json.dumps({"mcpServers": {"idle": idle}}),
    ]
    assert start_named_servers(values, tmp_path) == 2
    idle_log = tmp_path / "idle.log"
    deadline = time.monotonic() + 10
    while not (idle_log.exists() and idle_log.read_text().strip()) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)  # its pid written, before it is killed
    servers = servers_for(tmp_path, calc=calc)  # the session starts calc, not idle
    servers.start()
    end_unclaimed()
    await servers.wait(30)
    try:
        assert "mcp__calc__add" in by_name(servers)
        assert len((tmp_path / "calc.log").read_text().split()) == 1  # not started again
        (idle_pid,) = (int(pid) for pid in idle_log.read_text().split())
        assert not group_alive(idle_pid)
    finally:
        await servers.aclose()
    assert claim_early(SpawnSpec.of("sh", [], {}, tmp_path)) is None


async def test_a_server_started_early_with_another_environment_is_not_taken(tmp_path: Path) -> None:
    entry = {"command": "sh", "args": ["-c", "exec sleep 60"], "env": {"A": "1"}}
    start_named_servers([json.dumps({"mcpServers": {"s": entry}})], tmp_path)
    try:
        assert (
            claim_early(SpawnSpec.of("sh", ["-c", "exec sleep 60"], {"A": "2"}, tmp_path)) is None
        )
        taken = claim_early(SpawnSpec.of("sh", ["-c", "exec sleep 60"], {"A": "1"}, tmp_path))
        assert taken is not None
        taken.process.kill()
        taken.process.wait(5)
        taken.errlog.close()
    finally:
        end_unclaimed()
