"""Moving a session into a worktree and back: every part with a working directory follows
(tools, Bash, the gate, hooks, the system prompt and its CLAUDE.md), /status says so."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.core.events import Event
from tests.fake_env import use_fake_api
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.session.driver import SessionDriver
from tui.session.options import RunOptions


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    shutil.rmtree(repo / ".git")
    git(repo, "init", "-q", "-b", "main")
    (repo / "CLAUDE.md").write_text("Main tree rules.\n")
    git(repo, "add", ".")
    git(repo, "-c", "user.email=t@e", "-c", "user.name=T", "commit", "-qm", "one")
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


async def test_every_part_follows_the_worktree_and_back(api: FakeApi, repo: Path) -> None:
    root = repo.resolve()
    tree = root / ".claude" / "worktrees" / "w1"
    api.add(tool_reply(("EnterWorktree", {"name": "w1"})), text_reply("in"))
    events: list[Event] = []
    driver = SessionDriver(
        RunOptions(cwd=repo, watch_files=False, permission_mode="bypassPermissions"),
        events.append,
    )
    await driver.start()
    try:
        await driver.run("go to a worktree")
        assert driver.cwd == tree
        (tree / "CLAUDE.md").write_text("Worktree rules.\n")
        status = await driver.run("/status")
        assert status.data is not None and status.data["status"]["working_in"] == str(tree)
        assert "Working in" in status.text
        api.add(tool_reply(("ExitWorktree", {"action": "keep"})), text_reply("back"))
        await driver.run("leave it")
        assert driver.cwd == root
        _first, second, third, fourth = api.requests
        assert str(tree) in second.system_text() and str(tree) in third.system_text()
        assert "Main tree rules." in second.system_text()  # the worktree's own CLAUDE.md
        assert str(tree) not in fourth.system_text()
        api.add(text_reply("x"))
        await driver.run("again")
        assert "Worktree rules." not in api.requests[-1].system_text()
        after = await driver.run("/status")
        assert after.data is not None and "working_in" not in after.data["status"]
    finally:
        await driver.aclose()
