"""Agent definitions: files in the agent folders, --agents JSON, precedence, malformed files."""

from __future__ import annotations

from pathlib import Path

from agent.instructions.agents import (
    GENERAL_PURPOSE_AGENT,
    AgentDefinitions,
    agents_listing,
    discover_agents,
    load_agent_file,
)


def write_agent(folder: Path, name: str, frontmatter: str, body: str = "Do the thing.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\n{frontmatter}\n---\n{body}\n")
    return path


def discover(repo: Path, agents_json: str | None = None) -> AgentDefinitions:
    home = repo.parent / "home"
    return discover_agents(repo, agents_json, home=home, config_dir=home / ".ccx")


def test_tools_as_a_comma_list_a_yaml_list_or_absent(repo: Path) -> None:
    agents = repo / ".claude" / "agents"
    write_agent(agents, "a", "name: commas\ndescription: one\ntools: Read, Grep ,Glob")
    write_agent(agents, "b", "name: listed\ndescription: two\ntools:\n  - Read\n  - Bash")
    write_agent(agents, "c", "name: everything\ndescription: three\nmodel: inherit")
    write_agent(agents, "d", "name: starred\ndescription: four\ntools: '*'\nmodel: haiku")
    found = discover(repo)
    assert found["commas"].tools == ("Read", "Grep", "Glob")
    assert found["listed"].tools == ("Read", "Bash")
    assert found["everything"].tools is None and found["everything"].model is None
    assert found["starred"].tools is None and found["starred"].model == "haiku"
    assert found["commas"].prompt == "Do the thing."
    assert list(found)[-1] == "general-purpose" and found.warnings == []


def test_malformed_files_are_skipped_with_a_warning(repo: Path) -> None:
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "open.md").write_text("---\nname: open\n")
    write_agent(agents, "nodesc", "name: nodesc")
    write_agent(agents, "badtools", "name: badtools\ndescription: x\ntools: 3")
    write_agent(agents, "empty", "name: empty\ndescription: x", body="")
    write_agent(agents, "yaml", "name: [unclosed\ndescription: x")
    (agents / "binary.md").write_bytes(b"---\nname: \xff\n---\n")
    write_agent(agents, "good", "name: good\ndescription: fine")
    found = discover(repo)
    assert list(found) == ["good", "general-purpose"]
    text = "\n".join(found.warnings)
    for name in ("open", "nodesc", "badtools", "empty", "yaml", "binary"):
        assert f"{name}.md" in text
    assert "'description' is missing" in text and "'tools' must be" in text


def test_precedence_cli_then_project_then_user_and_the_file_name_as_default(repo: Path) -> None:
    home = repo.parent / "home"
    write_agent(repo / ".claude" / "agents", "shared", "description: project one")
    write_agent(home / ".claude" / "agents", "shared", "description: user one")
    write_agent(home / ".claude" / "agents", "mine", "description: only the user's")
    write_agent(repo / ".claude" / "agents", "general-purpose", "description: replaced")
    cli = '{"cli": {"description": "from the command line", "prompt": "Be brief.", "tools": ["Read"]}}'
    found = discover(repo, cli)
    assert list(found) == ["cli", "general-purpose", "shared", "mine"]
    assert found["shared"].description == "project one"
    assert found["general-purpose"].description == "replaced"  # a project may redefine it
    assert found["cli"].prompt == "Be brief." and found["cli"].tools == ("Read",)
    assert found["cli"].source == "--agents"


def test_bad_agents_json_is_a_warning(repo: Path) -> None:
    assert discover(repo, "{not json").warnings[0].startswith("--agents is not valid JSON")
    found = discover(repo, '{"x": {"prompt": "p"}, "y": 3}')
    assert list(found) == ["general-purpose"] and len(found.warnings) == 2


def test_the_listing_names_each_agent_its_description_and_tools(repo: Path, tmp_path: Path) -> None:
    path = write_agent(tmp_path, "r", "name: reviewer\ndescription: Reviews\n  code.\ntools: Read")
    reviewer = load_agent_file(path, [])
    assert reviewer is not None
    listing = agents_listing([reviewer, GENERAL_PURPOSE_AGENT])
    lines = listing.splitlines()
    assert lines[0].startswith("Available agent types")
    assert lines[1] == "- reviewer: Reviews code. (Tools: Read)"
    assert lines[2].startswith("- general-purpose: ") and lines[2].endswith("(Tools: all tools)")
    assert agents_listing([]) == ""
