"""Check-and-restore of the protected paths around each sandboxed command.

Landlock can only grant rights to whole trees, so inside a writable project it
cannot keep ``.git/hooks``, ``.git/config`` or ``.claude/`` read-only; bubblewrap
can (read-only bind mounts) but only over paths that already exist. This guard
covers both gaps: before a sandboxed command it records those paths (lstat of
every entry, contents cached by inode and change time, which no write can
leave unchanged); afterwards anything changed, created or removed beneath them
is put back, and the version the command wrote is saved for the user.

Soundness and limits: what runs *during* the command (a hook it rewrote and
then triggered) is itself inside the sandbox, so the guard's job is that no
change outlives the command to run later outside it. A process the command
leaves running in the background can still change these paths after the
check; the next sandboxed command's check does not revert changes made between
commands (those may be the user's or ccx's own). A ``.git`` the command creates
where there was none (``git init``) is kept, except hook files other than
git's ``*.sample`` ones. Trees above ``MAX_ENTRIES`` entries are checked only up
to that many.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

MAX_ENTRIES = 2_000
MAX_FILE_BYTES = 4 << 20


@dataclass(frozen=True)
class _Entry:
    kind: str  # "dir" | "file" | "link" | "other"
    mode: int
    ident: tuple[int, ...]  # (dev, ino, size, mtime_ns, ctime_ns); dirs: (dev, ino)


Tree = dict[Path, _Entry]


def _entry(st: os.stat_result) -> _Entry:
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return _Entry("dir", stat.S_IMODE(mode), (st.st_dev, st.st_ino))
    kind = "file" if stat.S_ISREG(mode) else "link" if stat.S_ISLNK(mode) else "other"
    ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return _Entry(kind, stat.S_IMODE(mode), ident)


def _scan(top: Path, tree: Tree) -> None:
    """Record ``top`` and, for a real directory, everything beneath it (never following links)."""
    try:
        tree[top] = _entry(os.lstat(top))
    except OSError:
        return
    if tree[top].kind != "dir":
        return
    pending = [top]
    while pending and len(tree) < MAX_ENTRIES:
        directory = pending.pop()
        try:
            with os.scandir(directory) as it:
                for item in it:
                    path = Path(item.path)
                    try:
                        tree[path] = entry = _entry(item.stat(follow_symlinks=False))
                    except OSError:
                        continue
                    if entry.kind == "dir":
                        pending.append(path)
        except OSError:
            continue


class ProtectedPathGuard:
    """Snapshots before a command (``record``) and repairs after it (``restore``)."""

    def __init__(self) -> None:
        self._contents: dict[Path, tuple[tuple[int, ...], bytes | str]] = {}

    def record(self, paths: list[Path]) -> Snapshot:
        tree: Tree = {}
        for path in paths:
            _scan(path, tree)
        git_dirs = {}
        for path in paths:
            if path.parent.name == ".git":
                with contextlib.suppress(OSError):
                    git_dirs[path.parent] = _entry(os.lstat(path.parent))
        for path, entry in tree.items():
            self._remember(path, entry)
        return Snapshot(list(paths), tree, git_dirs)

    def restore(self, snapshot: Snapshot, save_dir: Path) -> list[str]:
        """Undo the command's changes to the protected paths; one line per repair."""
        notes: list[str] = []
        for git_dir, before in snapshot.git_dirs.items():
            notes += _put_back_git_dir(git_dir, before)
        new_repos = {p.parent for p in snapshot.paths if p.parent.name == ".git"} - set(
            snapshot.git_dirs
        )
        for repo in sorted(new_repos):
            notes += _reject_new_git_pointer(repo)
        after: Tree = {}
        for path in snapshot.paths:
            _scan(path, after)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        saver = _Saver(save_dir / stamp)
        for path in sorted(set(after) - set(snapshot.tree), key=lambda p: -len(p.parts)):
            if _kept_in_new_repo(path, after[path], new_repos):
                continue
            saved = saver.save(path, after[path])
            _remove(path)
            notes.append(f"removed {path}, which the command created{saved}")
        for path in sorted(snapshot.tree, key=lambda p: len(p.parts)):
            before, now = snapshot.tree[path], after.get(path)
            if now is not None and before.kind == now.kind and _same(before, now):
                continue
            saved = saver.save(path, now) if now is not None else ""
            if self._put_back(path, before):
                verb = "restored" if now is None else "reverted"
                notes.append(f"{verb} {path}{saved}")
            else:
                notes.append(f"could not restore {path}{saved}")
        return notes

    def _remember(self, path: Path, entry: _Entry) -> None:
        if entry.kind not in ("file", "link"):
            return
        cached = self._contents.get(path)
        if cached is not None and cached[0] == entry.ident:
            return
        try:
            if entry.kind == "link":
                content: bytes | str = os.readlink(path)
            elif entry.ident[2] <= MAX_FILE_BYTES:
                content = path.read_bytes()
            else:
                return
        except OSError:
            return
        self._contents[path] = (entry.ident, content)

    def _put_back(self, path: Path, before: _Entry) -> bool:
        try:
            if before.kind == "dir":
                if not (path.is_dir() and not path.is_symlink()):
                    _remove(path)
                    path.mkdir()
                os.chmod(path, before.mode)
                return True
            cached = self._contents.get(path)
            if cached is None or before.kind == "other":
                return False
            _remove_if_dir(path)
            content = cached[1]
            if isinstance(content, str):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                os.symlink(content, path)
            else:
                _write_replacing(path, content, before.mode)
            self._remember(path, _entry(os.lstat(path)))
            return True
        except OSError:
            return False


@dataclass
class Snapshot:
    paths: list[Path]
    tree: Tree
    git_dirs: dict[Path, _Entry]  # each protected path's .git parent, as it was


def _same(before: _Entry, now: _Entry) -> bool:
    return before.ident == now.ident and before.mode == now.mode


def _kept_in_new_repo(path: Path, entry: _Entry, new_repos: set[Path]) -> bool:
    """In a .git the command created itself, keep all but hook files git would not write."""
    for repo in new_repos:
        if path.is_relative_to(repo):
            hooks = repo / "hooks"
            if path.is_relative_to(hooks) and path != hooks:
                return entry.kind == "dir" or path.name.endswith(".sample")
            return True
    return False


def _reject_new_git_pointer(repo: Path) -> list[str]:
    """A new .git that is a symlink or a file would make git read a config from elsewhere."""
    try:
        if stat.S_ISDIR(os.lstat(repo).st_mode):
            return []
    except OSError:
        return []
    aside = repo.with_name(f"{repo.name}.rejected-by-ccx-sandbox-{time.time_ns()}")
    try:
        os.rename(repo, aside)
    except OSError as exc:
        return [f"could not move aside the {repo} the command created: {exc.strerror or exc}"]
    return [f"moved the {repo} the command created (not a directory) to {aside}"]


def _put_back_git_dir(git_dir: Path, before: _Entry) -> list[str]:
    """A .git directory the command moved or replaced: put the original back where it was."""
    try:
        now = _entry(os.lstat(git_dir))
    except OSError:
        now = None
    if before.kind != "dir" or (
        now is not None and now.kind == "dir" and now.ident == before.ident
    ):
        return []
    notes = []
    if now is not None:
        aside = git_dir.with_name(f"{git_dir.name}.rejected-by-ccx-sandbox-{time.time_ns()}")
        try:
            os.rename(git_dir, aside)
            notes.append(f"moved the {git_dir} the command put in place to {aside}")
        except OSError:
            return [f"could not move aside the replaced {git_dir}"]
    original = _find_dir(git_dir.parent, before.ident)
    if original is None:
        notes.append(f"the command moved {git_dir} away and ccx could not find it to restore it")
        return notes
    try:
        os.rename(original, git_dir)
        notes.append(f"moved {original} back to {git_dir}")
    except OSError as exc:
        notes.append(f"could not move {original} back to {git_dir}: {exc.strerror or exc}")
    return notes


def _find_dir(parent: Path, ident: tuple[int, ...]) -> Path | None:
    try:
        with os.scandir(parent) as it:
            for item in it:
                st = item.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) == ident:
                    return Path(item.path)
    except OSError:
        return None
    return None


class _Saver:
    """Keeps the command's version of each path it changed, for the user to look at."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def save(self, path: Path, entry: _Entry | None) -> str:
        if entry is None or entry.kind not in ("file", "link"):
            return ""
        target = self.folder / str(path).lstrip("/")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if entry.kind == "link":
                target.with_name(target.name + ".symlink").write_text(os.readlink(path))
                return f" (it had become a symlink to {os.readlink(path)})"
            if entry.ident[2] > MAX_FILE_BYTES:
                return ""
            shutil.copyfile(path, target, follow_symlinks=False)
        except OSError:
            return ""
        return f" (the command's version is saved in {target})"


def _remove(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _remove_if_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path, ignore_errors=True)


def _write_replacing(path: Path, content: bytes, mode: int) -> None:
    """Write beside ``path`` and rename over it: never writes through a symlink put there."""
    temp = path.with_name(f".{path.name}.ccx-restore-{os.getpid()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as out:
        out.write(content)
        os.fchmod(out.fileno(), mode)
    os.replace(temp, path)
