"""Skills: finding SKILL.md folders, listing them to the model, remembering which were loaded.

A skill is ``<skills dir>/<name>/SKILL.md``: YAML frontmatter (``name``,
``description``) and a body of instructions. Skills come from the project's
``.claude/skills/``, ``$CCX_CONFIG_DIR/skills/`` (default ``~/.ccx/skills/``)
and ``~/.claude/skills/``; on a name clash the first of those wins. Only the
listing goes into the system prompt; the body is loaded by the Skill tool,
and ``InvokedSkills`` keeps what was loaded so compaction can put it back.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agent.core.locations import config_dir as user_config_dir
from agent.permissions.settings import project_root
from tools.skill import SKILL_FILE, FrontmatterError, SkillInfo, read_skill_body, split_frontmatter

SKILL_INVOKED = "skill_invoked"
MAX_LISTED_DESCRIPTION = 250  # characters per skill in the listing
MAX_SKILL_FILE_BYTES = 1024 * 1024


class DiscoveredSkills(list[SkillInfo]):
    """The skills found, in precedence order, with what was skipped and why in ``warnings``."""

    def __init__(self, skills: Iterable[SkillInfo] = (), warnings: Iterable[str] = ()) -> None:
        super().__init__(skills)
        self.warnings: list[str] = list(warnings)


def skill_dirs(cwd: Path, home: Path | None = None, config_dir: Path | None = None) -> list[Path]:
    """The directories holding skill folders, highest precedence first."""
    home = Path(home) if home is not None else Path.home()
    if config_dir is None:
        config_dir = user_config_dir(home)
    return [
        project_root(cwd) / ".claude" / "skills",
        Path(config_dir) / "skills",
        home / ".claude" / "skills",
    ]


def discover_skills(
    cwd: Path,
    home: Path | None = None,
    config_dir: Path | None = None,
    include_project: bool = True,
) -> DiscoveredSkills:
    """Every usable skill; a broken SKILL.md is skipped with a warning, never raised.
    ``include_project`` false: the user's skills only (the folder is not trusted)."""
    found = DiscoveredSkills()
    names: set[str] = set()
    seen_dirs: set[Path] = set()
    directories = skill_dirs(cwd, home, config_dir)
    for directory in directories if include_project else directories[1:]:
        resolved = _resolve(directory)
        if resolved is None or resolved in seen_dirs or not directory.is_dir():
            continue
        seen_dirs.add(resolved)
        for skill in _skills_in(directory, found.warnings):
            if skill.name not in names:
                names.add(skill.name)
                found.append(skill)
    return found


def load_skill(path: Path, warnings: list[str]) -> SkillInfo | None:
    """Read one SKILL.md; None (and a warning) when it cannot be used."""
    try:
        if path.stat().st_size > MAX_SKILL_FILE_BYTES:
            warnings.append(f"Skill file {path} is larger than 1 MiB; skipped.")
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"Could not read skill file {path}: {exc}; skipped.")
        return None
    try:
        raw, body = split_frontmatter(text)
        meta = parse_frontmatter(raw)
    except (FrontmatterError, ValueError) as exc:
        warnings.append(f"Skill file {path} has malformed frontmatter ({exc}); skipped.")
        return None
    if meta.get("disable-model-invocation") is True:
        return None  # meant to be run by the user only, never offered to the model
    name = meta.get("name")
    name = name.strip() if isinstance(name, str) and name.strip() else path.parent.name
    description = meta.get("description")
    if description is None or not str(description).strip():
        description = _first_line(body)
    return SkillInfo(
        name=name,
        description=" ".join(str(description).split()),
        path=path,
        base_dir=path.parent,
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
                body = read_skill_body(skill.path)
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


def _skills_in(directory: Path, warnings: list[str]) -> list[SkillInfo]:
    try:
        children = sorted(directory.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        warnings.append(f"Could not list skills in {directory}: {exc}")
        return []
    skills = []
    for child in children:
        path = child / SKILL_FILE
        if child.name.startswith(".") or not path.is_file():
            continue
        skill = load_skill(path, warnings)
        if skill is not None:
            skills.append(skill)
    return skills


def parse_frontmatter(raw: str | None) -> dict[str, Any]:
    """The frontmatter as a mapping; ValueError when it is not YAML or not a mapping."""
    if raw is None or not raw.strip():
        return {}
    import yaml  # only paid for by sessions that have skills

    try:
        data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise ValueError(" ".join(str(exc).split())) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"expected a mapping of keys, got {type(data).__name__}")
    return data


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = re.sub(r"^#+\s*", "", line.strip()).strip()
        if text:
            return text
    return ""


def _resolve(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None
