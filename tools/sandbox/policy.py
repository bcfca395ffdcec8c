"""What a sandboxed Bash command may do: the policy the runtime builds and hands to BashTool.

Writes are allowed only beneath the project's directories (working directory,
project root, added directories), the temp directories and a few devices a
shell needs; inside each project directory the paths that make git, ccx or
Claude Code run something later stay read-only: ``.git/hooks``,
``.git/config`` (and ``config.worktree``), ``.git/worktrees/``, every
submodule's ``config`` and ``hooks`` under ``.git/modules/``, a ``.git`` file
pointing elsewhere (and the hooks and config where it points), the folder
``core.hooksPath`` names, ``.husky/``, ``.claude/`` and ``.mcp.json``.
Reading is allowed everywhere except the concrete paths listed as denied, and
the Unix sockets of the user's session (``tools.sandbox.sockets``), which are
hidden unless the user's settings allow them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# Devices a shell and common tools write to; everything else under /dev is read-only.
DEVICES = (
    "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom",
    "/dev/ptmx",
)  # fmt: skip
DEVICE_DIRS = ("/dev/pts", "/dev/shm")  # pseudo-terminals; POSIX shared memory and semaphores
# Relative to each project directory; read-only inside the writable tree.
PROTECTED = (
    ".git/hooks", ".git/config", ".git/config.worktree", ".git/worktrees", ".husky", ".claude",
    ".mcp.json",
)  # fmt: skip
MAX_SUBMODULE_DEPTH = 4  # .git/modules/a/modules/b/...: nested submodules
MAX_SUBMODULES = 200
BACKENDS = ("bwrap", "landlock")


def temp_dirs() -> list[Path]:
    return [Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp")]


@dataclass(frozen=True)
class SandboxPolicy:
    """Built once per session by the runtime; ``enabled`` False runs Bash unsandboxed.

    ``backend`` forces "bwrap" or "landlock" (None: the best that works here).
    ``deny_read`` answers, for a path, whether reading it is denied (from the
    Read deny rules); the bubblewrap backend masks what it matches beneath the
    project, found by a bounded walk, in addition to ``denied_reads``.
    """

    enabled: bool = True
    project_dirs: tuple[Path, ...] = ()
    extra_writable: tuple[Path, ...] = ()  # settings' sandbox.filesystem.allowWrite
    denied_reads: tuple[Path, ...] = ()
    network: bool = True
    backend: str | None = None
    deny_read: Callable[[str], bool] | None = field(default=None, compare=False)
    extra_protected: tuple[Path, ...] = ()  # e.g. the folder core.hooksPath names
    hidden: tuple[Path, ...] = ()  # more to hide: ccx's own sockets (the warm worker's)
    allowed_sockets: tuple[Path, ...] = ()  # settings' sandbox.network.allowUnixSockets
    all_sockets: bool = False  # settings' sandbox.network.allowAllUnixSockets

    def roots(self) -> list[Path]:
        """The project directories, resolved and existing, outermost first."""
        return _existing_dirs(self.project_dirs)

    def writable_dirs(self) -> list[Path]:
        """Every directory tree a sandboxed command may write in, resolved, outermost first.

        A worktree's (or submodule's) git directories count, so that git works in it.
        """
        linked = [d for root in self.roots() for d in linked_git_dirs(root)]
        return _existing_dirs([*self.project_dirs, *linked, *self.extra_writable, *temp_dirs()])

    def protected_paths(self) -> list[Path]:
        """The read-only paths inside the project directories (existing or not)."""
        paths: list[Path] = []
        for root in self.roots():
            paths.extend(root / rel for rel in PROTECTED)
            paths += submodule_paths(root / ".git")
            linked = linked_git_dirs(root)
            if linked:  # the pointer to them, and their hooks and config
                paths.append(root / ".git")
            for git_dir in linked:
                paths += [git_dir / "hooks", git_dir / "config", git_dir / "config.worktree"]
                paths += submodule_paths(git_dir)
        writable = self.writable_dirs()
        for path in self.extra_protected:
            real = Path(os.path.realpath(path))
            if any(real.is_relative_to(d) for d in writable):  # elsewhere it is read-only anyway
                paths.append(real)
        return list(dict.fromkeys(paths))

    def describe_writable(self) -> str:
        """E.g. "/work/app and the temp directories (/tmp, /var/tmp)"."""
        temps = set(_existing_dirs(temp_dirs()))
        own = [str(p) for p in self.writable_dirs() if p not in temps]
        temp_list = ", ".join(str(p) for p in _existing_dirs(temp_dirs()))
        where = ", ".join(own) if own else "nothing in the project"
        return f"{where} and the temp directories ({temp_list})"


def submodule_paths(git_dir: Path) -> list[Path]:
    """Each submodule's ``config``, ``config.worktree`` and ``hooks`` beneath
    ``git_dir/modules`` (nested ones too), as far as they exist."""
    paths: list[Path] = []
    pending = [(git_dir / "modules", 1)]
    while pending and len(paths) < MAX_SUBMODULES * 3:
        folder, depth = pending.pop()
        try:
            with os.scandir(folder) as it:
                entries = [Path(e.path) for e in it if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for entry in sorted(entries):
            if (entry / "HEAD").exists() or (entry / "config").exists():  # a submodule's git dir
                paths += [entry / "config", entry / "config.worktree", entry / "hooks"]
                if depth < MAX_SUBMODULE_DEPTH:
                    pending.append((entry / "modules", depth + 1))
            elif depth < MAX_SUBMODULE_DEPTH:  # a submodule named with a slash: a/b
                pending.append((entry, depth + 1))
    return paths


def linked_git_dirs(root: Path) -> list[Path]:
    """Where a ``.git`` file (a worktree's or submodule's) points: its git and common dirs."""
    try:
        first = (root / ".git").read_text(encoding="utf-8", errors="replace")[:4096].strip()
    except OSError:  # no .git, or a directory
        return []
    if not first.startswith("gitdir:"):
        return []
    git_dir = Path(os.path.realpath(root / first.splitlines()[0][len("gitdir:") :].strip()))
    dirs = [git_dir]
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        common = ""
    if common:
        dirs.append(Path(os.path.realpath(git_dir / common)))
    return [d for d in dirs if d.is_dir()]


def _existing_dirs(paths: list[Path] | tuple[Path, ...]) -> list[Path]:
    seen: dict[Path, None] = {}
    for path in paths:
        try:
            resolved = Path(os.path.realpath(path))
        except (OSError, ValueError):
            continue
        if resolved.is_dir():
            seen.setdefault(resolved)
    return sorted(seen, key=lambda p: (len(p.parts), str(p)))
