"""Local plugin marketplaces: folders whose ``.claude-plugin/marketplace.json`` lists plugins.

A marketplace is declared in the settings' ``extraKnownMarketplaces``, by name:
``{"team": {"source": {"source": "directory", "path": "/srv/plugins"}}}`` (or
``"source": "file"`` with the path of the ``marketplace.json`` itself); ``/plugin
marketplace add PATH`` writes such an entry. Its ``marketplace.json`` holds
``name`` and ``plugins``, each with a ``name`` and a ``source``: a path relative
to the marketplace's folder (below ``metadata.pluginRoot`` when given). ccx
reads only local marketplaces and plugins: a git, GitHub or URL source is named
in a warning, never fetched. A relative ``path`` in a project's settings is taken
from the project's folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.permissions.settings import Settings, project_root

CATALOGUE = Path(".claude-plugin") / "marketplace.json"
KEY = "extraKnownMarketplaces"


@dataclass(frozen=True)
class MarketplaceEntry:
    """One plugin a marketplace offers: its folder (None when it is not a local one)."""

    name: str
    root: Path | None
    description: str
    manifest: dict[str, Any]  # the entry as written: the manifest of a plugin that has none
    problem: str | None = None  # why it cannot be installed from here


@dataclass
class Marketplace:
    name: str
    root: Path  # the folder holding .claude-plugin/marketplace.json
    scope: str  # the settings kind that declares it (user, project, local, flag, managed)
    entries: dict[str, MarketplaceEntry] = field(default_factory=dict)


def declared(settings: Settings, cwd: Path, warnings: list[str]) -> dict[str, Marketplace]:
    """The marketplaces the settings declare, by name, read; a broken one is warned of."""
    found: dict[str, Marketplace] = {}
    for source in settings.sources:  # lowest priority first: a later one replaces
        value = source.data.get(KEY)
        if value is None:
            continue
        if not isinstance(value, dict):
            warnings.append(f"{KEY} in {source.label} is not an object; ignored.")
            continue
        base = project_root(cwd) if source.kind in ("project", "local") else Path.home()
        for name, spec in value.items():
            try:
                root = _declared_root(spec, base)
                found[str(name)] = read_marketplace(root, str(name), source.kind)
            except ValueError as exc:
                warnings.append(f"Plugin marketplace {name!r} in {source.label}: {exc}; skipped.")
                found.pop(str(name), None)
    return found


def _declared_root(spec: Any, base: Path) -> Path:
    source = spec.get("source") if isinstance(spec, dict) else None
    if not isinstance(source, dict):
        raise ValueError('it needs a "source" object')
    kind = source.get("source")
    path = source.get("path")
    if kind not in ("directory", "file"):
        raise ValueError(
            f"its source is {kind!r}; ccx reads local marketplaces only (directory or file)"
        )
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f'a {kind} source needs a "path"')
    folder = base / Path(path).expanduser()
    if kind == "file":  # the marketplace.json itself, in <root>/.claude-plugin/
        return folder.parent.parent
    return folder


def read_marketplace(root: Path, name: str | None = None, scope: str = "user") -> Marketplace:
    """The marketplace in ``root``; ValueError says what is wrong with it."""
    root = root.resolve()
    path = root / CATALOGUE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{root} has no {CATALOGUE}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} cannot be read ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    own = data.get("name")
    if name is None:
        if not isinstance(own, str) or not own.strip():
            raise ValueError(f'{path} has no "name"')
        name = own
    market = Marketplace(name, root, scope)
    plugins = data.get("plugins")
    if not isinstance(plugins, list):
        raise ValueError(f'{path} has no "plugins" list')
    metadata = data.get("metadata")
    base = metadata.get("pluginRoot") if isinstance(metadata, dict) else None
    base_dir = root / base if isinstance(base, str) else root
    for item in plugins:
        entry = _entry(item, base_dir)
        if entry is not None:
            market.entries.setdefault(entry.name, entry)
    return market


def _entry(item: Any, base: Path) -> MarketplaceEntry | None:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    name = item["name"]
    description = item.get("description")
    text = description if isinstance(description, str) else ""
    source = item.get("source")
    if isinstance(source, str) and source.strip():
        return MarketplaceEntry(name, (base / source).resolve(), text, item)
    kind = source.get("source") if isinstance(source, dict) else source
    return MarketplaceEntry(
        name, None, text, item, f"its source is {kind!r}; ccx installs local plugins only"
    )
