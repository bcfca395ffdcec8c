"""Trusting a folder: nothing the project configures takes effect before the user says so.

A repository can ship ``.claude/settings.json`` (and ``settings.local.json``)
with hooks (shell commands ccx runs), an ``env`` block (which may point the
API at another server), allow rules and a default permission mode that loosen
what ccx asks about. Interactive sessions ask once per project before any of
that applies, as Claude Code's trust dialog does; the answer "trust" is kept
in ``<config>/trusted-projects.json``. Until then, and when the user continues
without trusting, only the project's deny and ask rules apply (they can only
make ccx more careful). A project with nothing of the kind is not asked about.

Headless runs (``ccx -p``) do not ask: like ``claude -p`` they apply the
project's settings, so run them in folders you trust.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.core.locations import config_dir
from agent.permissions.settings import HARMLESS_KEYS, project_settings_files
from tools.atomic_file import atomic_write

TRUST_FILE = "trusted-projects.json"


@dataclass
class TrustQuestion:
    """What trusting ``project`` would turn on, one line per item, for the dialog."""

    project: Path
    items: list[str] = field(default_factory=list)


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


def trust_question(project: Path, config: Path | None = None) -> TrustQuestion | None:
    """What the user should be asked before ``project``'s settings apply; None when nothing
    needs asking (already trusted, or the project configures nothing that trust would enable)."""
    if is_trusted(project, config):
        return None
    items: list[str] = []
    for path in project_settings_files(project):
        items += _enabled_by(path, project)
    return TrustQuestion(project, items) if items else None


def _enabled_by(path: Path, project: Path) -> list[str]:
    """One line for the settings file at ``path``: what trusting it would turn on."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict):
        return []
    found = []
    hooks = data.get("hooks")
    if isinstance(hooks, dict) and hooks:
        found.append(f"hooks that run commands ({', '.join(map(str, hooks))})")
    env = data.get("env")
    if isinstance(env, dict) and env:
        found.append(f"environment variables ({', '.join(map(str, env))})")
    permissions = data.get("permissions")
    if isinstance(permissions, dict):
        allow = permissions.get("allow")
        if isinstance(allow, list) and allow:
            found.append(f"rules that allow tools without asking ({_short(allow)})")
        mode = permissions.get("defaultMode")
        if isinstance(mode, str) and mode != "default":
            found.append(f"the permission mode {mode}")
    status_line = data.get("statusLine")
    if isinstance(status_line, dict) and status_line.get("command"):
        found.append(f"a status line command ({_short([status_line['command']])})")
    others = sorted(set(data) - {"hooks", "env", "permissions", "statusLine"} - HARMLESS_KEYS)
    if others:
        found.append(f"other settings ({', '.join(others)})")
    return [f"{os.path.relpath(path, project)}: {'; '.join(found)}"] if found else []


def _short(values: list[Any], limit: int = 4) -> str:
    shown = ", ".join(str(v) for v in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


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
