"""Reading a plugin's folder: its manifest, its parts' paths, ${CLAUDE_PLUGIN_ROOT}, and the
clear errors a broken one gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.plugins.manifest import PluginError, read_plugin
from tests.plugin_files import write_plugin


def manifest(root: Path, data: object) -> Path:
    path = root / ".claude-plugin" / "plugin.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return root


def test_a_plugin_folder_is_read_with_its_parts(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    root = write_plugin(tmp_path / "demo", hook_marker=marker)
    plugin = read_plugin(root, "{name}@inline", "flag")
    assert (plugin.name, plugin.version, plugin.source) == ("demo", "1.2.0", "demo@inline")
    assert plugin.description == "A plugin for the tests"
    assert plugin.commands == (root / "commands",)
    assert plugin.agents == (root / "agents",)
    assert plugin.skills == (root / "skills",)
    (group,) = plugin.hooks["UserPromptSubmit"]
    assert group["hooks"][0]["command"] == f'echo "{root} $CLAUDE_PLUGIN_ROOT" > {marker}'
    assert "description" not in plugin.hooks
    assert plugin.mcp_servers["tools"]["args"] == [f"{root}/server.py"]


def test_manifest_paths_add_to_the_default_folders_and_configs_may_be_inline(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    (root / "commands").mkdir(parents=True)
    (root / "extra").mkdir()
    (root / "extra" / "one.md").write_text("One")
    manifest(
        root,
        {
            "name": "p",
            "commands": ["./extra/one.md"],
            "hooks": {"Stop": [{"hooks": [{"command": "${CLAUDE_PLUGIN_ROOT}/stop.sh"}]}]},
            "mcpServers": {"s": {"command": "${CLAUDE_PLUGIN_ROOT}/srv"}},
        },
    )
    plugin = read_plugin(root, "{name}@inline", "flag")
    resolved = root.resolve()
    assert plugin.commands == (resolved / "commands", resolved / "extra" / "one.md")
    assert plugin.hooks["Stop"][0]["hooks"][0]["command"] == f"{resolved}/stop.sh"
    assert plugin.mcp_servers == {"s": {"command": f"{resolved}/srv"}}


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ('{"name": "x",', "plugin.json is not valid JSON"),
        ("[1, 2]", "does not hold a JSON object"),
        ({"version": "1.0"}, 'has no "name"'),
        ({"name": "a:b"}, "may hold only letters"),
        ({"name": "x", "commands": "../../etc"}, "leads outside the plugin's folder"),
        ({"name": "x", "agents": "./missing"}, "which does not exist"),
        ({"name": "x", "hooks": "./nope.json"}, "cannot be read"),
        ({"name": "x", "mcpServers": 7}, "must be a path"),
    ],
)
def test_a_broken_manifest_is_a_clear_error(tmp_path: Path, data: object, says: str) -> None:
    root = manifest(tmp_path / "bad", data)
    with pytest.raises(PluginError) as caught:
        read_plugin(root, "{name}@inline", "flag")
    assert says in str(caught.value)
    assert str(root.resolve()) in str(caught.value)  # the plugin is named


def test_a_folder_without_a_manifest_is_not_a_plugin_unless_it_says_so(tmp_path: Path) -> None:
    with pytest.raises(PluginError, match="is not a plugin"):
        read_plugin(tmp_path, "{name}@inline", "flag")
    (tmp_path / "named" / ".claude-plugin").mkdir(parents=True)
    assert read_plugin(tmp_path / "named", "{name}@inline", "flag").name == "named"
    entry = {"name": "from-market", "description": "listed"}
    plugin = read_plugin(tmp_path, "from-market@m", "user", fallback=entry)
    assert (plugin.name, plugin.description) == ("from-market", "listed")
