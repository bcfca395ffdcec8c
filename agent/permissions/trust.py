"""Trusting a folder: which folders the user trusts, and what a project's settings files
would turn on.

A repository can ship ``.claude/settings.json`` (and ``settings.local.json``)
with hooks (shell commands ccx runs), an ``env`` block (which may point the
API at another server), allow rules and a default permission mode that loosen
what ccx asks about; it can also ship commands, skills, agents, output styles
and MCP servers (tui.session.folder_trust lists those and asks the question).
The answer "trust" is kept in ``<config>/trusted-projects.json``. Until then,
and when the user continues without trusting, only the project's deny and ask
rules and the harmless keys of its settings apply (agent.permissions.settings'
``untrusted_view``).

Headless runs (``ccx -p``) do not ask: like ``claude -p`` they apply the
project's settings, so run them in folders you trust.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agent.core.locations import config_dir
from agent.permissions.settings import HARMLESS_KEYS, project_settings_files
from tools.atomic_file import atomic_write

TRUST_FILE = "trusted-projects.json"


def is_trusted(project: Path, config: Path | None = None) -> bool:
    return _key(project) in _load(config)


def trust(project: Path, config: Path | None = None) -> None:
    """Remember that the user trusts ``project`` (OSError when the file cannot be written)."""
    trusted = _load(config)
    trusted.add(_key(project))
    path = _trust_file(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"trusted": sorted(trusted)}
    atomic_write(path, (json.dumps(data, indent=2) + "\n").encode(), durable=True)


def settings_items(project: Path) -> list[str]:
    """What trusting ``project`` would turn on in its settings files, one short line each."""
    items: list[str] = []
    for path in project_settings_files(project):
        items += _enabled_by(path)
    return items


def _enabled_by(path: Path) -> list[str]:
    """The lines for the settings file at ``path``, each starting with the file's name."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict):
        return []
    found = []
    hooks = data.get("hooks")
    if isinstance(hooks, dict) and hooks:
        found.append(f"hooks that run commands ({short_list(list(hooks))})")
    env = data.get("env")
    if isinstance(env, dict) and env:
        found.append(f"env ({short_list(list(env))})")
    permissions = data.get("permissions")
    if isinstance(permissions, dict):
        allow = permissions.get("allow")
        if isinstance(allow, list) and allow:
            found.append(f"allow rules ({short_list(allow)})")
        mode = permissions.get("defaultMode")
        if isinstance(mode, str) and mode != "default":
            found.append(f"permission mode {mode}")
    status_line = data.get("statusLine")
    if isinstance(status_line, dict) and status_line.get("command"):
        found.append(f"status line command ({short_list([status_line['command']])})")
    helper = data.get("apiKeyHelper")
    if isinstance(helper, str) and helper.strip():
        found.append(f"apiKeyHelper command ({short_list([helper])})")
    plugins = data.get("enabledPlugins")
    if isinstance(plugins, dict) and (on := [k for k, v in plugins.items() if v is True]):
        found.append(f"plugins with their hooks and servers ({short_list(on)})")
    known = {"hooks", "env", "permissions", "statusLine", "apiKeyHelper", "enabledPlugins"}
    others = sorted(set(data) - known - HARMLESS_KEYS)
    if others:
        found.append(f"other settings ({short_list(others)})")
    return [f"{path.name}: {item}" for item in found]


def short_list(values: list[Any], limit: int = 3, width: int = 28) -> str:
    """Up to ``limit`` values, "and N more" after, the whole at most ``width`` characters:
    a trust question's line fits 80 columns."""
    more = f" and {len(values) - limit} more" if len(values) > limit else ""
    shown = ", ".join(str(v) for v in values[:limit])
    room = max(width - len(more), 8)
    if len(shown) > room:
        shown = shown[: room - 1].rstrip() + "…"
    return shown + more


def _key(project: Path) -> str:
    return os.path.realpath(project)


def _trust_file(config: Path | None) -> Path:
    return (config if config is not None else config_dir()) / TRUST_FILE


def _load(config: Path | None) -> set[str]:
    try:
        data = json.loads(_trust_file(config).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    trusted = data.get("trusted") if isinstance(data, dict) else None
    return {p for p in trusted if isinstance(p, str)} if isinstance(trusted, list) else set()
