"""Git worktrees for a session: made under ``.claude/worktrees/NAME`` on a branch ``worktree-NAME``,
entered, left, removed.

``Worktrees`` holds the one worktree a session is in (if any) and where it
came from; moving the session's working directory is the ``move_to``
callback's job (the session owns what follows the directory). Git runs with
the environment ``git_env`` gives (the session neutralizes what a repository
configures to run: hooks, filters); every failure is a ``WorktreeError``
whose message is meant for the model and the user. The calls are blocking:
the tools run them in a thread, ``ccx --worktree`` before the session starts.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

WORKTREES_DIR = (".claude", "worktrees")
BRANCH_PREFIX = "worktree-"
NAME_MAX = 64
_SEGMENT = re.compile(r"^[A-Za-z0-9._-]+$")
_WORDS = ("amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "harbor", "iris")
GIT_TIMEOUT_S = 60
EXCLUDE_LINE = "/.claude/worktrees/"
LISTED_CHANGES = 10

BaseRef = Literal["fresh", "head"]
GitEnv = Callable[[Iterable[Path]], dict[str, str]]


class WorktreeError(Exception):
    """Why a worktree could not be made, entered or removed (nothing was changed)."""


@dataclass(frozen=True)
class WorktreeVisit:
    """The worktree the session is in: where it came from and what it may remove on exit."""

    path: Path
    branch: str | None
    original_cwd: Path
    head_commit: str | None  # the commit it started from: later commits are the worktree's own
    created: bool  # made by this session (EnterWorktree with a name): ``remove`` may delete it


def check_name(name: str) -> str | None:
    """Why ``name`` cannot name a worktree; None when it can."""
    if not name or len(name) > NAME_MAX:
        return f"A worktree name has 1 to {NAME_MAX} characters."
    for segment in name.split("/"):
        if not _SEGMENT.match(segment) or segment in (".", ".."):
            return (
                f"Invalid worktree name {name!r}: each '/'-separated part may hold only letters, "
                "digits, dots, underscores and dashes."
            )
    return None


def random_name() -> str:
    return f"{secrets.choice(_WORDS)}-{secrets.token_hex(3)}"


class Worktrees:
    """The session's worktree, if it is in one; ``move_to(path)`` moves the session there."""

    def __init__(
        self,
        move_to: Callable[[Path], None],
        git_env: GitEnv | None = None,
        base_ref: Callable[[], BaseRef] = lambda: "fresh",
        active: WorktreeVisit | None = None,
        running_in: Callable[[Path], list[str]] = lambda _path: [],
    ) -> None:
        """``active``: the worktree the session starts in (``ccx --worktree``);
        ``running_in(path)``: the session's background jobs running in that folder."""
        self.move_to = move_to
        self.git_env = git_env
        self.base_ref = base_ref
        self.active = active
        self.running_in = running_in

    # -- entering ---------------------------------------------------------------------------

    def create(self, cwd: Path, name: str | None) -> WorktreeVisit:
        """Make a worktree of ``cwd``'s repository on a new branch and move the session in."""
        if self.active is not None:
            raise WorktreeError(
                f"The session is already in the worktree {self.active.path}. Leave it with "
                "ExitWorktree first, or pass `path` to switch into another existing worktree."
            )
        name = name if name is not None else random_name()
        if problem := check_name(name):
            raise WorktreeError(problem)
        root = self.repository_root(cwd)
        path = root.joinpath(*WORKTREES_DIR, name)
        for part in [root / WORKTREES_DIR[0], root.joinpath(*WORKTREES_DIR), path]:
            if part.is_symlink():
                raise WorktreeError(f"{part} is a symbolic link; remove it and try again.")
        if path.exists():
            raise WorktreeError(f"{path} exists already. Pick another name, or pass `path`.")
        branch = BRANCH_PREFIX + name
        if self._git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False):
            raise WorktreeError(f"A branch named {branch} exists already. Pick another name.")
        base = self._base(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._git(root, "worktree", "add", "-b", branch, str(path), base)
        self._exclude(root)
        head = self._git(path, "rev-parse", "HEAD").strip() or None
        visit = WorktreeVisit(path, branch, cwd, head, created=True)
        self._enter(visit)
        return visit

    def enter_existing(self, cwd: Path, target: str) -> WorktreeVisit:
        """Move the session into a worktree that exists (one ``git worktree list`` names)."""
        given = Path(target).expanduser()
        path = Path(os.path.realpath(given if given.is_absolute() else cwd / given))
        root = self.repository_root(cwd)
        listed = self.listed(root)
        if path not in listed:
            names = ", ".join(str(p) for p in listed) or "none"
            raise WorktreeError(
                f"{path} is not a worktree of the repository at {root} (its worktrees: {names})."
            )
        if self.active is not None and path == self.active.path:
            raise WorktreeError(f"The session is in {path} already.")
        original = self.active.original_cwd if self.active is not None else cwd
        branch = self._git(path, "branch", "--show-current", check=False).strip() or None
        head = self._git(path, "rev-parse", "HEAD", check=False).strip() or None
        visit = WorktreeVisit(path, branch, original, head, created=False)
        self._enter(visit)
        return visit

    def _enter(self, visit: WorktreeVisit) -> None:
        self.move_to(visit.path)
        self.active = visit

    # -- leaving ----------------------------------------------------------------------------

    def changes(self, visit: WorktreeVisit) -> tuple[list[str], int]:
        """The worktree's uncommitted files and its commits since it was made."""
        status = self._git(visit.path, "status", "--porcelain", "--untracked-files=all")
        files = [line[3:] for line in status.splitlines() if line.strip()]
        commits = 0
        if visit.head_commit:
            count = self._git(visit.path, "rev-list", "--count", f"{visit.head_commit}..HEAD")
            commits = int(count.strip() or 0)
        return files, commits

    def leave(self, action: Literal["keep", "remove"], discard_changes: bool) -> str:
        """Back to where the session was before; with ``remove``, delete the worktree and its
        branch (refused while it holds work, unless ``discard_changes``). What happened."""
        visit = self.active
        if visit is None:
            raise WorktreeError("No worktree session is active; nothing was changed.")
        if action == "keep":
            self._back(visit)
            where = f" on branch {visit.branch}" if visit.branch else ""
            return f"Kept the worktree {visit.path}{where}. Back in {visit.original_cwd}."
        if not visit.created:
            raise WorktreeError(
                f"{visit.path} was not made by EnterWorktree in this session, so it is not "
                "removed; use action 'keep' to leave it."
            )
        if visit.path.exists() and not discard_changes:
            files, commits = self.changes(visit)
            if files or commits:
                raise WorktreeError(_refusal(visit, files, commits))
            if jobs := self.running_in(visit.path):
                raise WorktreeError(
                    f"Not removed: background job(s) {', '.join(jobs)} still run in "
                    f"{visit.path}. Wait for them or stop them (TaskStop) after asking the user, "
                    "then call again; or use action 'keep'."
                )
        self._back(visit)
        notes = []
        root = self.repository_root(visit.original_cwd)
        if visit.path.exists():
            self._git(root, "worktree", "remove", "--force", str(visit.path))
        else:
            self._git(root, "worktree", "prune", check=False)
        if visit.branch:
            try:
                self._git(root, "branch", "-D", visit.branch)
            except WorktreeError as error:
                notes.append(f" The branch {visit.branch} was kept: {error}")
        deleted = f" and its branch {visit.branch}" if visit.branch and not notes else ""
        return (
            f"Removed the worktree {visit.path}{deleted}. Back in {visit.original_cwd}."
            + "".join(notes)
        )

    def _back(self, visit: WorktreeVisit) -> None:
        self.move_to(visit.original_cwd)
        self.active = None

    # -- git --------------------------------------------------------------------------------

    def repository_root(self, cwd: Path) -> Path:
        """The main working tree of ``cwd``'s repository (also from inside one of its
        worktrees); WorktreeError outside a repository."""
        try:
            common = self._git(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir")
        except WorktreeError:
            raise WorktreeError(
                f"{cwd} is not inside a git repository: worktrees need one "
                "(run `git init` and make a first commit)."
            ) from None
        common_dir = Path(common.strip())
        if common_dir.name != ".git":
            raise WorktreeError(f"The repository at {common_dir} has no working tree (bare).")
        return Path(os.path.realpath(common_dir.parent))

    def listed(self, root: Path) -> list[Path]:
        porcelain = self._git(root, "worktree", "list", "--porcelain")
        return [
            Path(os.path.realpath(line.removeprefix("worktree ")))
            for line in porcelain.splitlines()
            if line.startswith("worktree ")
        ]

    def _base(self, root: Path) -> str:
        """What the new branch starts from: the remote's default branch ("fresh", when the
        repository has one) or the current HEAD."""
        if not self._git(root, "rev-parse", "--verify", "--quiet", "HEAD", check=False):
            raise WorktreeError(f"The repository at {root} has no commit yet: commit once first.")
        if self.base_ref() == "fresh":
            remote = self._git(
                root, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/HEAD", check=False
            )
            if remote.strip():
                return "origin/HEAD"
        return "HEAD"

    def _exclude(self, root: Path) -> None:
        """Keep the worktrees folder out of the main tree's ``git status`` (info/exclude)."""
        exclude = root / ".git" / "info" / "exclude"
        try:
            text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
            if EXCLUDE_LINE in text.splitlines():
                return
            exclude.parent.mkdir(parents=True, exist_ok=True)
            with exclude.open("a", encoding="utf-8") as handle:
                prefix = "" if not text or text.endswith("\n") else "\n"
                handle.write(f"{prefix}# worktrees made by ccx\n{EXCLUDE_LINE}\n")
        except OSError:
            pass  # only cosmetic: the main tree's status lists the folder

    def _git(self, cwd: Path, *args: str, check: bool = True) -> str:
        env = self.git_env([cwd]) if self.git_env is not None else dict(os.environ)
        env["GIT_TERMINAL_PROMPT"] = "0"
        try:
            done = subprocess.run(
                ["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except FileNotFoundError:
            raise WorktreeError("git is not installed (not on PATH).") from None
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WorktreeError(f"git {args[0]} failed: {exc}") from None
        if done.returncode != 0:
            if not check:
                return ""
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise WorktreeError(
                f"git {args[0]} failed: {detail[-1] if detail else done.returncode}"
            )
        return done.stdout


def _refusal(visit: WorktreeVisit, files: list[str], commits: int) -> str:
    parts = []
    if files:
        shown = ", ".join(files[:LISTED_CHANGES])
        more = f" and {len(files) - LISTED_CHANGES} more" if len(files) > LISTED_CHANGES else ""
        parts.append(f"{len(files)} uncommitted file(s): {shown}{more}")
    if commits:
        parts.append(f"{commits} commit(s) made in it")
    return (
        f"Not removed: the worktree {visit.path} holds {' and '.join(parts)}. Ask the user; "
        "call again with discard_changes: true to delete the work, or use action 'keep'."
    )
