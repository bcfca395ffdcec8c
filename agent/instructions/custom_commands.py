"""Custom slash commands: Markdown files in ``.claude/commands/`` that become ``/name``.

A command is ``<commands dir>/<path>.md``; a subfolder gives a namespace, as
Claude Code names them (``frontend/build.md`` is ``/frontend:build``). The
files come from the project's ``.claude/commands/``, ``$CCX_CONFIG_DIR/commands/``
(default ``~/.ccx/commands/``), ``~/.claude/commands/`` and the plugins' folders
(``/<plugin>:<name>``); on a name clash the first of those wins. Optional YAML frontmatter: ``description``,
``argument-hint``, ``allowed-tools`` (rules granted for the command's turn),
``model`` (that turn's model); frontmatter that is not YAML may be plain
``key: value`` lines. Finding and reading the files is
agent.instructions.definition_files' part: a file that cannot be used (not
UTF-8, frontmatter neither YAML nor such lines) is skipped with a warning.

The body's placeholders are filled here, purely: ``$ARGUMENTS`` (everything
typed after the name), ``$ARGUMENTS[N]`` and ``$N`` (the N-th word, counted
from 0 as Claude Code 2.1 does; one out of range stays as written). A body
without placeholders gets ``ARGUMENTS: ...`` appended. Running ``!`cmd```
and attaching ``@file`` is tui.commands.custom' part.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.instructions.definition_files import (
    DefinitionFile,
    DefinitionKind,
    PluginFolder,
    Scope,
    first_body_line,
    load_definitions,
    plain_fields,
    read_frontmatter,
)
from agent.permissions.rules import split_rules

MAX_COMMAND_FILE_BYTES = 256 * 1024
NAME_PART = re.compile(r"[A-Za-z][\w.-]*")
PLACEHOLDER = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$(\d+)")
BANG = re.compile(r"!`([^`\n]+)`")
HEADER = re.compile(
    r"<command-message>[^<]*</command-message>\n<command-name>/([^<]*)</command-name>\n"
    r"<command-args>(.*)</command-args>\n",
    re.DOTALL,
)
FILE_REF = re.compile(r"(?<![\w@`])@((?:[\w.~-]|/)+[\w/-])")


@dataclass(frozen=True)
class CustomCommand:
    """One command file, read."""

    name: str  # "frontend:build"
    body: str
    path: Path
    scope: Scope
    description: str = ""
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.argument_hint}".rstrip()

    @property
    def help(self) -> str:
        """The description with where the file is from, as Claude Code lists it."""
        return f"{self.description or '(no description)'} ({self.scope})"


@dataclass
class DiscoveredCommands:
    """The commands found, by lower-cased name, in precedence order; what was skipped."""

    by_name: dict[str, CustomCommand] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> CustomCommand | None:
        return self.by_name.get(name.lower())

    def __iter__(self) -> Any:
        return iter(self.by_name.values())

    def __len__(self) -> int:
        return len(self.by_name)


def discover_commands(
    cwd: Path,
    home: Path | None = None,
    config_dir: Path | None = None,
    include_project: bool = True,
    include_user: bool = True,
    plugins: Iterable[PluginFolder] = (),
) -> DiscoveredCommands:
    """Every usable command file; a broken one is skipped with a warning, never raised.
    (An untrusted folder's commands are found: what they may do is checked as they run.)
    ``plugins``: the plugins' command folders, their commands named ``/<plugin>:<name>``."""
    found = load_definitions(
        COMMANDS, cwd, home, config_dir, include_project, include_user=include_user, plugins=plugins
    )
    return DiscoveredCommands({c.name.lower(): c for c in found.entries}, found.warnings)


def command_name_for(path: Path, root: Path) -> str | None:
    """``frontend/build.md`` under ``root`` -> ``frontend:build``; None for a name no one
    could type (a part that does not start with a letter, spaces...)."""
    parts = [*path.relative_to(root).parent.parts, path.stem]
    if not all(NAME_PART.fullmatch(part) for part in parts):
        return None
    return ":".join(parts)


def command_files(folder: Path, warnings: list[str]) -> list[Path]:
    """Every ``.md`` below the folder, by path; one whose name cannot be typed is warned of."""
    files = []
    for path in sorted(folder.rglob("*.md")):
        if command_name_for(path, folder) is None:
            warnings.append(f"Command file {path}: its name cannot be typed as /name; skipped.")
        else:
            files.append(path)
    return files


def command_from(file: DefinitionFile) -> CustomCommand:
    """A command file's entry (its name from its path below the commands folder)."""
    name = command_name_for(file.path, file.folder)
    if name is None:
        raise ValueError("its name cannot be typed as /name")
    meta = file.meta
    return CustomCommand(
        name=file.named(name),
        body=file.body.strip("\n"),
        path=file.path,
        scope=file.scope,
        description=_one_line(meta.get("description")) or first_body_line(file.body)[:120],
        argument_hint=plain_fields(file.frontmatter).get("argument-hint")
        or _one_line(meta.get("argument-hint")),
        allowed_tools=tuple(tool_rules(meta.get("allowed-tools"))),
        model=_one_line(meta.get("model")) or None,
    )


COMMANDS = DefinitionKind[CustomCommand](
    folder="commands",
    noun="command file",
    plural="commands",
    max_bytes=MAX_COMMAND_FILE_BYTES,
    files=command_files,
    read_meta=read_frontmatter,  # YAML, or key: value lines (argument-hint: [a] [b])
    entry=command_from,
    key=lambda command: command.name.lower(),
)


def tool_rules(value: Any) -> list[str]:
    """``allowed-tools`` as written (a list, or one string with commas) -> rule texts."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return split_rules([str(item) for item in items if item is not None])


def command_words(args: str) -> list[str]:
    """The arguments as words, quotes honoured (unbalanced quotes: split on spaces)."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def fill_arguments(body: str, args: str) -> str:
    """The body with ``$ARGUMENTS``, ``$ARGUMENTS[N]`` and ``$N`` filled in."""
    words = command_words(args)

    def replace(match: re.Match[str]) -> str:
        index = match.group(1) or match.group(2)
        if index is None:
            return args
        position = int(index)
        return words[position] if position < len(words) else match.group(0)

    if PLACEHOLDER.search(body) is None:
        return f"{body}\n\nARGUMENTS: {args}" if args.strip() else body
    return PLACEHOLDER.sub(replace, body)


def shell_snippets(text: str) -> list[str]:
    """The commands of every ``!`cmd``` in ``text``, in order."""
    return [match.group(1).strip() for match in BANG.finditer(text)]


def what_it_does(command: CustomCommand) -> list[str]:
    """What the command does beyond sending its text: "runs shell commands (!`cmd`)",
    "grants Bash (allowed-tools)"; [] for a plain prompt template."""
    acts = []
    if snippets := shell_snippets(command.body):
        acts.append(f"runs shell commands (!`{_clipped(snippets[0], 30)}`)")
    if command.allowed_tools:
        acts.append(f"grants {_clipped(', '.join(command.allowed_tools), 30)} (allowed-tools)")
    return acts


def _clipped(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def file_references(text: str) -> list[str]:
    """The paths of every ``@path`` in ``text`` (once each, in order; trailing dots dropped)."""
    seen: dict[str, None] = {}
    for match in FILE_REF.finditer(text):
        seen.setdefault(match.group(1).rstrip("."), None)
    return [path for path in seen if path]


def command_header(name: str, args: str) -> str:
    """The block naming the command, in Claude Code's tags, sent before the body."""
    return (
        f"<command-message>{name}</command-message>\n"
        f"<command-name>/{name}</command-name>\n"
        f"<command-args>{args}</command-args>\n"
    )


def typed_line(header: str) -> str | None:
    """What the user typed (``/name args``), read back from ``command_header``'s block; None
    for any other text (a resumed session shows the line, not the expanded body)."""
    match = HEADER.fullmatch(header)
    if match is None:
        return None
    return f"/{match.group(1)} {match.group(2)}".rstrip()


def _one_line(value: Any) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    return " ".join(str(value).split())


def names(commands: Iterable[CustomCommand]) -> list[str]:
    return [command.name for command in commands]
