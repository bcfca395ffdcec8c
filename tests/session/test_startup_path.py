"""What a new session's first request does not wait for: the Models API, the git snapshot
(taken once a session)."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from agent.instructions import system_prompt
from agent.model import catalog
from agent.model.catalog import ModelLimits
from tests.fake_env import use_fake_api
from tui.fake_api import FakeApi, text_reply
from tui.session.assembly import assemble_runtime
from tui.session.driver import SessionDriver
from tui.session.options import RunOptions

MODEL = "claude-haiku-4-5"


async def test_a_new_conversation_sends_before_the_models_api_answers(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalog, "_fetched", {})  # this process may have asked already
    with FakeApi([text_reply("ok")], models={MODEL: (123_456, 64_000)}) as api:
        use_fake_api(api, tmp_path, monkeypatch, models_api=True)
        api.catalog.hold = threading.Event()
        runtime = assemble_runtime(RunOptions(cwd=repo, model=MODEL, watch_files=False), print)
        try:
            await runtime.start()
            await runtime.agent.submit("hi")  # answered while the Models API holds its answer
            assert [r.body["model"] for r in api.requests] == [MODEL]
            assert MODEL not in runtime.models.fetched
            api.catalog.hold.set()
            refreshing = runtime.models._refreshing
            assert refreshing is not None
            await refreshing
            assert runtime.models.fetched[MODEL] == ModelLimits(123_456, 64_000)
        finally:
            api.catalog.hold.set()
            await runtime.aclose()


def test_a_git_snapshot_started_early_is_the_one_the_prompt_gets(tmp_path: Path) -> None:
    repo = tmp_path / "early"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "init", "-q", "-b", "early-branch"], cwd=repo, check=True)
    (repo / "a.txt").write_text("a\n")
    system_prompt.start_git_info(str(repo))
    assert str(repo) in system_prompt._started_early
    (repo / "b.txt").write_text("b\n")  # may or may not be in the early snapshot
    info = system_prompt.git_info(str(repo))
    assert info is not None and info["branch"] == "early-branch" and "a.txt" in info["status"]
    assert str(repo) not in system_prompt._started_early  # taken once: later asks run git again
    again = system_prompt.git_info(str(repo))
    assert again is not None and "b.txt" in again["status"]


async def test_the_git_snapshot_is_taken_once_a_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prompt's git status is the session's start: rebuilding the prompt (a deferred tool
    list, another model) runs no git; /clear, a new session, takes a new snapshot."""
    repo = tmp_path / "snap"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git, "init", "-q", "-b", "snap-branch"], cwd=repo, check=True)
    (repo / "first.txt").write_text("a\n")
    runs: list[list[str]] = []
    started = system_prompt._start

    def counted(command: list[str], env: dict[str, str]) -> subprocess.Popen[str] | None:
        runs.append(command)
        return started(command, env)

    monkeypatch.setattr(system_prompt, "_start", counted)
    with FakeApi([text_reply("one"), text_reply("two"), text_reply("three")]) as api:
        use_fake_api(api, tmp_path, monkeypatch)
        driver = SessionDriver(RunOptions(cwd=repo, model=MODEL, watch_files=False), print)
        try:
            await driver.start()
            assert len(runs) == 2  # status and log, once, though the assembly rebuilt twice
            await driver.run("hello")
            (repo / "later.txt").write_text("b\n")
            await driver.run("/model claude-sonnet-4-5")
            await driver.run("again")
            assert len(runs) == 2
            await driver.run("/clear")
            await driver.run("after clear")
        finally:
            await driver.aclose()
    first, second, third = (r.system_text() for r in api.requests)
    assert "first.txt" in first and "later.txt" not in first
    assert "claude-sonnet-4-5" in second and "later.txt" not in second  # the start's status
    assert "later.txt" in third and len(runs) == 4


async def test_a_models_api_that_fails_is_not_asked_again_by_the_next_session(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gateway without the Models API (here: it does not know the model) costs one lookup
    an hour, not one per run: a resumed conversation waits for that lookup."""
    with FakeApi([text_reply("ok")]) as api:
        use_fake_api(api, tmp_path, monkeypatch, models_api=True)
        del api.catalog.models[MODEL]
        for _ in range(2):
            monkeypatch.setattr(catalog, "_fetched", {})  # a new process
            runtime = assemble_runtime(RunOptions(cwd=repo, model=MODEL, watch_files=False), print)
            try:
                await runtime.refresh_model_limits()
                assert MODEL not in runtime.models.fetched  # the table's figures serve
            finally:
                await runtime.aclose()
        assert api.errors.count(f"model: {MODEL}") == 1
