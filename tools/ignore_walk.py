"""Walking a tree the way ripgrep does, for when ripgrep is not installed.

.gitignore, .ignore and .rgignore files (with pathspec), .git/info/exclude,
parent ignore files up to the repository root, hidden files and directories
skipped, symlinks not followed, ``--glob`` overrides matched relative to the
working directory (last match wins, they beat ignore rules), and ``--type``
filters that also let hidden files in.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tools.glob_pattern import compile_gitignore_glob, glob_to_regex

if TYPE_CHECKING:
    import pathspec

IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")  # highest precedence first


@dataclass
class _IgnoreLevel:
    directory: str  # absolute, without a trailing slash
    specs: list[pathspec.GitIgnoreSpec]  # highest precedence first


class WalkFilter:
    """Which entries a search looks at: --glob overrides, ignore files, --type, hidden names."""

    def __init__(
        self,
        cwd: str,
        globs: tuple[str, ...] = (),
        type_globs: tuple[str, ...] = (),
        *,
        hidden: bool = False,  # rg --hidden: hidden names are not skipped
    ) -> None:
        self.cwd = cwd
        self.hidden = hidden
        self.overrides: list[tuple[re.Pattern[str], bool, bool]] = []  # regex, dir_only, exclude
        for glob in globs:
            exclude = glob.startswith("!")
            regex, dir_only = compile_gitignore_glob(glob[1:] if exclude else glob)
            self.overrides.append((regex, dir_only, exclude))
        self.has_whitelist = any(not exclude for _, _, exclude in self.overrides)
        self.types = [re.compile(glob_to_regex(g), re.DOTALL) for g in type_globs]

    def _override(self, path: str, is_dir: bool) -> bool | None:
        """True: search it, False: skip it, None: no say."""
        if not self.overrides:
            return None
        rel = _relative(path, self.cwd)
        verdict = None
        for regex, dir_only, exclude in self.overrides:
            if (not dir_only or is_dir) and regex.fullmatch(rel):
                verdict = not exclude
        if verdict is None and self.has_whitelist and not is_dir:
            return False
        return verdict

    def accept(self, path: str, name: str, is_dir: bool, levels: list[_IgnoreLevel]) -> bool:
        verdict = self._override(path, is_dir)
        if verdict is not None:
            return verdict
        whitelisted = False
        ignored = _ignored(path, is_dir, levels)
        if ignored is True:
            return False
        if ignored is False:
            whitelisted = True
        if self.types and not is_dir:
            if not any(t.fullmatch(name) for t in self.types):
                return False
            whitelisted = True
        return whitelisted or self.hidden or not name.startswith(".")


def _relative(path: str, base: str) -> str:
    if path.startswith(base + os.sep):
        return path[len(base) + 1 :]
    return path


def _ignored(path: str, is_dir: bool, levels: list[_IgnoreLevel]) -> bool | None:
    """True if an ignore file ignores it, False if one re-includes it (!pattern), else None."""
    for level in reversed(levels):  # the deepest ignore file decides first
        rel = _relative(path, level.directory)
        if rel == path:
            continue
        if is_dir:
            rel += "/"
        for spec in level.specs:
            result = _entry_verdict(spec, rel)
            if result is not None:
                return result
    return None


def _entry_verdict(spec: pathspec.GitIgnoreSpec, rel: str) -> bool | None:
    """The last pattern matching `rel` itself decides: True ignores, False re-includes.

    pathspec also counts a path as matched when a directory above it is; ripgrep
    does not (its walk never enters an ignored directory, and directories above the
    search root are not checked), so such matches are set aside here.
    """
    if spec.check_file(rel).include is None:
        return None  # the common case: no pattern matches even counting parents
    verdict = None
    for pattern in spec.patterns:
        if pattern.include is None or pattern.regex is None:
            continue
        m = pattern.regex.match(rel)
        if m is None:
            continue
        if m.end() < len(rel) and "ps_d" in m.re.groupindex and m.group("ps_d") is not None:
            continue  # matched a parent directory, not this entry
        verdict = pattern.include
    return verdict


def _load_level(
    directory: str, extra: tuple[str, ...] = (), vcs: bool = True
) -> _IgnoreLevel | None:
    """The ignore files of ``directory``; without ``vcs``, .gitignore and git's exclude file
    are left out (the respectGitignore setting off), .ignore and .rgignore still apply."""
    import pathspec  # ~30 modules: imported by the first walk, not by the session's start

    specs = []
    names = IGNORE_FILES if vcs else tuple(n for n in IGNORE_FILES if n != ".gitignore")
    for name in (*names, *(extra if vcs else ())):
        try:
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                specs.append(pathspec.GitIgnoreSpec.from_lines(f.read().splitlines()))
        except OSError:
            continue
    return _IgnoreLevel(directory, specs) if specs else None


def _parent_levels(root: str, vcs: bool = True) -> list[_IgnoreLevel]:
    """Ignore files of the directories above the search root, up to the repository root."""
    chain = []
    current = root
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            break
        chain.append(parent)
        if os.path.exists(os.path.join(parent, ".git")):
            break
        current = parent
    if os.path.exists(os.path.join(root, ".git")):
        chain = []  # the root is a repository root: nothing above it applies
    levels = []
    for directory in reversed(chain):
        level = _load_level(directory, _git_exclude(directory), vcs)
        if level:
            levels.append(level)
    return levels


def _git_exclude(directory: str) -> tuple[str, ...]:
    exclude = os.path.join(".git", "info", "exclude")
    return (exclude,) if os.path.isfile(os.path.join(directory, exclude)) else ()


def walk_files(
    root: str, flt: WalkFilter, cancel: threading.Event, vcs_ignores: bool = True
) -> Iterator[str]:
    """Absolute paths of the files under the directory `root` that `flt` lets in, in name order
    depth first; stops when `cancel` is set. ``vcs_ignores`` False: .gitignore does not apply."""
    levels = _parent_levels(root, vcs_ignores)
    stack: list[tuple[str, list[_IgnoreLevel]]] = [(root, levels)]
    while stack:
        if cancel.is_set():
            return
        directory, inherited = stack.pop()
        level = _load_level(directory, _git_exclude(directory), vcs_ignores)
        current = [*inherited, level] if level else inherited
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue  # like rg without --follow
                is_dir = entry.is_dir()
            except OSError:
                continue
            if not flt.accept(entry.path, entry.name, is_dir, current):
                continue
            if is_dir:
                subdirs.append((entry.path, current))
            elif entry.is_file():
                yield entry.path
        stack.extend(reversed(subdirs))
