"""Which configured servers may start: Claude Code's approval of a project's ``.mcp.json``.

A project server starts only when the folder is trusted and the settings
approve it (``enableAllProjectMcpServers``, or its name in
``enabledMcpjsonServers``); its name in ``disabledMcpjsonServers`` keeps it
off. Any other project server waits for the user's answer, which is saved
in ``.claude/settings.local.json`` so it is asked once. Servers from the
user's configuration and ``--mcp-config`` are the user's own and start.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any, Literal

from agent.mcp.config import ServerConfig
from agent.permissions.settings import read_settings_object
from tools.atomic_file import atomic_write

Approval = Literal["approved", "pending", "disabled", "untrusted"]


def approval(server: ServerConfig, settings: dict[str, Any], trusted: bool) -> Approval:
    """The state a server starts in, before anything is connected."""
    if server.scope != "project":
        return "approved"
    if not trusted:
        return "untrusted"
    if server.name in _names(settings.get("disabledMcpjsonServers")):
        return "disabled"
    if settings.get("enableAllProjectMcpServers") is True:
        return "approved"
    if server.name in _names(settings.get("enabledMcpjsonServers")):
        return "approved"
    return "pending"


def remember_answer(settings_file: Path, name: str, approve: bool) -> None:
    """Save the user's answer for one project server (OSError / ValueError if it cannot)."""
    add_to, remove_from = (
        ("enabledMcpjsonServers", "disabledMcpjsonServers")
        if approve
        else ("disabledMcpjsonServers", "enabledMcpjsonServers")
    )
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(settings_file.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # other ccx processes write this file too
        data = read_settings_object(settings_file)
        if remove_from in data:
            data[remove_from] = [n for n in _names(data.get(remove_from)) if n != name]
        names = _names(data.get(add_to))
        if name not in names:
            data[add_to] = [*names, name]
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        atomic_write(settings_file, text.encode(), durable=True)
    finally:
        os.close(fd)


def _names(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []
