"""Agent definitions: the built-in general-purpose agent, ``.claude/agents/*.md`` and ``--agents``.

A definition file is Markdown with YAML frontmatter: ``name``, ``description``,
``tools`` (a comma-separated string or a YAML list; absent means every tool
of the parent except Agent itself) and ``model`` (``sonnet``, ``opus``,
``haiku``, ``inherit`` or a model id); the body is the subagent's system
prompt. Definitions come from ``--agents`` JSON first, then the project's
``.claude/agents/``, ``$CCX_CONFIG_DIR/agents/``, ``~/.claude/agents/`` and the
plugins' ``agents/`` (named ``<plugin>:<name>``) (found and read by agent.instructions.definition_files); on a name clash the
first wins. A file that cannot be used is skipped with a warning, never raised.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agent.instructions.definition_files import (
    DefinitionFile,
    DefinitionKind,
    PluginFolder,
    definition_dirs,
    load_definition,
    load_definitions,
    markdown_files,
    parse_frontmatter,
)
from tools.agent import GENERAL_PURPOSE

MAX_AGENT_FILE_BYTES = 256 * 1024
MAX_LISTED_DESCRIPTION = 300

GENERAL_PURPOSE_PROMPT = """\
You are a subagent of ccx, a coding agent working in the user's repository. Another agent \
handed you one task; its brief, in the first message, is everything you know about it.

Do the task with the tools you have: search and read before concluding, and do no more than \
the brief asks. When you are done, answer with one final report for the agent that sent you: \
what you found or changed, with exact file paths (and line numbers where they help), and \
anything you could not settle. That report is all the other agent will see of your work, so \
make it complete and plain; do not address the user, and do not ask questions you could \
answer yourself."""


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str
    prompt: str  # the subagent's system prompt
    tools: tuple[str, ...] | None = None  # None: every tool of the parent except Agent
    model: str | None = None  # None or "inherit": the parent's model
    source: str = "built-in"  # built-in, --agents, or the file's path


GENERAL_PURPOSE_AGENT = AgentDefinition(
    name=GENERAL_PURPOSE,
    description=(
        "A general agent for research and multi-step tasks: searching code, reading across "
        "many files, running commands, making changes. Use it when no other type fits."
    ),
    prompt=GENERAL_PURPOSE_PROMPT,
)


class AgentDefinitions(dict[str, AgentDefinition]):
    """The agents on offer, by name, in listing order; what was skipped in ``warnings``."""

    def __init__(self) -> None:
        super().__init__()
        self.warnings: list[str] = []

    def offer(self, definition: AgentDefinition) -> None:
        self.setdefault(definition.name, definition)


def agent_dirs(cwd: Path, home: Path | None = None, config_dir: Path | None = None) -> list[Path]:
    """The directories holding agent files, highest precedence first."""
    return [folder for folder, _scope in definition_dirs("agents", cwd, home, config_dir)]


def discover_agents(
    cwd: Path,
    agents: dict[str, Any] | str | None = None,
    home: Path | None = None,
    config_dir: Path | None = None,
    include_project: bool = True,
    include_user: bool = True,
    plugins: Iterable[PluginFolder] = (),
) -> AgentDefinitions:
    """Every usable agent: ``--agents`` (its JSON text, or parsed), the agent folders, then
    the built-in one; ``include_project`` false leaves the project's folder out (the folder
    is not trusted)."""
    found = AgentDefinitions()
    given = (
        parse_agents_json(agents, found.warnings)
        if isinstance(agents, str)
        else parse_agents(agents or {}, "--agents", found.warnings)
    )
    files = load_definitions(
        AGENTS, cwd, home, config_dir, include_project, given, include_user, plugins
    )
    for definition in files.entries:
        found.offer(definition)
    found.warnings += files.warnings
    found.offer(GENERAL_PURPOSE_AGENT)
    return found


def load_agent_file(path: Path, warnings: list[str]) -> AgentDefinition | None:
    """One agent file; None (and a warning) when it cannot be used."""
    return load_definition(AGENTS, path, path.parent, "user", warnings)  # scope unused


def agent_from(file: DefinitionFile) -> AgentDefinition:
    """An agent file's definition; the file's name when the frontmatter names none (a
    plugin's agent is ``<plugin>:<name>``)."""
    found = definition_from(file.meta, file.body, str(file.path), default_name=file.path.stem)
    return replace(found, name=file.named(found.name)) if file.plugin else found


def parse_agents_json(text: str, warnings: list[str]) -> list[AgentDefinition]:
    """``--agents '{"name": {"description": ..., "prompt": ..., "tools": [...]}}'``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        warnings.append(f"--agents is not valid JSON ({exc}); ignored.")
        return []
    if not isinstance(data, dict):
        warnings.append("--agents must be a JSON object of agents by name; ignored.")
        return []
    return parse_agents(data, "--agents", warnings)


def parse_agents(data: dict[str, Any], source: str, warnings: list[str]) -> list[AgentDefinition]:
    """Agents as a mapping of name -> {description, prompt, tools, model} (``--agents``, the
    Agent SDK's ``agents``); an entry that cannot be used is skipped with a warning."""
    definitions = []
    for name, spec in data.items():
        try:
            if not isinstance(spec, dict):
                raise ValueError("expected an object")
            meta = {**spec, "name": name}
            definitions.append(definition_from(meta, str(spec.get("prompt", "")), source))
        except ValueError as exc:
            warnings.append(f"{source} entry {name!r} is malformed ({exc}); skipped.")
    return definitions


def definition_from(
    meta: dict[str, Any], body: str, source: str, default_name: str | None = None
) -> AgentDefinition:
    """A definition from frontmatter-like keys; ValueError says what is wrong."""
    name = meta.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise ValueError("'name' is missing")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("'description' is missing")
    prompt = body.strip()
    if not prompt:
        raise ValueError("the system prompt (the body) is empty")
    model = meta.get("model")
    if model is not None and not isinstance(model, str):
        raise ValueError("'model' must be a string")
    model = None if model is None or model.strip().lower() in ("", "inherit") else model.strip()
    return AgentDefinition(
        name=name.strip(),
        description=" ".join(description.split()),
        prompt=prompt,
        tools=_tool_names(meta.get("tools")),
        model=model,
        source=source,
    )


def agents_listing(definitions: Iterable[AgentDefinition]) -> str:
    """The text naming each agent type, what it is for and its tools; "" when there are none."""
    lines = []
    for agent in definitions:
        description = agent.description
        if len(description) > MAX_LISTED_DESCRIPTION:
            description = description[: MAX_LISTED_DESCRIPTION - 1].rstrip() + "…"
        tools = ", ".join(agent.tools) if agent.tools is not None else "all tools"
        lines.append(f"- {agent.name}: {description} (Tools: {tools})")
    if not lines:
        return ""
    return "Available agent types (the values of `subagent_type`):\n" + "\n".join(lines)


def _tool_names(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        names = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        names = [item.strip() for item in value]
    else:
        raise ValueError("'tools' must be a comma-separated string or a list of names")
    names = [name for name in names if name]
    if names == ["*"]:
        return None
    return tuple(names)


AGENTS = DefinitionKind[AgentDefinition](
    folder="agents",
    noun="agent file",
    plural="agents",
    max_bytes=MAX_AGENT_FILE_BYTES,
    files=markdown_files,
    read_meta=parse_frontmatter,
    entry=agent_from,
    key=lambda agent: agent.name,
    malformed="is malformed",  # a missing description or an empty body, as well as bad YAML
)
