"""Custom slash commands: Markdown files in ``.claude/commands/`` that become ``/name``.

A command is ``<commands dir>/<path>.md``; a subfolder gives a namespace, as
Claude Code names them (``frontend/build.md`` is ``/frontend:build``). The
files come from the project's ``.claude/commands/``, ``$CCX_CONFIG_DIR/commands/``
(default ``~/.ccx/commands/``) and ``~/.claude/commands/``; on a name clash the
first of those wins. Optional YAML frontmatter: ``description``,
``argument-hint``, ``allowed-tools`` (rules granted for the command's turn),
``model`` (that turn's model). A file that is not UTF-8 or whose frontmatter
is not YAML is skipped with a warning.

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
from typing import Any, Literal

from agent.core.locations import config_dir as user_config_dir
from agent.instructions.skills import parse_frontmatter
from agent.permissions.rules import split_rules
from agent.permissions.settings import project_root
from tools.skill import FrontmatterError, split_frontmatter

Scope = Literal["project", "user"]
MAX_COMMAND_FILE_BYTES = 256 * 1024
NAME_PART = re.compile(r"[A-Za-z][\w.-]*")
PLACEHOLDER = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$(\d+)")
BANG = re.compile(r"!`([^`\n]+)`")
HEADER = re.compile(
    r"<command-message>[^<]*</command-message>\n<command-name>/([^<]*)</command-name>\n"
    r"<command-args>(.*)</command-args>\n",
    re.DOTALL,
)
PLAIN_FIELD = re.compile(r"([A-Za-z][\w-]*):\s*(.*)")
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


def command_dirs(
    cwd: Path, home: Path | None = None, config_dir: Path | None = None
) -> list[tuple[Path, Scope]]:
    """The folders holding command files, highest precedence first."""
    home = Path(home) if home is not None else Path.home()
    config = Path(config_dir) if config_dir is not None else user_config_dir(home)
    return [
        (project_root(cwd) / ".claude" / "commands", "project"),
        (config / "commands", "user"),
        (home / ".claude" / "commands", "user"),
    ]


def discover_commands(
    cwd: Path, home: Path | None = None, config_dir: Path | None = None
) -> DiscoveredCommands:
    """Every usable command file; a broken one is skipped with a warning, never raised."""
    found = DiscoveredCommands()
    seen: set[Path] = set()
    for directory, scope in command_dirs(cwd, home, config_dir):
        try:
            resolved = directory.resolve()
            if resolved in seen or not directory.is_dir():
                continue
            files = sorted(directory.rglob("*.md"))
        except OSError as exc:
            found.warnings.append(f"Could not list commands in {directory}: {exc}")
            continue
        seen.add(resolved)
        for path in files:
            command = load_command(path, directory, scope, found.warnings)
            if command is not None:
                found.by_name.setdefault(command.name.lower(), command)
    return found


def command_name_for(path: Path, root: Path) -> str | None:
    """``frontend/build.md`` under ``root`` -> ``frontend:build``; None for a name no one
    could type (a part that does not start with a letter, spaces...)."""
    parts = [*path.relative_to(root).parent.parts, path.stem]
    if not all(NAME_PART.fullmatch(part) for part in parts):
        return None
    return ":".join(parts)


def load_command(path: Path, root: Path, scope: Scope, warnings: list[str]) -> CustomCommand | None:
    """Read one command file; None (and a warning) when it cannot be used."""
    name = command_name_for(path, root)
    if name is None:
        warnings.append(f"Command file {path}: its name cannot be typed as /name; skipped.")
        return None
    try:
        if not path.is_file():
            return None
        if path.stat().st_size > MAX_COMMAND_FILE_BYTES:
            warnings.append(f"Command file {path} is larger than 256 KiB; skipped.")
            return None
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        warnings.append(f"Command file {path} is not UTF-8 text; skipped.")
        return None
    except OSError as exc:
        warnings.append(f"Could not read command file {path}: {exc.strerror or exc}; skipped.")
        return None
    try:
        raw, body = split_frontmatter(text)
        meta = read_frontmatter(raw)
    except (FrontmatterError, ValueError) as exc:
        warnings.append(f"Command file {path} has malformed frontmatter ({exc}); skipped.")
        return None
    return CustomCommand(
        name=name,
        body=body.strip("\n"),
        path=path,
        scope=scope,
        description=_one_line(meta.get("description")) or _first_line(body),
        argument_hint=_plain_fields(raw).get("argument-hint")
        or _one_line(meta.get("argument-hint")),
        allowed_tools=tuple(tool_rules(meta.get("allowed-tools"))),
        model=_one_line(meta.get("model")) or None,
    )


def read_frontmatter(raw: str | None) -> dict[str, Any]:
    """The frontmatter as YAML; failing that, as plain ``key: value`` lines, the way Claude
    Code reads ``argument-hint: [file] [mode]`` (not YAML). ValueError when it is neither."""
    try:
        return parse_frontmatter(raw)
    except ValueError as error:
        fields = _plain_fields(raw)
        lines = [line for line in (raw or "").splitlines() if line.strip()]
        if fields and len(fields) == len([x for x in lines if not x.lstrip().startswith("#")]):
            return dict(fields)
        raise error


def _plain_fields(raw: str | None) -> dict[str, str]:
    """``key: value`` lines of the frontmatter, values as written (quotes stripped)."""
    fields = {}
    for line in (raw or "").splitlines():
        match = PLAIN_FIELD.fullmatch(line.rstrip())
        if match:
            fields[match.group(1)] = match.group(2).strip().strip("'\"")
    return fields


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


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = re.sub(r"^#+\s*", "", line.strip()).strip()
        if text:
            return text[:120]
    return ""


def names(commands: Iterable[CustomCommand]) -> list[str]:
    return [command.name for command in commands]
