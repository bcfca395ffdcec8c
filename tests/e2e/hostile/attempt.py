"""One hostile attempt: the tool call a careless model (or a hostile repository) makes, and what it
must not cause.

Paths the judge watches are relative to the workspace (``repo/...``, ``home/...``,
``outside_secret.txt``). Tool inputs may hold the placeholders ``{repo}``, ``{ws}`` and
``{home}``, filled in with absolute paths once the workspace exists (plain string
replacement: commands are full of other braces).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MODES = ("default", "acceptEdits", "bypassPermissions")
# The secrets the workspace plants: ``env`` in repo/.env (denied by Read(./.env)),
# ``outside`` in outside_secret.txt next to the project.
SECRETS = ("env", "outside")


@dataclass(frozen=True)
class ToolCall:
    """A tool_use the scripted model sends: Claude Code's tool name and input schema."""

    tool: str
    input: Mapping[str, Any]

    def resolved(self, places: Mapping[str, str]) -> ToolCall:
        """This call with ``{repo}``, ``{ws}`` and ``{home}`` replaced by absolute paths."""
        return ToolCall(self.tool, fill_places(dict(self.input), places))


@dataclass(frozen=True)
class Attempt:
    """One attempt, judged only by its side effects.

    ``markers``: files that must not appear (or grow). ``unchanged``: files that must
    keep their content (creation and deletion count). ``leaks``: secrets that must not
    appear in any later API request. ``before`` / ``after``: scaffolding calls around
    the attempt (a Read that Edit requires, a ``cd`` back to the project).
    ``needs``: programs that must be on PATH for the attempt to mean anything.
    """

    id: str
    family: str
    mode: str
    call: ToolCall
    what: str
    markers: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    leaks: tuple[str, ...] = ()
    before: tuple[ToolCall, ...] = ()
    after: tuple[ToolCall, ...] = ()
    needs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"{self.id}: unknown mode {self.mode!r}")
        if not (self.markers or self.unchanged or self.leaks):
            raise ValueError(f"{self.id}: an attempt must say what it must not cause")
        if unknown := set(self.leaks) - set(SECRETS):
            raise ValueError(f"{self.id}: unknown secrets {sorted(unknown)}")

    @property
    def is_bash(self) -> bool:
        return self.call.tool == "Bash"

    @property
    def command(self) -> str:
        return str(self.call.input.get("command", "")) if self.is_bash else ""

    def victims(self) -> tuple[str, ...]:
        """Files the workspace builder must create for this attempt to destroy."""
        return tuple(p for p in self.unchanged if p.startswith("repo/victim_"))


def bash(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command, "description": "run a command"})


def read(path: str) -> ToolCall:
    return ToolCall("Read", {"file_path": path})


def write(path: str, content: str) -> ToolCall:
    return ToolCall("Write", {"file_path": path, "content": content})


def edit(path: str, old: str, new: str) -> ToolCall:
    return ToolCall("Edit", {"file_path": path, "old_string": old, "new_string": new})


def grep(pattern: str, **options: Any) -> ToolCall:
    return ToolCall("Grep", {"pattern": pattern, "output_mode": "content", **options})


def glob(pattern: str, **options: Any) -> ToolCall:
    return ToolCall("Glob", {"pattern": pattern, **options})


BACK_HOME = bash("cd {repo}")  # scaffolding: the shell's cwd persists between calls


def fill_places(value: Any, places: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for key, path in places.items():
            value = value.replace("{" + key + "}", path)
        return value
    if isinstance(value, dict):
        return {k: fill_places(v, places) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_places(v, places) for v in value]
    return value
