"""Worktrees through the `ccx` command: EnterWorktree moves the session into a new git worktree
(relative paths, Bash, acceptEdits and the system prompt follow), an Edit lands there, and
ExitWorktree brings the session back, keeping or removing it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def git_repo(ccx: Ccx) -> Path:
    shutil.rmtree(ccx.repo / ".git")
    git(ccx.repo, "init", "-q", "-b", "main")
    git(ccx.repo, "-c", "user.email=t@e", "-c", "user.name=T", "add", ".")
    git(ccx.repo, "-c", "user.email=t@e", "-c", "user.name=T", "commit", "-qm", "first")
    return ccx.repo.resolve()


def test_enter_edit_exit_keep(ccx: Ccx, git_repo: Path) -> None:
    worktree = git_repo / ".claude" / "worktrees" / "retry"
    ccx.api.add(
        tool_reply(("EnterWorktree", {"name": "retry"})),
        tool_reply(("Read", {"file_path": "src/app.py"})),
        tool_reply(("Edit", {"file_path": "src/app.py", "old_string": "= 3", "new_string": "= 5"})),
        tool_reply(("Bash", {"command": "pwd; git branch --show-current"})),
        tool_reply(("ExitWorktree", {"action": "keep"})),
        tool_reply(("Bash", {"command": "pwd"})),
        text_reply("Done in a worktree."),
    )
    run = ccx.run(
        "-p", "work in a worktree", "--output-format", "json",
        "--permission-mode", "acceptEdits",
        "--allowedTools", "EnterWorktree,ExitWorktree,Bash(pwd*)",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Done in a worktree."
    requests = ccx.api.requests
    assert "Made the worktree" in requests[1].last_user_text()
    assert str(worktree) in requests[1].system_text()  # the prompt describes where it works
    assert str(git_repo) + "\n" not in requests[1].system_text()
    assert "RETRY_LIMIT = 3" in requests[2].last_user_text()  # relative path: the worktree's
    assert "error" not in requests[3].last_user_text().lower()  # acceptEdits allowed the Edit
    assert f"{worktree}\nworktree-retry" in requests[4].last_user_text()
    assert "Kept the worktree" in requests[5].last_user_text()
    assert requests[6].last_user_text().strip().startswith(str(git_repo))
    assert str(worktree) not in requests[6].system_text()
    # The edit is in the worktree, on its branch; the main tree is untouched.
    assert "RETRY_LIMIT = 5" in (worktree / "src" / "app.py").read_text()
    assert "RETRY_LIMIT = 3" in (git_repo / "src" / "app.py").read_text()
    assert git(worktree, "branch", "--show-current").strip() == "worktree-retry"
    assert ccx.api.errors == []


def test_remove_asks_for_discard_then_deletes(ccx: Ccx, git_repo: Path) -> None:
    worktree = git_repo / ".claude" / "worktrees" / "scratch"
    ccx.api.add(
        tool_reply(("EnterWorktree", {"name": "scratch"})),
        tool_reply(("Write", {"file_path": "notes.txt", "content": "draft\n"})),
        tool_reply(("ExitWorktree", {"action": "remove"})),
        tool_reply(("ExitWorktree", {"action": "remove", "discard_changes": True})),
        text_reply("Removed."),
    )
    run = ccx.run(
        "-p", "try it in a worktree", "--output-format", "json",
        "--permission-mode", "acceptEdits", "--allowedTools", "EnterWorktree,ExitWorktree",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    refusal = ccx.api.requests[3].last_user_text()
    assert "notes.txt" in refusal and "discard_changes" in refusal
    assert "Removed the worktree" in ccx.api.requests[4].last_user_text()
    assert not worktree.exists() and "worktree-scratch" not in git(git_repo, "branch")


def test_without_approval_nothing_is_made(ccx: Ccx, git_repo: Path) -> None:
    ccx.api.add(tool_reply(("EnterWorktree", {"name": "nope"})), text_reply("ok"))
    run = ccx.run("-p", "worktree please", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert not (git_repo / ".claude" / "worktrees").exists()
    assert "EnterWorktree" in ccx.api.requests[1].last_user_text()


def test_worktree_flag_starts_the_session_in_one_that_exit_leaves(ccx: Ccx, git_repo: Path) -> None:
    worktree = git_repo / ".claude" / "worktrees" / "flagged"
    ccx.api.add(
        tool_reply(("Bash", {"command": "pwd"})),
        tool_reply(("ExitWorktree", {"action": "keep"})),
        tool_reply(("Bash", {"command": "pwd"})),
        text_reply("ok"),
    )
    run = ccx.run("-w", "flagged", "-p", "where am I", "--allowedTools", "ExitWorktree,Bash(pwd)")
    assert run.returncode == 0, run.stderr
    assert "worktree-flagged" in run.stderr
    first, second, third, fourth = ccx.api.requests
    assert str(worktree) in first.system_text()
    assert second.last_user_text().strip() == str(worktree)
    assert "Kept the worktree" in third.last_user_text()
    assert fourth.last_user_text().strip() == str(git_repo)


def test_worktree_flag_outside_a_repository_fails_clearly(ccx: Ccx) -> None:
    shutil.rmtree(ccx.repo / ".git")
    run = ccx.run("--worktree", "-p", "hi")
    assert run.returncode == 1
    assert "not inside a git repository" in run.stderr
    assert ccx.api.requests == []


def test_a_worktree_outside_the_project_is_not_entered_unasked(
    ccx: Ccx, git_repo: Path, tmp_path: Path
) -> None:
    """A repository whose .git names a worktree elsewhere (a planted one, as a hostile
    repository's .git may): a prompt-injected EnterWorktree there is asked about, so in -p
    with acceptEdits the session stays put and the Edit that follows, outside the project,
    is refused too. Judged by the outside file."""
    outside = tmp_path / "elsewhere"
    git(git_repo, "worktree", "add", "-q", "-b", "planted", str(outside))
    target = outside / "src" / "app.py"
    before = target.read_bytes()
    ccx.api.add(
        tool_reply(("EnterWorktree", {"path": str(outside)})),
        tool_reply(("Read", {"file_path": str(target)})),
        tool_reply(("Edit", {"file_path": str(target), "old_string": "= 3", "new_string": "= 9"})),
        text_reply("Done."),
    )
    run = ccx.run("-p", "tidy up", "--permission-mode", "acceptEdits")
    assert run.returncode == 0, run.stderr
    assert target.read_bytes() == before
    assert str(outside) not in ccx.api.requests[-1].system_text()  # never moved there
