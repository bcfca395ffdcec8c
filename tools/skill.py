"""Skill: load a skill's instructions (its SKILL.md body) into the conversation on demand.

Only a one-line listing of each skill sits in the system prompt; the model
calls this tool when a task matches, and the full body arrives as the tool
result. Discovery lives in ``agent.instructions.skills``; ``SkillInfo`` is defined here so
the tool needs nothing from ``agent/``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line

SKILL_FILE = "SKILL.md"
_FRONTMATTER_FENCE = re.compile(r"^---[ \t]*$")
_FRONTMATTER_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$")


@dataclass(frozen=True)
class SkillInfo:
    name: str
    description: str
    path: Path  # the SKILL.md file
    base_dir: Path  # the skill's folder; relative paths in the body resolve against it
    plugin_root: Path | None = None  # a plugin's skill: ${CLAUDE_PLUGIN_ROOT} in its body


class FrontmatterError(ValueError):
    """The file opens a frontmatter block that never closes."""


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """``(frontmatter, body)``; frontmatter is None when the file has none.

    Raises FrontmatterError when an opening ``---`` line has no closing one.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or not _FRONTMATTER_FENCE.match(lines[0].rstrip("\r\n")):
        return None, text
    for index in range(1, len(lines)):
        if _FRONTMATTER_END.match(lines[index].rstrip("\r\n")):
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise FrontmatterError("the frontmatter opened by '---' is never closed")


def read_skill_body(path: Path, plugin_root: Path | None = None) -> str:
    """The SKILL.md text without its frontmatter (OSError / UnicodeDecodeError when unreadable);
    ``plugin_root``: a plugin's folder, put where the body says ``${CLAUDE_PLUGIN_ROOT}``."""
    text = path.read_text(encoding="utf-8")
    try:
        _, body = split_frontmatter(text)
    except FrontmatterError:
        body = text
    if plugin_root is not None:
        body = body.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin_root))
    return body.strip("\n")


def render_skill_body(body: str, args: str | None) -> str:
    """Substitute ``$ARGUMENTS`` in the body, as Claude Code's skills expect."""
    return body.replace("$ARGUMENTS", args or "")


class SkillParams(ToolParams):
    skill: str = Field(description='The name of the skill to load, e.g. "pdf" or "release-notes"')
    args: str | None = Field(
        default=None, description="Optional arguments for the skill, as free text"
    )


class SkillTool(Tool[SkillParams]):
    name = "Skill"
    is_mutating = False

    def __init__(
        self,
        skills: list[SkillInfo],
        on_invoke: Callable[[SkillInfo, str], None] | None = None,
    ) -> None:
        self.skills = list(skills)  # replaceable when skills are discovered again
        self.on_invoke = on_invoke

    def label(self, params: SkillParams, cwd: StrPath | None = None) -> str:
        return one_line(f"Skill {params.skill.strip().lstrip('/')}")

    def find(self, name: str) -> SkillInfo | None:
        wanted = name.strip().lstrip("/")
        exact = next((s for s in self.skills if s.name == wanted), None)
        if exact is not None:
            return exact
        folded = [s for s in self.skills if s.name.casefold() == wanted.casefold()]
        return folded[0] if len(folded) == 1 else None

    async def run(self, params: SkillParams, ctx: ToolContext) -> ToolResult:
        return self.load(params.skill, params.args)

    def load(self, name: str, args: str | None) -> ToolResult:
        """The skill's instructions with their header, recorded as invoked (the model's call,
        or the user's ``/name args``); an error result for an unknown or unreadable skill."""
        skill = self.find(name)
        if skill is None:
            return ToolResult.error(self._unknown(name))
        try:
            raw_body = read_skill_body(skill.path, skill.plugin_root)
        except (OSError, UnicodeDecodeError) as exc:
            return ToolResult.error(
                f"Could not read the skill {skill.name!r} at {skill.path}: {exc}"
            )
        args = args.strip() if args and args.strip() else None
        body = render_skill_body(raw_body, args)
        header = [f"Base directory for this skill: {skill.base_dir}"]
        if args is not None:
            header.append(f"Arguments: {args}")
        header.append(
            f'The "{skill.name}" skill is now loaded; follow its instructions below. '
            "Relative paths in it are relative to the base directory."
        )
        if self.on_invoke is not None:
            self.on_invoke(skill, body)
        return ToolResult(
            output="\n".join(header)
            + "\n\n"
            + (body if body.strip() else "(this skill's file has no body)"),
            display=f"Loaded skill {skill.name}",
            meta={"skill": skill.name, "path": str(skill.path)},
        )

    def _unknown(self, name: str) -> str:
        if not self.skills:
            return f"Unknown skill {name!r}: no skills are available in this session."
        names = ", ".join(sorted(s.name for s in self.skills))
        return f"Unknown skill {name!r}. Available skills: {names}."
