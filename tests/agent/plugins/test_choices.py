"""What /plugin writes: enabledPlugins per scope, marketplaces declared and removed, and the
choices it refuses (an unknown plugin, a broken one, the policy's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.permissions.settings import MANAGED_ENV, load_settings
from agent.plugins.choices import (
    PluginChoiceError,
    add_marketplace,
    remove_marketplace,
    set_enabled,
)
from tests.plugin_files import write_marketplace, write_plugin


@pytest.fixture
def repo(tmp_path: Path, config: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    market = write_marketplace(tmp_path / "market", "team", {"demo": "./demo", "bad": "./bad"})
    write_plugin(market / "demo", server=False)
    (market / "bad" / ".claude-plugin").mkdir(parents=True)
    (market / "bad" / ".claude-plugin" / "plugin.json").write_text("{")
    add_marketplace(market, root)
    return root


def read(path: Path) -> dict[str, object]:
    return json.loads(path.read_text())


def test_enable_and_disable_write_where_the_entry_is(repo: Path, config: Path) -> None:
    user = config / "settings.json"
    choice = set_enabled(load_settings(repo), repo, "demo", True)  # one marketplace has it
    assert (choice.plugin_id, choice.scope, choice.path) == ("demo@team", "user", user)
    assert read(user)["enabledPlugins"] == {"demo@team": True}
    project = set_enabled(load_settings(repo), repo, "demo@team", False, "project")
    assert read(project.path)["enabledPlugins"] == {"demo@team": False}
    # with no scope, the next change goes where the winning entry is: the project's file
    again = set_enabled(load_settings(repo), repo, "demo@team", True)
    assert again.scope == "project" and read(user)["enabledPlugins"] == {"demo@team": True}


def test_refusals_write_nothing(repo: Path, config: Path, tmp_path: Path) -> None:
    before = (config / "settings.json").read_text()
    for wanted, says in [
        ("nothing@team", "has no plugin 'nothing'"),
        ("demo@elsewhere", "No marketplace offers"),
        ("bad@team", "is not valid JSON"),
    ]:
        with pytest.raises(PluginChoiceError, match=says):
            set_enabled(load_settings(repo), repo, wanted, True)
    with pytest.raises(PluginChoiceError, match="Unknown scope"):
        set_enabled(load_settings(repo), repo, "demo@team", True, "everywhere")
    assert (config / "settings.json").read_text() == before


def test_the_policys_choice_cannot_be_changed(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = tmp_path / "managed.json"
    policy.write_text(json.dumps({"enabledPlugins": {"demo@team": True}}))
    monkeypatch.setenv(MANAGED_ENV, str(policy))
    with pytest.raises(PluginChoiceError, match="set by the managed policy"):
        set_enabled(load_settings(repo), repo, "demo@team", False)


def test_marketplaces_are_declared_by_their_own_name_and_removed(
    repo: Path, config: Path, tmp_path: Path
) -> None:
    declared = read(config / "settings.json")["extraKnownMarketplaces"]
    spec = {"source": {"source": "directory", "path": str((tmp_path / "market").resolve())}}
    assert declared == {"team": spec}
    with pytest.raises(PluginChoiceError, match="Not a marketplace"):
        add_marketplace(tmp_path, repo)
    assert remove_marketplace(load_settings(repo), repo, "team") == config / "settings.json"
    assert read(config / "settings.json")["extraKnownMarketplaces"] == {}
    with pytest.raises(PluginChoiceError, match="No marketplace 'team'"):
        remove_marketplace(load_settings(repo), repo, "team")
