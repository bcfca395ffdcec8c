"""``-w [NAME]`` / ``--worktree [NAME]``: reading its optional name from the command line,
and starting the session in a new git worktree (ExitWorktree brings it back)."""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.session.options import RunOptions


def worktree_flag(argv: list[str]) -> list[str]:
    """``-w [NAME]`` / ``--worktree [NAME]``: the name is the next word when it is one a
    worktree may have (else a random name: ``--worktree=``)."""
    expanded: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        index += 1
        if arg == "--":
            expanded += argv[index - 1 :]
            break
        if arg not in ("-w", "--worktree"):
            expanded.append(arg)
            continue
        from tools.worktrees import check_name  # only here: it is not on -p's way

        following = argv[index] if index < len(argv) else ""
        if following and not following.startswith("-") and check_name(following) is None:
            expanded.append(f"--worktree={following}")
            index += 1
        else:
            expanded.append("--worktree=")
    return expanded


def start_in_worktree(options: RunOptions, name: str | None) -> RunOptions | int:
    """The options of a session run in a new worktree (named ``name``, else a random name),
    or the exit code when it cannot be made (said on stderr)."""
    from agent.permissions.safe_git import safe_git_env
    from tools.worktrees import WorktreeError, Worktrees

    worktrees = Worktrees(lambda _path: None, safe_git_env)
    try:
        visit = worktrees.create(options.cwd, name)
    except WorktreeError as error:
        print(f"ccx: --worktree: {error}", file=sys.stderr)
        return 1
    print(f"ccx: working in the worktree {visit.path} (branch {visit.branch})", file=sys.stderr)
    return dataclasses.replace(options, cwd=visit.path, worktree=visit)
