"""Which plugins a session loads: ``--plugin-dir`` folders, then ``enabledPlugins``.

``--plugin-dir PATH`` (repeatable) loads the plugin in that folder, or each
plugin in its subfolders, for this session, named ``<name>@inline``. The
settings' ``enabledPlugins`` (``{"name@marketplace": true}``, merged across the
settings files as any object is: a later file's ``false`` turns off an earlier
``true``) loads each plugin turned on from the marketplace it names
(agent.plugins.marketplaces). The settings are the session's: a source that
``--setting-sources`` leaves out, or a project's file in a folder not trusted
(agent.permissions.settings' ``untrusted_view``), declares and turns on nothing.
A plugin that cannot be loaded is named in a warning and skipped; the others load.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agent.instructions.definition_files import PluginFolder
from agent.permissions.settings import Settings

if TYPE_CHECKING:  # imported when there is a plugin to read: most sessions have none
    from agent.plugins.manifest import Plugin
    from agent.plugins.marketplaces import Marketplace

ENABLED = "enabledPlugins"
INLINE = "inline"


@dataclass
class LoadedPlugins:
    """The session's plugins, in load order, and what was skipped and why."""

    plugins: list[Plugin] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    marketplaces: dict[str, Marketplace] = field(default_factory=dict)

    def find(self, name: str) -> Plugin | None:
        """The plugin called ``name``, or whose source (``name@marketplace``) is ``name``."""
        return next((p for p in self.plugins if name in (p.name, p.source)), None)

    def folders(self, kind: Literal["commands", "agents", "skills"]) -> list[PluginFolder]:
        """Every plugin's folders (or files) of one kind, for agent.instructions' loaders."""
        return [
            PluginFolder(path, plugin.name, plugin.root)
            for plugin in self.plugins
            for path in getattr(plugin, kind)
        ]

    def project_hook_commands(self) -> set[str]:
        """The hook commands of plugins a project's settings turned on: they run in the Bash
        sandbox, as the project's own hooks do."""
        commands: set[str] = set()
        for plugin in self.plugins:
            if plugin.scope not in ("project", "local"):
                continue
            for groups in plugin.hooks.values():
                for group in groups if isinstance(groups, list) else ():
                    entries = group.get("hooks") if isinstance(group, dict) else None
                    for entry in entries if isinstance(entries, list) else ():
                        if isinstance(entry, dict) and isinstance(entry.get("command"), str):
                            commands.add(entry["command"])
        return commands

    def add(self, plugin: Plugin) -> None:
        if (other := self.find(plugin.name)) is not None:
            self.warnings.append(
                f"Plugin {plugin.source} ({plugin.root}) has the name of {other.source} "
                f"({other.root}), loaded already; skipped."
            )
            return
        self.plugins.append(plugin)


def enabled_ids(settings: Settings) -> dict[str, bool]:
    """``enabledPlugins`` as merged: plugin id -> on (a list of ids, the old form, is all on)."""
    value = settings.get(ENABLED)
    if isinstance(value, list):
        return {str(item): True for item in value if isinstance(item, str)}
    if isinstance(value, dict):
        return {str(k): v is True for k, v in value.items()}
    return {}


def enabled_scope(settings: Settings, plugin_id: str) -> str | None:
    """The kind of the highest-priority settings source that mentions ``plugin_id``."""
    for source in reversed(settings.sources):
        value = source.data.get(ENABLED)
        if isinstance(value, dict) and plugin_id in value:
            return source.kind
        if isinstance(value, list) and plugin_id in value:
            return source.kind
    return None


def load_plugins(settings: Settings, plugin_dirs: Sequence[Path], cwd: Path) -> LoadedPlugins:
    """The plugins of ``--plugin-dir`` and of ``enabledPlugins``, each read and checked."""
    loaded = LoadedPlugins()
    for folder in plugin_dirs:
        for root in _plugin_roots(Path(folder).expanduser(), loaded.warnings):
            _load_inline(loaded, root)
    value = settings.get(ENABLED)
    if value is not None and not isinstance(value, dict | list):
        loaded.warnings.append(f"{ENABLED} in the settings is not an object; ignored.")
    enabled = [plugin_id for plugin_id, on in enabled_ids(settings).items() if on]
    if enabled or settings.get("extraKnownMarketplaces") is not None:
        from agent.plugins.marketplaces import declared

        loaded.marketplaces = declared(settings, cwd, loaded.warnings)
    for plugin_id in enabled:
        _load_enabled(loaded, settings, plugin_id)
    return loaded


def _load_inline(loaded: LoadedPlugins, root: Path) -> None:
    from agent.plugins.manifest import PluginError, read_plugin

    try:
        loaded.add(read_plugin(root, f"{{name}}@{INLINE}", "flag"))
    except PluginError as exc:
        loaded.warnings.append(f"{exc}; skipped.")


def _load_enabled(loaded: LoadedPlugins, settings: Settings, plugin_id: str) -> None:
    name, at, market_name = plugin_id.rpartition("@")
    if not at or not name:
        loaded.warnings.append(
            f"{ENABLED}: {plugin_id!r} should be written name@marketplace; skipped."
        )
        return
    market = loaded.marketplaces.get(market_name)
    if market is None:
        loaded.warnings.append(
            f"Plugin {plugin_id} is enabled, but no marketplace {market_name!r} is known "
            "(declare it in extraKnownMarketplaces, or /plugin marketplace add PATH); skipped."
        )
        return
    entry = market.entries.get(name)
    if entry is None:
        loaded.warnings.append(
            f"Plugin {plugin_id} is enabled, but the marketplace {market_name} "
            f"({market.root}) has no plugin {name!r}; skipped."
        )
        return
    if entry.root is None:
        loaded.warnings.append(f"Plugin {plugin_id}: {entry.problem}; skipped.")
        return
    from agent.plugins.manifest import PluginError, read_plugin

    scope = enabled_scope(settings, plugin_id) or "user"
    try:
        plugin = read_plugin(entry.root, plugin_id, scope, fallback=entry.manifest)
    except PluginError as exc:
        loaded.warnings.append(f"{exc}; skipped.")
        return
    loaded.add(plugin)


def _plugin_roots(folder: Path, warnings: list[str]) -> list[Path]:
    """``--plugin-dir``'s folder when it is a plugin, else each plugin folder inside it."""
    from agent.plugins.manifest import is_plugin_folder

    if not folder.is_dir():
        warnings.append(f"--plugin-dir {folder}: not a folder; skipped.")
        return []
    if is_plugin_folder(folder):
        return [folder]
    try:
        inside = sorted(child for child in folder.iterdir() if is_plugin_folder(child))
    except OSError as exc:
        warnings.append(f"--plugin-dir {folder}: cannot be listed ({exc}); skipped.")
        return []
    if not inside:
        warnings.append(
            f"--plugin-dir {folder}: no plugin there (a plugin has .claude-plugin/plugin.json); "
            "skipped."
        )
    return inside
