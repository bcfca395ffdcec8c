"""Skills: finding SKILL.md folders, listing them to the model, remembering which were loaded.

A skill is ``<skills dir>/<name>/SKILL.md``: YAML frontmatter (``name``,
``description``) and a body of instructions. Skills come from the project's
``.claude/skills/``, ``$CCX_CONFIG_DIR/skills/`` (default ``~/.ccx/skills/``)
and ``~/.claude/skills/`` (found and read by agent.instructions.definition_files);
on a name clash the first of those wins. Only the
listing goes into the system prompt; the body is loaded by the Skill tool,
and ``InvokedSkills`` keeps what was loaded so compaction can put it back.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agent.instructions.definition_files import (
    DefinitionFile,
    DefinitionKind,
    PluginFolder,
    definition_dirs,
    first_body_line,
    load_definition,
    load_definitions,
    parse_frontmatter,
)
from tools.skill import SKILL_FILE, SkillInfo, read_skill_body

SKILL_INVOKED = "skill_invoked"
# Characters of a skill's or agent's description in the listing: the Agent Skills format's own
# limit, so real descriptions are listed whole and a runaway one stays bounded.
MAX_LISTED_DESCRIPTION = 1024
MAX_SKILL_FILE_BYTES = 1024 * 1024


class DiscoveredSkills(list[SkillInfo]):
    """The skills found, in precedence order, with what was skipped and why in ``warnings``."""

    def __init__(self, skills: Iterable[SkillInfo] = (), warnings: Iterable[str] = ()) -> None:
        super().__init__(skills)
        self.warnings: list[str] = list(warnings)


def skill_dirs(cwd: Path, home: Path | None = None, config_dir: Path | None = None) -> list[Path]:
    """The directories holding skill folders, highest precedence first."""
    return [folder for folder, _scope in definition_dirs("skills", cwd, home, config_dir)]


def discover_skills(
    cwd: Path,
    home: Path | None = None,
    config_dir: Path | None = None,
    include_project: bool = True,
    include_user: bool = True,
    plugins: Iterable[PluginFolder] = (),
) -> DiscoveredSkills:
    """Every usable skill; a broken SKILL.md is skipped with a warning, never raised.
    ``include_project`` false: the user's skills only (the folder is not trusted);
    ``plugins``: the plugins' skill folders, their skills named ``<plugin>:<name>``."""
    found = load_definitions(
        SKILLS, cwd, home, config_dir, include_project, include_user=include_user, plugins=plugins
    )
    return DiscoveredSkills(found.entries, found.warnings)


def load_skill(path: Path, warnings: list[str]) -> SkillInfo | None:
    """Read one SKILL.md; None (and a warning) when it cannot be used."""
    return load_definition(SKILLS, path, path.parent.parent, "user", warnings)  # scope unused


def skill_files(folder: Path, _warnings: list[str]) -> list[Path]:
    """``<name>/SKILL.md`` for each folder in it, by name; hidden ones left out."""
    children = sorted(folder.iterdir(), key=lambda child: child.name)
    return [child / SKILL_FILE for child in children if not child.name.startswith(".")]


def skill_from(file: DefinitionFile) -> SkillInfo | None:
    """A SKILL.md's entry; None for one meant to be run by the user only."""
    meta = file.meta
    if meta.get("disable-model-invocation") is True:
        return None  # never offered to the model
    name = meta.get("name")
    name = name.strip() if isinstance(name, str) and name.strip() else file.path.parent.name
    description = meta.get("description")
    if description is None or not str(description).strip():
        description = first_body_line(file.body)
    return SkillInfo(
        name=file.named(name),
        description=" ".join(str(description).split()),
        path=file.path,
        base_dir=file.path.parent,
        plugin_root=file.plugin.root if file.plugin else None,
    )


def single_skill(path: Path) -> Path | None:
    """A folder that is one skill (it holds SKILL.md) stands for that file."""
    return path / SKILL_FILE if (path / SKILL_FILE).is_file() else None


SKILLS = DefinitionKind[SkillInfo](
    folder="skills",
    noun="skill file",
    plural="skills",
    max_bytes=MAX_SKILL_FILE_BYTES,
    files=skill_files,
    read_meta=parse_frontmatter,
    entry=skill_from,
    key=lambda skill: skill.name,
    single=single_skill,
)


def skills_listing(skills: Iterable[SkillInfo]) -> str:
    """The system-prompt text naming each skill and what it is for; "" when there are none."""
    lines = []
    for skill in skills:
        description = skill.description or "(no description)"
        if len(description) > MAX_LISTED_DESCRIPTION:
            description = description[: MAX_LISTED_DESCRIPTION - 1].rstrip() + "…"
        lines.append(f"- {skill.name}: {description}")
    if not lines:
        return ""
    header = (
        "# Skills\n"
        "Skills are prepared instructions for particular tasks. When a request matches one of "
        "the skills below, load it with the Skill tool (giving its name) before starting, then "
        "follow what it says. Only these skills exist:"
    )
    return header + "\n" + "\n".join(lines)


class InvokedSkills:
    """The skills loaded in this session: one entry per name, the latest body, newest last."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[SkillInfo, str]] = {}

    def record(self, skill: SkillInfo, body: str) -> None:
        self._entries.pop(skill.name, None)  # re-inserted so it counts as the newest
        self._entries[skill.name] = (skill, body)

    def recent(self) -> list[tuple[SkillInfo, str]]:
        """Newest first."""
        return list(reversed(self._entries.values()))

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def event(skill: SkillInfo, at: float | None = None) -> dict[str, Any]:
        """The transcript event that records an invocation (wrap it in a "event" record)."""
        return {
            "type": SKILL_INVOKED,
            "name": skill.name,
            "path": str(skill.path),
            "at": time.time() if at is None else at,
        }

    @classmethod
    def rebuild(
        cls, events: Iterable[dict[str, Any]], skills: Iterable[SkillInfo]
    ) -> InvokedSkills:
        """Replay a resumed session's ``skill_invoked`` events, re-reading each skill file now.

        Accepts bare events or whole ``{"type": "event", "event": ...}`` records; an event
        whose file is gone (and whose name is no longer discovered) is dropped.
        """
        by_path = {str(s.path): s for s in skills}
        by_name = {s.name: s for s in by_path.values()}
        invoked = cls()
        for record in events:
            wrapped = isinstance(record, dict) and record.get("type") == "event"
            event = record.get("event") if wrapped else record
            if not isinstance(event, dict) or event.get("type") != SKILL_INVOKED:
                continue
            skill = _skill_for_event(event, by_path, by_name)
            if skill is None:
                continue
            try:
                body = read_skill_body(skill.path, skill.plugin_root)
            except (OSError, UnicodeDecodeError):
                continue
            invoked.record(skill, body)
        return invoked


def _skill_for_event(
    event: dict[str, Any], by_path: dict[str, SkillInfo], by_name: dict[str, SkillInfo]
) -> SkillInfo | None:
    name, path = event.get("name"), event.get("path")
    if isinstance(path, str) and path:
        if path in by_path:
            return by_path[path]
        if Path(path).is_file():
            label = name if isinstance(name, str) and name else Path(path).parent.name
            return SkillInfo(
                name=label, description="", path=Path(path), base_dir=Path(path).parent
            )
    return by_name.get(name) if isinstance(name, str) else None
