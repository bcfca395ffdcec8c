"""Turning plugins on and off, and declaring marketplaces: what ``/plugin`` writes.

A choice is written where Claude Code writes it: ``enabledPlugins`` (and, for
``/plugin marketplace add``, ``extraKnownMarketplaces``) in a settings file of
the scope asked for: ``user`` (ccx's own ``settings.json``, read after
``~/.claude/settings.json``, so it wins over it), ``project``
(``.claude/settings.json``) or ``local`` (``.claude/settings.local.json``). With
no scope, a plugin's choice goes where its current entry is, else to the user's
file. A plugin the machine's policy sets cannot be changed. The session's
plugins were loaded at its start: a change applies from the next session.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent.core.locations import config_dir
from agent.permissions.settings import (
    Settings,
    project_root,
    project_settings_files,
    set_setting_entry,
)
from agent.plugins.loader import ENABLED, enabled_scope
from agent.plugins.manifest import PluginError, read_plugin
from agent.plugins.marketplaces import CATALOGUE, KEY, Marketplace, declared, read_marketplace

SCOPES = ("user", "project", "local")


class PluginChoiceError(ValueError):
    """A choice that cannot be made; the text says why and writes nothing."""


@dataclass(frozen=True)
class Choice:
    plugin_id: str
    path: Path  # the settings file written
    scope: str


def settings_file(scope: str, cwd: Path) -> Path:
    """The settings file a scope's choices are written to."""
    if scope == "user":
        return config_dir() / "settings.json"
    shared, local = project_settings_files(project_root(cwd))
    return shared if scope == "project" else local


def find_plugin_id(settings: Settings, cwd: Path, wanted: str) -> tuple[str, Marketplace]:
    """``name@marketplace`` (or a name only one declared marketplace offers) and its
    marketplace; PluginChoiceError naming what exists when there is no such plugin."""
    warnings: list[str] = []
    markets = declared(settings, cwd, warnings)
    name, at, market_name = wanted.rpartition("@")
    if not at:
        name, market_name = wanted, ""
        offering = [m for m in markets.values() if name in m.entries]
        if len(offering) > 1:
            ids = ", ".join(f"{name}@{m.name}" for m in offering)
            raise PluginChoiceError(f"{name} is in more than one marketplace: say which ({ids})")
        if offering:
            market_name = offering[0].name
    market = markets.get(market_name)
    if market is None:
        known = ", ".join(markets) or "none; add one with /plugin marketplace add PATH"
        raise PluginChoiceError(f"No marketplace offers {wanted!r} (marketplaces: {known})")
    if name not in market.entries:
        offered = ", ".join(market.entries) or "nothing"
        raise PluginChoiceError(
            f"The marketplace {market.name} has no plugin {name!r} (it offers: {offered})"
        )
    return f"{name}@{market.name}", market


def set_enabled(
    settings: Settings, cwd: Path, wanted: str, on: bool, scope: str | None = None
) -> Choice:
    """Write ``enabledPlugins[id] = on``; PluginChoiceError when the plugin cannot be used
    (turning one on checks that it loads) or its choice is the policy's."""
    if scope is not None and scope not in SCOPES:
        raise PluginChoiceError(f"Unknown scope {scope!r}; use {', '.join(SCOPES)}")
    try:
        plugin_id, market = find_plugin_id(settings, cwd, wanted)
    except PluginChoiceError:
        if on or _enabled_entry(settings, wanted) is None:
            raise
        plugin_id = wanted  # an entry whose marketplace is gone can still be turned off
    else:
        entry = market.entries[plugin_id.rpartition("@")[0]]
        if on and entry.root is None:
            raise PluginChoiceError(f"{plugin_id}: {entry.problem}")
        if on and entry.root is not None:
            try:
                read_plugin(entry.root, plugin_id, "user", fallback=entry.manifest)
            except PluginError as exc:
                raise PluginChoiceError(str(exc)) from exc
    current = enabled_scope(settings, plugin_id)
    if current == "managed":
        raise PluginChoiceError(f"{plugin_id} is set by the managed policy; it cannot be changed")
    chosen = scope or (current if current in SCOPES else "user")
    path = settings_file(chosen, cwd)
    try:
        set_setting_entry(path, ENABLED, plugin_id, on)
    except (OSError, ValueError) as exc:
        raise PluginChoiceError(f"Could not write {path}: {exc}") from exc
    return Choice(plugin_id, path, chosen)


def _enabled_entry(settings: Settings, plugin_id: str) -> bool | None:
    value = settings.get(ENABLED)
    return value.get(plugin_id) if isinstance(value, dict) else None  # type: ignore[return-value]


def add_marketplace(path: Path, cwd: Path, scope: str = "user") -> tuple[Marketplace, Path]:
    """Declare the local marketplace at ``path`` (its folder, or its marketplace.json) in
    ``extraKnownMarketplaces`` under its own name; PluginChoiceError when it is not one."""
    folder = (cwd / Path(path).expanduser()).resolve()
    if folder.is_file() and folder.name == CATALOGUE.name:
        folder = folder.parent.parent
    try:
        market = read_marketplace(folder)
    except ValueError as exc:
        raise PluginChoiceError(f"Not a marketplace: {exc}") from exc
    target = settings_file(scope, cwd)
    spec = {"source": {"source": "directory", "path": str(folder)}}
    try:
        set_setting_entry(target, KEY, market.name, spec)
    except (OSError, ValueError) as exc:
        raise PluginChoiceError(f"Could not write {target}: {exc}") from exc
    return market, target


def remove_marketplace(settings: Settings, cwd: Path, name: str) -> Path:
    """Remove the marketplace ``name`` from the settings file that declares it."""
    source = next(
        (s for s in reversed(settings.sources) if isinstance(s.data.get(KEY), dict)
         and name in s.data[KEY]),
        None,
    )  # fmt: skip
    if source is None:
        raise PluginChoiceError(f"No marketplace {name!r} is declared in the settings")
    if source.kind not in SCOPES:
        raise PluginChoiceError(f"The marketplace {name} comes from {source.label}; not changed")
    path = settings_file(source.kind, cwd)
    if source.kind == "user" and Path(source.label) != path:
        path = Path(source.label)  # declared in ~/.claude/settings.json
    try:
        set_setting_entry(path, KEY, name, None)
    except (OSError, ValueError) as exc:
        raise PluginChoiceError(f"Could not write {path}: {exc}") from exc
    return path
