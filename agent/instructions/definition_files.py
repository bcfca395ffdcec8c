"""Definition files: the Markdown files in ``.claude/<kind>/`` that define custom commands,
skills, agents and output styles, found, read and turned into entries one way for all four.

A kind's files come from three folders, highest precedence first: the project's
``.claude/<kind>/``, ``$CCX_CONFIG_DIR/<kind>/`` (default ``~/.ccx/<kind>/``) and
``~/.claude/<kind>/``; a folder reached twice (a link, a project that is the home folder)
is read once. Plugins' folders of the kind come last (``PluginFolder``): their entries are
named ``<plugin>:<name>`` and ``${CLAUDE_PLUGIN_ROOT}`` in their bodies is the plugin's
folder. A file is optional front matter between ``---`` lines, then a body. Each
kind (``DefinitionKind``) says which files of a folder are its own, how large one may be,
how its front matter is read and how a file becomes an entry; of two entries with the same
key the first wins. A file that cannot be used is skipped with a warning naming it, never
raised, and never hides the others. Only regular files are opened: a FIFO named ``x.md``
would hold the read (and ccx's start) forever.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from agent.core.locations import config_dir as user_config_dir
from agent.permissions.settings import project_root
from tools.skill import split_frontmatter

Scope = Literal["project", "user", "plugin"]
Entry = TypeVar("Entry")
ROOT_VARIABLE = "${CLAUDE_PLUGIN_ROOT}"
PLAIN_FIELD = re.compile(r"([A-Za-z][\w-]*):\s*(.*)")


@dataclass(frozen=True)
class PluginFolder:
    """A plugin's folder of one kind's files (or one such file, or one skill's folder)."""

    path: Path
    plugin: str  # the plugin's name
    root: Path  # the plugin's folder, ${CLAUDE_PLUGIN_ROOT}


@dataclass(frozen=True)
class DefinitionFile:
    """One file, read: where it was found, its front matter (as written and as read), its body."""

    path: Path
    folder: Path  # the kind's folder it was found in (a command's namespace is the path below)
    scope: Scope
    frontmatter: str | None
    meta: dict[str, Any]
    body: str
    plugin: PluginFolder | None = None  # the plugin it came from: the entry's namespace

    def named(self, name: str) -> str:
        """``name`` as the entry is called: ``<plugin>:<name>`` for a plugin's."""
        return f"{self.plugin.plugin}:{name}" if self.plugin else name


@dataclass(frozen=True)
class DefinitionKind(Generic[Entry]):
    """What one kind of definition file is, for ``load_definitions``."""

    folder: str  # its folder's name under .claude/ and ccx's config folder: "commands"
    noun: str  # one file, in warnings: "command file"
    plural: str  # "commands", in "Could not list commands in ..."
    max_bytes: int
    # The kind's files in a folder, in order; one named so it cannot be used gets a warning.
    files: Callable[[Path, list[str]], list[Path]]
    read_meta: Callable[[str | None], dict[str, Any]]  # the front matter's keys; ValueError
    entry: Callable[[DefinitionFile], Entry | None]  # None: not offered; ValueError: malformed
    key: Callable[[Entry], str]  # of two entries with one key, the first wins
    malformed: str = "has malformed frontmatter"  # how a ValueError is put in the warning
    # The file a path given alone stands for (a plugin's manifest may name one): itself.
    single: Callable[[Path], Path | None] = lambda path: path if path.is_file() else None


@dataclass
class Definitions(Generic[Entry]):
    """The entries found, in precedence order, and what was skipped and why."""

    entries: list[Entry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def definition_dirs(
    folder: str, cwd: Path, home: Path | None = None, config_dir: Path | None = None
) -> list[tuple[Path, Scope]]:
    """The folders holding one kind's files, highest precedence first."""
    home = Path(home) if home is not None else Path.home()
    config = Path(config_dir) if config_dir is not None else user_config_dir(home)
    return [
        (project_root(cwd) / ".claude" / folder, "project"),
        (config / folder, "user"),
        (home / ".claude" / folder, "user"),
    ]


def load_definitions(
    kind: DefinitionKind[Entry],
    cwd: Path,
    home: Path | None = None,
    config_dir: Path | None = None,
    include_project: bool = True,
    ahead: Iterable[Entry] = (),
    include_user: bool = True,
    plugins: Iterable[PluginFolder] = (),
) -> Definitions[Entry]:
    """``ahead`` (entries that come before any file: built-in ones, ``--agents``), then every
    usable file of the kind's folders. ``include_project`` false leaves the project's folder
    out (the folder is not trusted, or ``--setting-sources`` leaves ``project`` out);
    ``include_user`` false leaves the user's folders out (``--setting-sources`` without ``user``)."""
    found: Definitions[Entry] = Definitions()
    keys: set[str] = set()

    def offer(entry: Entry) -> None:
        key = kind.key(entry)
        if key not in keys:
            keys.add(key)
            found.entries.append(entry)

    for given in ahead:
        offer(given)
    listed: set[Path] = set()
    for folder, scope in definition_dirs(kind.folder, cwd, home, config_dir):
        if (scope == "project" and not include_project) or (scope == "user" and not include_user):
            continue
        for path in _folder_files(kind, folder, listed, found.warnings):
            entry = load_definition(kind, path, folder, scope, found.warnings)
            if entry is not None:
                offer(entry)
    for given_folder in plugins:
        single = kind.single(given_folder.path)
        folder = single.parent if single is not None else given_folder.path
        paths = [single] if single else _folder_files(kind, folder, listed, found.warnings)
        for path in paths:
            entry = load_definition(kind, path, folder, "plugin", found.warnings, given_folder)
            if entry is not None:
                offer(entry)
    return found


def load_definition(
    kind: DefinitionKind[Entry],
    path: Path,
    folder: Path,
    scope: Scope,
    warnings: list[str],
    plugin: PluginFolder | None = None,
) -> Entry | None:
    """One file as an entry; None when it is not a regular file, is meant for nobody, or
    cannot be used (then with a warning saying why)."""
    noun = kind.noun[:1].upper() + kind.noun[1:]
    try:
        if not path.is_file():
            return None
        if path.stat().st_size > kind.max_bytes:
            warnings.append(f"{noun} {path} is larger than {_size(kind.max_bytes)}; skipped.")
            return None
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        warnings.append(f"{noun} {path} is not UTF-8 text; skipped.")
        return None
    except OSError as exc:
        warnings.append(f"Could not read {kind.noun} {path}: {exc.strerror or exc}; skipped.")
        return None
    try:
        raw, body = split_frontmatter(text)
        if plugin is not None:
            body = body.replace(ROOT_VARIABLE, str(plugin.root))
        meta = kind.read_meta(raw)
        return kind.entry(DefinitionFile(path, folder, scope, raw, meta, body, plugin))
    except ValueError as exc:
        warnings.append(f"{noun} {path} {kind.malformed} ({exc}); skipped.")
        return None


def markdown_files(folder: Path, _warnings: list[str]) -> list[Path]:
    """The ``*.md`` files right in the folder, by name."""
    return sorted(folder.glob("*.md"))


def parse_frontmatter(raw: str | None) -> dict[str, Any]:
    """The front matter as YAML; ValueError when it is not YAML or not a mapping."""
    if raw is None or not raw.strip():
        return {}
    import yaml  # only paid for by sessions that have definition files

    try:
        data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise ValueError(" ".join(str(exc).split())) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"expected a mapping of keys, got {type(data).__name__}")
    return data


def read_frontmatter(raw: str | None) -> dict[str, Any]:
    """The front matter as YAML; failing that, as plain ``key: value`` lines, the way Claude
    Code reads ``argument-hint: [file] [mode]`` (not YAML). ValueError when it is neither."""
    try:
        return parse_frontmatter(raw)
    except ValueError as error:
        fields = plain_fields(raw)
        lines = [line for line in (raw or "").splitlines() if line.strip()]
        if fields and len(fields) == len([x for x in lines if not x.lstrip().startswith("#")]):
            return dict(fields)
        raise error


def plain_fields(raw: str | None) -> dict[str, str]:
    """``key: value`` lines of the front matter, values as written (quotes stripped)."""
    fields = {}
    for line in (raw or "").splitlines():
        match = PLAIN_FIELD.fullmatch(line.rstrip())
        if match:
            fields[match.group(1)] = match.group(2).strip().strip("'\"")
    return fields


def first_body_line(body: str) -> str:
    """The body's first line with text, heading marks dropped: a description's stand-in."""
    for line in body.splitlines():
        text = re.sub(r"^#+\s*", "", line.strip()).strip()
        if text:
            return text
    return ""


def _folder_files(
    kind: DefinitionKind[Entry], folder: Path, listed: set[Path], warnings: list[str]
) -> list[Path]:
    """The kind's files in ``folder``; [] for a folder that is not there or was listed."""
    try:
        if not folder.is_dir():
            return []
        resolved = folder.resolve()
        if resolved in listed:
            return []
        listed.add(resolved)
        return kind.files(folder, warnings)
    except (OSError, RuntimeError) as exc:  # RuntimeError: Python 3.11's loop of links
        warnings.append(f"Could not list {kind.plural} in {folder}: {exc}")
        return []


def _size(limit: int) -> str:
    mib = 1024 * 1024
    return f"{limit // mib} MiB" if limit % mib == 0 else f"{limit // 1024} KiB"
