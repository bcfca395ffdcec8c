"""A plugin's folder and its manifest, ``.claude-plugin/plugin.json``, read and checked.

A plugin is a folder whose ``.claude-plugin/plugin.json`` names it (``name``, and
optionally ``version``, ``description``, ``author``...). Its parts sit in folders
of their own: ``commands/``, ``agents/``, ``skills/``, ``hooks/hooks.json`` and
``.mcp.json``; the manifest's ``commands``, ``agents`` and ``skills`` add more
paths to those, and its ``hooks`` and ``mcpServers`` (a path, or the object
itself) replace the default files. Every path a manifest gives stays inside the
plugin's folder. ``${CLAUDE_PLUGIN_ROOT}`` in the hooks' and servers' strings is
the plugin's folder. What cannot be used raises ``PluginError`` with a sentence
naming the plugin and what is wrong, so the caller skips that plugin alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST = Path(".claude-plugin") / "plugin.json"
ROOT_VARIABLE = "${CLAUDE_PLUGIN_ROOT}"
# A plugin's name is the namespace of its commands, skills and agents: no ":" or "/" in it.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
PATH_FIELDS = ("commands", "agents", "skills")


class PluginError(ValueError):
    """A plugin that cannot be loaded; the text says which and why."""


@dataclass(frozen=True)
class Plugin:
    """One plugin, read: where it is, what it is called, and where its parts are."""

    name: str
    root: Path
    source: str  # "<name>@<marketplace>", or "<name>@inline" for --plugin-dir
    scope: str  # where it was turned on: "flag" (--plugin-dir), user, project, local, managed
    version: str | None = None
    description: str = ""
    commands: tuple[Path, ...] = ()  # folders of command files, or single files
    agents: tuple[Path, ...] = ()
    skills: tuple[Path, ...] = ()  # folders of skill folders, or one skill's folder
    hooks: dict[str, Any] = field(default_factory=dict)  # event -> groups, root expanded
    mcp_servers: dict[str, Any] = field(default_factory=dict)  # name -> config, root expanded


def is_plugin_folder(folder: Path) -> bool:
    return (folder / ".claude-plugin").is_dir()


def read_plugin(
    root: Path, source: str, scope: str, fallback: dict[str, Any] | None = None
) -> Plugin:
    """The plugin in ``root``; ``fallback``: a marketplace's entry, the manifest of a plugin
    that ships none. PluginError says what is wrong."""
    root = root.resolve()
    if not root.is_dir():
        raise PluginError(f"Plugin folder {root} does not exist")
    data = _manifest(root, fallback)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise PluginError(f'Plugin {root}: {MANIFEST} has no "name"')
    if not NAME.fullmatch(name):
        raise PluginError(
            f"Plugin {root}: its name {name!r} may hold only letters, digits, '.', '_' and '-'"
        )
    version = data.get("version")
    description = data.get("description")
    return Plugin(
        name=name,
        root=root,
        source=source.replace("{name}", name),
        scope=scope,
        version=version if isinstance(version, str) and version else None,
        description=description.strip() if isinstance(description, str) else "",
        commands=_paths(root, data, "commands"),
        agents=_paths(root, data, "agents"),
        skills=_paths(root, data, "skills"),
        hooks=_hooks(root, data.get("hooks")),
        mcp_servers=_servers(root, data.get("mcpServers")),
    )


def _manifest(root: Path, fallback: dict[str, Any] | None) -> dict[str, Any]:
    path = root / MANIFEST
    if not path.is_file():
        if fallback is not None:
            return fallback
        if (root / ".claude-plugin").is_dir():
            return {"name": root.name}  # a manifest is optional: the folder names the plugin
        raise PluginError(f"{root} is not a plugin: it has no {MANIFEST}")
    data = _read_json(path, f"Plugin {root}: {MANIFEST}")
    if not isinstance(data, dict):
        raise PluginError(f"Plugin {root}: {MANIFEST} does not hold a JSON object")
    return data


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PluginError(f"{what} cannot be read ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise PluginError(f"{what} is not valid JSON ({exc})") from exc


def _inside(root: Path, text: Any, what: str) -> Path:
    """A manifest's relative path, resolved; PluginError when it leaves the plugin."""
    if not isinstance(text, str) or not text.strip():
        raise PluginError(f"Plugin {root}: {what} must be a path (a string)")
    path = (root / text).resolve()
    if path != root and root not in path.parents:
        raise PluginError(f"Plugin {root}: {what} {text!r} leads outside the plugin's folder")
    return path


def _paths(root: Path, data: dict[str, Any], key: str) -> tuple[Path, ...]:
    """The default folder (when there) and the manifest's extra paths (when they exist)."""
    found = [root / key] if (root / key).is_dir() else []
    given = data.get(key)
    items = given if isinstance(given, list) else [] if given is None else [given]
    for item in items:
        path = _inside(root, item, f'"{key}"')
        if not path.exists():
            raise PluginError(f'Plugin {root}: "{key}" names {item!r}, which does not exist')
        if path not in found:
            found.append(path)
    return tuple(found)


def _hooks(root: Path, given: Any) -> dict[str, Any]:
    if given is None:
        default = root / "hooks" / "hooks.json"
        if not default.is_file():
            return {}
        given = "./hooks/hooks.json"
    data = _config(root, given, '"hooks"')
    inner = data.get("hooks")
    events = inner if isinstance(inner, dict) else data
    events = {k: v for k, v in events.items() if k != "description"}
    return expand_root(events, root)


def _servers(root: Path, given: Any) -> dict[str, Any]:
    if given is None:
        if not (root / ".mcp.json").is_file():
            return {}
        given = "./.mcp.json"
    data = _config(root, given, '"mcpServers"')
    inner = data.get("mcpServers")
    return expand_root(inner if isinstance(inner, dict) else data, root)


def _config(root: Path, given: Any, what: str) -> dict[str, Any]:
    """A part's configuration: the object itself, or the file a path names."""
    data = given
    if not isinstance(given, dict):
        path = _inside(root, given, what)
        data = _read_json(path, f"Plugin {root}: {path.relative_to(root)}")
    if not isinstance(data, dict):
        raise PluginError(f"Plugin {root}: {what} must be a JSON object")
    return data


def expand_root(value: Any, root: Path) -> Any:
    """``value`` with every ``${CLAUDE_PLUGIN_ROOT}`` in its strings made ``root``."""
    if isinstance(value, str):
        return value.replace(ROOT_VARIABLE, str(root))
    if isinstance(value, list):
        return [expand_root(item, root) for item in value]
    if isinstance(value, dict):
        return {key: expand_root(item, root) for key, item in value.items()}
    return value
