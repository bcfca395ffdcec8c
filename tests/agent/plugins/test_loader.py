"""Which plugins a session loads: --plugin-dir, enabledPlugins from local marketplaces, the
settings sources and trust that limit them, and warnings for what cannot load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.permissions.settings import load_settings
from agent.plugins.loader import load_plugins
from agent.plugins.marketplaces import read_marketplace
from tests.plugin_files import write_marketplace, write_plugin


def write_settings(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


@pytest.fixture
def market(tmp_path: Path) -> Path:
    root = write_marketplace(
        tmp_path / "market", "team", {"demo": "./plugins/demo", "gone": "./plugins/gone"}
    )
    write_plugin(root / "plugins" / "demo", server=False)
    return root


def declare(market: Path, enabled: dict[str, bool]) -> dict[str, Any]:
    source = {"source": "directory", "path": str(market)}
    return {"extraKnownMarketplaces": {"team": {"source": source}}, "enabledPlugins": enabled}


def test_plugin_dirs_load_one_plugin_or_each_inside(tmp_path: Path, config: Path) -> None:
    write_plugin(tmp_path / "all" / "a", name="a", server=False)
    write_plugin(tmp_path / "all" / "b", name="b", server=False)
    single = write_plugin(tmp_path / "c", name="c", server=False)
    (tmp_path / "empty").mkdir()
    settings = load_settings(tmp_path)
    dirs = [tmp_path / "all", single, tmp_path / "empty", tmp_path / "nowhere"]
    loaded = load_plugins(settings, dirs, tmp_path)
    assert [p.source for p in loaded.plugins] == ["a@inline", "b@inline", "c@inline"]
    assert any("empty: no plugin there" in w for w in loaded.warnings)
    assert any("nowhere: not a folder" in w for w in loaded.warnings)


def test_enabled_plugins_come_from_a_declared_marketplace(
    tmp_path: Path, config: Path, market: Path
) -> None:
    user = tmp_path / "home" / ".claude" / "settings.json"
    write_settings(user, declare(market, {"demo@team": True, "gone@team": True}))
    write_settings(config / "settings.json", {"enabledPlugins": {"x@nowhere": True, "bare": True}})
    loaded = load_plugins(load_settings(tmp_path), [], tmp_path)
    (plugin,) = loaded.plugins
    assert (plugin.source, plugin.scope) == ("demo@team", "user")
    assert plugin.root == (market / "plugins" / "demo").resolve()
    text = "\n".join(loaded.warnings)
    assert "no marketplace 'nowhere' is known" in text
    assert "'bare' should be written name@marketplace" in text
    assert "does not exist" in text  # gone@team: its folder is missing


def test_a_later_file_turns_a_plugin_off(tmp_path: Path, config: Path, market: Path) -> None:
    write_settings(
        tmp_path / "home" / ".claude" / "settings.json", declare(market, {"demo@team": True})
    )
    write_settings(
        tmp_path / "repo" / ".claude" / "settings.json", {"enabledPlugins": {"demo@team": False}}
    )
    (tmp_path / "repo" / ".git").mkdir()
    assert load_plugins(load_settings(tmp_path / "repo"), [], tmp_path / "repo").plugins == []


def test_setting_sources_and_trust_limit_the_settings_plugins(
    tmp_path: Path, config: Path, market: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write_settings(repo / ".claude" / "settings.json", declare(market, {"demo@team": True}))
    assert [p.name for p in load_plugins(load_settings(repo), [], repo).plugins] == ["demo"]
    only_user = load_settings(repo, sources=["user"])
    assert load_plugins(only_user, [], repo).plugins == []
    untrusted = load_settings(repo, trusted=False)
    assert load_plugins(untrusted, [], repo).plugins == []
    # --plugin-dir is the command line's: no settings source leaves it out
    flag = load_plugins(only_user, [market / "plugins" / "demo"], repo)
    assert [p.source for p in flag.plugins] == ["demo@inline"]


def test_a_relative_marketplace_path_in_a_project_is_the_projects(
    tmp_path: Path, config: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    root = write_marketplace(repo / "tools", "local", {"demo": "./demo"})
    write_plugin(root / "demo", server=False)
    spec = {"source": {"source": "directory", "path": "./tools"}}
    data = {"extraKnownMarketplaces": {"local": spec}, "enabledPlugins": {"demo@local": True}}
    write_settings(repo / ".claude" / "settings.json", data)
    (plugin,) = load_plugins(load_settings(repo), [], repo).plugins
    assert (plugin.root, plugin.scope) == ((root / "demo").resolve(), "project")


def test_two_plugins_of_one_name_keep_the_first(tmp_path: Path, config: Path) -> None:
    first = write_plugin(tmp_path / "one", server=False)
    second = write_plugin(tmp_path / "two", server=False)
    loaded = load_plugins(load_settings(tmp_path), [first, second], tmp_path)
    assert [p.root for p in loaded.plugins] == [first.resolve()]
    assert any("has the name of demo@inline" in w for w in loaded.warnings)


def test_a_marketplace_lists_local_entries_and_names_remote_ones(tmp_path: Path) -> None:
    root = tmp_path / "m"
    catalogue = {
        "name": "mixed",
        "metadata": {"pluginRoot": "./plugins"},
        "plugins": [
            {"name": "here", "source": "./here", "description": "Local"},
            {"name": "far", "source": {"source": "github", "repo": "a/b"}},
            "junk",
        ],
    }
    write_settings(root / ".claude-plugin" / "marketplace.json", catalogue)
    market = read_marketplace(root)
    assert market.name == "mixed" and list(market.entries) == ["here", "far"]
    assert market.entries["here"].root == (root / "plugins" / "here").resolve()
    assert market.entries["far"].root is None
    assert "'github'" in str(market.entries["far"].problem)
    with pytest.raises(ValueError, match=r"has no \.claude-plugin/marketplace\.json"):
        read_marketplace(tmp_path / "none")


def test_a_remote_marketplace_is_named_not_fetched(tmp_path: Path, config: Path) -> None:
    spec = {"source": {"source": "github", "repo": "someone/plugins"}}
    data = {"extraKnownMarketplaces": {"far": spec}, "enabledPlugins": {"x@far": True}}
    write_settings(tmp_path / "home" / ".claude" / "settings.json", data)
    loaded = load_plugins(load_settings(tmp_path), [], tmp_path)
    assert loaded.plugins == []
    assert any("ccx reads local marketplaces only" in w for w in loaded.warnings)


def test_a_projects_plugin_hooks_are_the_ones_sandboxed(tmp_path: Path, config: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    root = write_marketplace(repo / "tools", "local", {"demo": "./demo"})
    write_plugin(root / "demo", server=False, hook_marker=tmp_path / "ran")
    spec = {"source": {"source": "directory", "path": "./tools"}}
    data = {"extraKnownMarketplaces": {"local": spec}, "enabledPlugins": {"demo@local": True}}
    write_settings(repo / ".claude" / "settings.json", data)
    from_project = load_plugins(load_settings(repo), [], repo)
    assert from_project.project_hook_commands() == {
        f'echo "{(root / "demo").resolve()} $CLAUDE_PLUGIN_ROOT" > {tmp_path / "ran"}'
    }
    from_flag = load_plugins(load_settings(tmp_path), [root / "demo"], tmp_path)
    assert from_flag.project_hook_commands() == set()
