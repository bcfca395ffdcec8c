"""Memory files: the CLAUDE.md / AGENTS.md instructions that go into the system prompt.

Discovery follows Claude Code so existing files work unchanged: the user's
files first (``~/.claude/CLAUDE.md``, then ``<config>/CLAUDE.md``), then each
directory from the top (the home directory when the cwd is inside it, else the
filesystem root) down to the cwd, where ``CLAUDE.md``, ``.claude/CLAUDE.md``,
``CLAUDE.local.md`` and ``AGENTS.md`` are read in that order. ``@path``
references outside code are imports: each imported file follows its importer.
Files in directories below the cwd are added later, when the model reads a
file there (``MemoryFiles.nested_for``).

What a file may import depends on whose it is. The user's own files may import
anything of theirs. Every other file (the project's, nested ones, and what
they import) is read only if its real path (symlinks followed) lies inside the
project roots (the cwd's project and ``--add-dir`` folders) or, for a file in
a directory above the project, inside that directory; and no file is read that
a Read deny rule covers. A refused file is never read: it is listed in
``MemoryFiles.refused`` and named in ``warnings``, whatever the route to it
(``..``, ``~``, an absolute path, a symlinked file or directory).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent.core.locations import config_dir as user_config_dir
from agent.permissions.paths import is_within
from agent.permissions.settings import project_root

log = logging.getLogger(__name__)

MemoryKind = Literal["user", "project", "local", "agents", "nested", "import"]

MAX_FILE_BYTES = 100 * 1024
MAX_IMPORT_DEPTH = 5

# Per directory, in order: (relative path, kind when found at or above the cwd).
DIRECTORY_FILES: tuple[tuple[str, MemoryKind], ...] = (
    ("CLAUDE.md", "project"),
    (".claude/CLAUDE.md", "project"),
    ("CLAUDE.local.md", "local"),
    ("AGENTS.md", "agents"),
)

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_TRAILING_PUNCTUATION = ",;:!?)]}'\""


@dataclass(frozen=True)
class MemoryFile:
    path: Path
    kind: MemoryKind
    content: str


@dataclass(frozen=True)
class RefusedFile:
    """A memory file or import that was not read, and why; ``importer`` None for a file
    found in a directory (not imported)."""

    path: Path  # as reached (the import's target, before symlinks)
    real: Path  # where it really is
    reference: str  # as written after the @, or the file's name
    importer: Path | None
    outside: bool  # True: outside the project roots; False: a Read deny rule covers it

    @property
    def why(self) -> str:
        return "outside the project" if self.outside else "a Read deny rule covers it"

    def describe(self, relative_to: Path | None = None) -> str:
        """ "CLAUDE.md imports ../secret.txt" or "CLAUDE.md (a link to /x)", paths relative to
        ``relative_to`` where they are inside it."""
        if self.importer is not None:
            return f"{_shown(self.importer, relative_to)} imports {self.reference}"
        link = f" (a link to {self.real})" if self.outside else ""
        return f"{_shown(self.path, relative_to)}{link}"


# Where a file's imports may land: None for anywhere (the user's own files).
Reach = tuple[Path, ...] | None


class MemoryFiles:
    """Finds and reads the memory files of one session, remembering what it returned."""

    def __init__(
        self,
        cwd: str | os.PathLike[str],
        home: str | os.PathLike[str] | None = None,
        config_dir: str | os.PathLike[str] | None = None,
        roots: Sequence[str | os.PathLike[str]] | None = None,
        read_denied: Callable[[str], bool] | None = None,
    ) -> None:
        """``roots``: the project folders a project's files may import from (default: the
        cwd's project root); ``read_denied``: whether a Read deny rule covers a path."""
        self.cwd = Path(os.path.abspath(os.fspath(cwd)))
        self.home = Path(os.path.abspath(os.fspath(home))) if home else Path.home()
        if config_dir is None:
            config_dir = user_config_dir(self.home)
        self.config_dir = Path(os.path.abspath(os.fspath(config_dir)))
        if roots is None:
            roots = [project_root(self.cwd)]
        self.roots: tuple[Path, ...] = tuple(Path(os.path.realpath(r)) for r in roots)
        self.read_denied = read_denied
        self.warnings: list[str] = []
        self.refused: list[RefusedFile] = []  # since the last load(), nested ones included
        self._seen: set[Path] = set()  # resolved paths already returned (or being imported)
        self._loaded: list[Path] = []

    def load(self) -> list[MemoryFile]:
        """The user's files, then the project's from the outermost directory to the cwd.

        Each call discovers afresh (files may have changed, e.g. before /clear),
        and forgets which nested files were returned.
        """
        self._seen.clear()
        self._loaded.clear()
        self.refused.clear()
        found: list[MemoryFile] = []
        user_files = (self.home / ".claude" / "CLAUDE.md", self.config_dir / "CLAUDE.md")
        for path in user_files:
            found.extend(self._collect(path, "user", reach=None))
        for directory in self._directories_to_cwd():
            reach = self._reach_of(directory)
            for name, kind in DIRECTORY_FILES:
                found.extend(self._collect(directory / name, kind, reach=reach))
        return found

    def nested_for(self, file_path: str | os.PathLike[str]) -> list[MemoryFile]:
        """Memory files of the directories from below the cwd down to the file's, each once."""
        target = Path(os.path.abspath(os.fspath(file_path))).parent
        try:
            relative = target.relative_to(self.cwd)
        except ValueError:
            return []
        found: list[MemoryFile] = []
        directory = self.cwd
        for part in relative.parts:
            directory = directory / part
            for name, _kind in DIRECTORY_FILES:
                found.extend(self._collect(directory / name, "nested", reach=self.roots))
        return found

    def paths(self) -> list[Path]:
        """Every memory file returned so far, imports and nested ones included."""
        return list(self._loaded)

    # -- internals ---------------------------------------------------------------------

    def _directories_to_cwd(self) -> list[Path]:
        try:
            relative = self.cwd.relative_to(self.home)
            top = self.home
        except ValueError:
            relative = self.cwd.relative_to(self.cwd.anchor)
            top = Path(self.cwd.anchor)
        directories = [top]
        for part in relative.parts:
            directories.append(directories[-1] / part)
        return directories

    def _reach_of(self, directory: Path) -> tuple[Path, ...]:
        """Where the files found in ``directory`` may import from: the project roots, and
        the directory itself when it lies above them (the user's own folders, not the
        project's)."""
        real = Path(os.path.realpath(directory))
        if any(is_within(str(real), str(root)) for root in self.roots):
            return self.roots
        return (*self.roots, real)

    def _collect(
        self,
        path: Path,
        kind: MemoryKind,
        reach: Reach,
        depth: int = 0,
        importer: Path | None = None,
        reference: str = "",
    ) -> Iterator[MemoryFile]:
        """The file (if new, readable and allowed) followed by its imports, depth first."""
        resolved = _resolve(path)
        if resolved is None or resolved in self._seen:
            return
        if not path.is_file():
            return
        if refused := self._refusal(path, resolved, reach, importer, reference):
            self._seen.add(resolved)  # one notice per file, however many import it
            self.refused.append(refused)
            # a notice for the user (the runtime shows warnings), not a log line: it is expected
            self.warnings.append(f"{refused.describe(self.cwd)}: not read ({refused.why})")
            log.info("%s", self.warnings[-1])
            return
        content = self._read(path)
        if content is None:
            return
        self._seen.add(resolved)
        self._loaded.append(path)
        yield MemoryFile(path=path, kind=kind, content=content)
        if depth >= MAX_IMPORT_DEPTH:
            return
        for written, target in imports_of(content, path.parent, self.home):
            yield from self._collect(target, "import", reach, depth + 1, path, written)

    def _refusal(
        self, path: Path, real: Path, reach: Reach, importer: Path | None, reference: str
    ) -> RefusedFile | None:
        """Why ``path`` may not be read, or None. A file found in a directory (not imported)
        is refused only when it is a link that leads out, or denied."""
        outside = reach is not None and not any(is_within(str(real), str(root)) for root in reach)
        denied = self.read_denied is not None and (
            self.read_denied(str(path)) or self.read_denied(str(real))
        )
        if not (outside or denied):
            return None
        return RefusedFile(path, real, reference or path.name, importer, outside)

    def _read(self, path: Path) -> str | None:
        try:
            if not path.is_file():
                return None
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                self._warn(
                    f"skipped memory file {path}: {size // 1024} KB is over the 100 KB limit"
                )
                return None
            data = path.read_bytes()
        except OSError as exc:
            self._warn(f"could not read memory file {path}: {exc.strerror or exc}")
            return None
        if b"\0" in data[:8192]:
            return None  # an import that points at a binary file
        return strip_comments(data.decode("utf-8", errors="replace"))

    def _warn(self, text: str) -> None:
        self.warnings.append(text)
        log.warning("%s", text)


def _resolve(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop on older Pythons
        return None


def _outside_fences(text: str) -> Iterator[tuple[bool, str]]:
    """(in_code, line) for every line, tracking ``` and ~~~ fenced blocks."""
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            yield True, line
        elif fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            yield True, line
        else:
            yield False, line


def strip_comments(text: str) -> str:
    """Remove <!-- --> comments outside fenced code; an unclosed one is left as written."""
    parts: list[str] = []
    prose: list[str] = []
    for in_code, line in _outside_fences(text):
        if in_code:
            if prose:
                parts.append(_COMMENT.sub("", "".join(prose)))
                prose = []
            parts.append(line)
        else:
            prose.append(line)
    if prose:
        parts.append(_COMMENT.sub("", "".join(prose)))
    return "".join(parts)


def imports_of(text: str, base: Path, home: Path) -> list[tuple[str, Path]]:
    """(the reference as written, the file it names) for each @path import, outside fenced
    and inline code; a reference that names no existing file is not an import."""
    found: list[tuple[str, Path]] = []
    for in_code, line in _outside_fences(text):
        if in_code:
            continue
        for match in _IMPORT.finditer(_INLINE_CODE.sub(" ", line)):
            named = _import_path(match.group(1).replace("\\ ", " "), base, home)
            if named is not None:
                found.append(named)
    return found


def _import_path(reference: str, base: Path, home: Path) -> tuple[str, Path] | None:
    if reference.startswith("~/"):
        candidate = home / reference[2:]
    elif reference.startswith("/"):
        candidate = Path(reference)
    elif reference[0].isalnum() or reference[0] in "._-":
        candidate = base / reference
    else:
        return None
    candidate = Path(os.path.normpath(candidate))
    try:
        if candidate.is_file():
            return reference, candidate
    except OSError:  # a name too long, a permission problem: not an import
        return None
    # "see @notes.md." - a sentence's punctuation is not part of the path
    trimmed = reference.rstrip(_TRAILING_PUNCTUATION + ".")
    if trimmed and trimmed != reference:
        return _import_path(trimmed, base, home)
    return None


def _shown(path: Path, base: Path | None) -> str:
    """``path`` relative to ``base`` when inside it, else as it is."""
    if base is not None and is_within(str(path), str(base)):
        return os.path.relpath(path, base)
    return str(path)
