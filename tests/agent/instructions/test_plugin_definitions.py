"""A plugin's commands, skills and agents as the definition loaders read them: named
``<plugin>:<name>``, ``${CLAUDE_PLUGIN_ROOT}`` filled in, after the user's own."""

from __future__ import annotations

from pathlib import Path

from agent.instructions.agents import discover_agents
from agent.instructions.custom_commands import discover_commands
from agent.instructions.definition_files import PluginFolder
from agent.instructions.hooks import HookRunner
from agent.instructions.skills import discover_skills
from tests.plugin_files import write_plugin
from tools.skill import SkillTool


def folders(root: Path, kind: str) -> list[PluginFolder]:
    return [PluginFolder(root / kind, "demo", root)]


def test_plugin_commands_are_namespaced_and_filled(tmp_path: Path, config: Path) -> None:
    root = write_plugin(tmp_path / "demo", server=False)
    own = tmp_path / "home" / ".claude" / "commands" / "greet.md"
    own.parent.mkdir(parents=True)
    own.write_text("Mine")
    found = discover_commands(tmp_path, plugins=folders(root, "commands"))
    assert [c.name for c in found] == ["greet", "demo:greet", "demo:ops:deploy"]
    greet = found.get("demo:greet")
    assert greet is not None and greet.scope == "plugin"
    assert f"{root}/bin." in greet.body and "${CLAUDE_PLUGIN_ROOT}" not in greet.body
    assert greet.argument_hint == "[name]"


def test_a_command_file_named_alone_is_one_command(tmp_path: Path, config: Path) -> None:
    root = write_plugin(tmp_path / "demo", server=False)
    single = [PluginFolder(root / "commands" / "greet.md", "demo", root)]
    assert [c.name for c in discover_commands(tmp_path, plugins=single)] == ["demo:greet"]


def test_plugin_skills_are_namespaced_and_their_body_filled(tmp_path: Path, config: Path) -> None:
    root = write_plugin(tmp_path / "demo", server=False)
    skills = discover_skills(tmp_path, plugins=folders(root, "skills"))
    assert [s.name for s in skills] == ["demo:tidy"]
    result = SkillTool(skills).load("demo:tidy", None)
    assert f"Tidy the folder with {root}/bin/tidy." in str(result.output)
    # a manifest may name one skill's folder
    one = [PluginFolder(root / "skills" / "tidy", "demo", root)]
    assert [s.name for s in discover_skills(tmp_path, plugins=one)] == ["demo:tidy"]


def test_plugin_agents_are_namespaced(tmp_path: Path, config: Path) -> None:
    root = write_plugin(tmp_path / "demo", server=False)
    agents = discover_agents(tmp_path, plugins=folders(root, "agents"))
    reviewer = agents["demo:reviewer"]
    assert reviewer.tools == ("Read", "Grep") and reviewer.prompt.startswith("You review")
    assert "reviewer" not in agents


def test_plugin_hooks_join_and_their_warnings_name_the_plugin(tmp_path: Path) -> None:
    runner = HookRunner({"Stop": [{"hooks": [{"command": "true"}]}]}, tmp_path, "s", tmp_path)
    hooks = {"Stop": [{"hooks": [{"command": "echo hi"}]}], "Nope": []}
    runner.add_plugin_hooks(hooks, tmp_path, "demo@inline")
    commands = [(c.command, c.plugin_root) for g in runner.groups["Stop"] for c in g.commands]
    assert commands == [("true", None), ("echo hi", str(tmp_path))]
    assert any(w.startswith("Plugin demo@inline:") and "Nope" in w for w in runner.warnings)
