"""``--mcp-config``'s stdio servers, started by a headless run's command line before the session.

A ``ccx -p`` (or the Agent SDK's stream-json run) spends its first second or more importing
Python: the session's modules, the API client, the mcp package. A node or Python MCP server
takes a while to start too, mostly on another core. The servers ``--mcp-config`` names are
the caller's own and always start (no approval, no project trust: the Agent SDK passes its
servers this way), so the command line starts them at once (``start_named_servers``) and
the session takes each over when it starts the same server (``claim_early``): the same
command, arguments, environment and folder (``SpawnSpec``). One the session does not take
(the settings' ``env`` changed a variable it names, another ``--cwd``...) is killed when
the session has started its servers (``end_unclaimed``), or by the command line as
it ends. A server with a configuration problem is not started early.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from agent.mcp.config import McpConfig, add_mcp_config_values
from agent.mcp.stdio_transport import SpawnedServer, SpawnSpec, signal_group, spawn_server

_waiting: dict[SpawnSpec, SpawnedServer] = {}  # started early, not yet claimed


def start_named_servers(values: list[str], cwd: Path) -> int:
    """Start the stdio servers ``--mcp-config``'s ``values`` name, each in ``cwd`` (the
    project's root, where the session starts them); how many were started."""
    config = McpConfig()
    add_mcp_config_values(config, values, os.environ)
    started = 0
    for server in config.servers.values():
        if server.transport != "stdio" or server.error is not None:
            continue
        spec = SpawnSpec.of(server.command, server.args, server.env, cwd)
        if spec in _waiting:
            continue
        try:
            _waiting[spec] = spawn_server(spec)
        except (OSError, ValueError):  # the session meets the same error and reports it
            continue
        started += 1
    return started


def claim_early(spec: SpawnSpec) -> SpawnedServer | None:
    """The server started early with exactly ``spec``, still running, now the caller's."""
    spawned = _waiting.pop(spec, None)
    if spawned is not None and spawned.process.poll() is not None:  # exited meanwhile
        _end(spawned)
        return None
    return spawned


def end_unclaimed() -> None:
    """Kill the servers started early that no session took."""
    while _waiting:
        _end(_waiting.popitem()[1])


def _end(spawned: SpawnedServer) -> None:
    signal_group(spawned.process, signal.SIGKILL)
    with contextlib.suppress(Exception):
        spawned.process.wait(1)
    for pipe in (spawned.process.stdin, spawned.process.stdout):
        if pipe is not None:
            pipe.close()
    spawned.errlog.close()
