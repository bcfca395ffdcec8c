"""What a sandboxed Bash command may do: the policy the runtime builds and hands to BashTool.

Writes are allowed only beneath the project's directories (working directory,
project root, added directories), the temp directories and a few devices a
shell needs; inside each project directory ``.git/hooks``, ``.git/config``
(and a ``.git`` file pointing elsewhere) and ``.claude/`` stay read-only.
Reading is allowed everywhere except the concrete paths listed as denied.
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
PROTECTED = (".git/hooks", ".git/config", ".claude")
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
            linked = linked_git_dirs(root)
            if linked:  # the pointer to them, and their hooks and config
                paths.append(root / ".git")
            for git_dir in linked:
                paths += [git_dir / "hooks", git_dir / "config", git_dir / "config.worktree"]
        return list(dict.fromkeys(paths))

    def describe_writable(self) -> str:
        """E.g. "/work/app and the temp directories (/tmp, /var/tmp)"."""
        temps = set(_existing_dirs(temp_dirs()))
        own = [str(p) for p in self.writable_dirs() if p not in temps]
        temp_list = ", ".join(str(p) for p in _existing_dirs(temp_dirs()))
        where = ", ".join(own) if own else "nothing in the project"
        return f"{where} and the temp directories ({temp_list})"


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
