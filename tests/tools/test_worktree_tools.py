"""EnterWorktree / ExitWorktree on real git repositories: the worktree and branch made, the
session moved there and back, removal refused while the worktree holds work, clear errors."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.tools.helpers import assert_schema_matches_snapshot
from tools.base import ToolContext, ToolResult
from tools.file_state import FileStateCache
from tools.worktree_tools import EnterWorktreeTool, ExitWorktreeTool
from tools.worktrees import Worktrees, check_name


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "T")
    (root / "app.py").write_text("x = 1\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root.resolve()


class Session:
    """What the session does on a move, reduced to the tool context's cwd (tui/session does
    the rest; tests/session cover it)."""

    def __init__(self, cwd: Path) -> None:
        self.ctx = ToolContext(cwd=cwd, file_state=FileStateCache())
        self.moves: list[Path] = []
        self.worktrees = Worktrees(self.move_to)
        self.enter = EnterWorktreeTool(self.worktrees)
        self.exit = ExitWorktreeTool(self.worktrees)

    def move_to(self, path: Path) -> None:
        self.ctx.cwd = path
        self.moves.append(path)

    async def call(self, tool: Any, **raw: Any) -> ToolResult:
        params = tool.parse(raw)
        assert not isinstance(params, ToolResult), params.output
        return await tool.run(params, self.ctx)


def test_schemas_are_claude_codes() -> None:
    assert_schema_matches_snapshot(EnterWorktreeTool)
    assert_schema_matches_snapshot(ExitWorktreeTool)
    assert set(EnterWorktreeTool.input_schema()["properties"]) == {"name", "path"}
    exit_schema = ExitWorktreeTool.input_schema()
    assert set(exit_schema["properties"]) == {"action", "discard_changes"}
    assert exit_schema["required"] == ["action"]
    assert exit_schema["properties"]["action"]["enum"] == ["keep", "remove"]


def test_names_are_checked() -> None:
    assert check_name("feature/login-2.0") is None
    for bad in ["", "a b", "../up", "x/./y", "a" * 65, "semi;colon"]:
        assert check_name(bad) is not None, bad


async def test_enter_makes_a_worktree_on_a_new_branch_and_moves_the_session(repo: Path) -> None:
    session = Session(repo)
    result = await session.call(session.enter, name="fix")
    assert not result.is_error, result.output
    path = repo / ".claude" / "worktrees" / "fix"
    assert session.ctx.cwd == path and (path / "app.py").read_text() == "x = 1\n"
    assert git(path, "branch", "--show-current").strip() == "worktree-fix"
    assert "worktree-fix" in str(result.output)
    # The main tree's status does not list the worktrees folder.
    assert git(repo, "status", "--porcelain").strip() == ""


async def test_keep_returns_and_leaves_worktree_and_branch(repo: Path) -> None:
    session = Session(repo)
    await session.call(session.enter, name="keepme")
    result = await session.call(session.exit, action="keep")
    assert not result.is_error and session.ctx.cwd == repo
    assert (repo / ".claude/worktrees/keepme").is_dir()
    assert "worktree-keepme" in git(repo, "branch", "--list")
    # Once out, a new one can be made.
    again = await session.call(session.enter, name="second")
    assert not again.is_error, again.output


async def test_remove_refuses_uncommitted_work_then_discards_when_told(repo: Path) -> None:
    session = Session(repo)
    await session.call(session.enter, name="work")
    path = repo / ".claude/worktrees/work"
    (path / "app.py").write_text("x = 2\n")
    (path / "new.txt").write_text("new\n")
    refused = await session.call(session.exit, action="remove")
    assert refused.is_error
    assert "app.py" in str(refused.output) and "new.txt" in str(refused.output)
    assert "discard_changes" in str(refused.output)
    assert path.is_dir() and session.ctx.cwd == path  # nothing changed
    done = await session.call(session.exit, action="remove", discard_changes=True)
    assert not done.is_error, done.output
    assert not path.exists() and session.ctx.cwd == repo
    assert "worktree-work" not in git(repo, "branch", "--list")


async def test_remove_refuses_new_commits(repo: Path) -> None:
    session = Session(repo)
    await session.call(session.enter, name="committed")
    path = repo / ".claude/worktrees/committed"
    (path / "app.py").write_text("x = 3\n")
    git(path, "commit", "-qam", "work")
    refused = await session.call(session.exit, action="remove")
    assert refused.is_error and "1 commit(s)" in str(refused.output)


async def test_clean_worktree_is_removed_with_its_branch(repo: Path) -> None:
    session = Session(repo)
    await session.call(session.enter, name="clean")
    result = await session.call(session.exit, action="remove")
    assert not result.is_error, result.output
    assert not (repo / ".claude/worktrees/clean").exists()
    assert "worktree-clean" not in git(repo, "branch", "--list")
    assert "worktree" not in git(repo, "worktree", "list").replace(str(repo), "")


async def test_exit_without_a_worktree_changes_nothing(repo: Path) -> None:
    session = Session(repo)
    result = await session.call(session.exit, action="remove")
    assert not result.is_error and "No worktree session is active" in str(result.output)
    assert session.moves == []


async def test_outside_a_repository_is_a_clear_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    session = Session(plain)
    result = await session.call(session.enter, name="x")
    assert result.is_error and "not inside a git repository" in str(result.output)
    assert session.moves == []


async def test_second_enter_and_bad_input_are_refused(repo: Path) -> None:
    session = Session(repo)
    bad = await session.call(session.enter, name="../escape")
    assert bad.is_error and "Invalid worktree name" in str(bad.output)
    both = await session.call(session.enter, name="a", path="b")
    assert both.is_error
    await session.call(session.enter, name="one")
    second = await session.call(session.enter, name="two")
    assert second.is_error and "already in the worktree" in str(second.output)
    taken = Session(repo)
    dup = await taken.call(taken.enter, name="one")
    assert dup.is_error and "exists already" in str(dup.output)


async def test_enter_existing_worktree_by_path_is_never_removed(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-wt"
    git(repo, "worktree", "add", "-q", "-b", "manual", str(other))
    session = Session(repo)
    unknown = await session.call(session.enter, path=str(tmp_path))
    assert unknown.is_error and "is not a worktree" in str(unknown.output)
    result = await session.call(session.enter, path=str(other))
    assert not result.is_error, result.output
    assert session.ctx.cwd == other.resolve()
    refused = await session.call(session.exit, action="remove", discard_changes=True)
    assert refused.is_error and "not made by EnterWorktree" in str(refused.output)
    kept = await session.call(session.exit, action="keep")
    assert not kept.is_error and other.is_dir() and session.ctx.cwd == repo


async def test_branches_from_head_when_there_is_no_remote(repo: Path) -> None:
    (repo / "app.py").write_text("x = 9\n")
    git(repo, "commit", "-qam", "second")
    session = Session(repo)
    await session.call(session.enter, name="fresh")
    path = repo / ".claude/worktrees/fresh"
    assert git(path, "rev-parse", "HEAD") == git(repo, "rev-parse", "HEAD")


async def test_remove_waits_for_background_jobs_running_there(repo: Path, tmp_path: Path) -> None:
    from tools.bash import BashTool
    from tools.jobs import JobRegistry
    from tui.session.working_dir import jobs_running_in

    jobs = JobRegistry(tmp_path / "session")
    session = Session(repo)
    session.worktrees.running_in = lambda path: jobs_running_in(jobs, path)
    await session.call(session.enter, name="busy")
    bash = BashTool(jobs=jobs)
    started = await session.call(bash, command="sleep 30", run_in_background=True)
    job_id = str(started.meta["job_id"])
    try:
        refused = await session.call(session.exit, action="remove")
        assert (
            refused.is_error and job_id in str(refused.output) and "TaskStop" in str(refused.output)
        )
        assert (repo / ".claude/worktrees/busy").is_dir()
    finally:
        await jobs.stop(job_id)
    done = await session.call(session.exit, action="remove")
    assert not done.is_error, done.output
