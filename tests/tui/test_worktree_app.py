"""The full-screen app when the session moves into a worktree: @ completion lists the
worktree's files, and the transcript says where the session works."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text
from tui.fake_api import FakeApi, text_reply, tool_reply


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


async def test_completion_follows_the_session_into_a_worktree(api: FakeApi, repo: Path) -> None:
    shutil.rmtree(repo / ".git")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "-c", "user.email=t@e", "-c", "user.name=T", "commit", "-qm", "one")
    tree = repo.resolve() / ".claude" / "worktrees" / "w2"
    api.add(tool_reply(("EnterWorktree", {"name": "w2"})), text_reply("moved"))
    app = make_app(repo, permission_mode="bypassPermissions")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready and app.file_index is not None)
        index = app.file_index
        assert index is not None and index.root == repo
        await submit(pilot, "work in a worktree")
        await wait_idle(pilot)
        await wait_for(pilot, lambda: "Working directory:" in screen_text(app))
        await wait_for(pilot, lambda: index.root == tree)
        (tree / "only_here.py").write_text("x = 1\n")
        await wait_for(pilot, lambda: index.match("only_here") == ["only_here.py"])
    assert api.errors == []
