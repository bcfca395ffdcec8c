"""git run by ccx (the start-up snapshot, read-only commands) runs nothing the repository configures."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agent.instructions.system_prompt import git_info
from agent.permissions.safe_git import SAFE_DIFF, repository_overrides, safe_git_env

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

TRAPS = {
    "core.fsmonitor": "touch PWN_fsmonitor; false #",
    "core.pager": "touch PWN_pager; cat",
    "diff.external": "touch PWN_extdiff #",
    "diff.evil.textconv": "touch PWN_textconv; cat",
    "diff.evil.command": "touch PWN_diffdriver #",
    "filter.evil.clean": "touch PWN_clean; cat",
    "filter.evil.smudge": "touch PWN_smudge; cat",
    "filter.evil.process": "touch PWN_process",
    "log.showSignature": "true",
    "gpg.program": "touch PWN_gpg",
}


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    return done.stdout + done.stderr


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "a.txt")
    git(repo, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "first")
    for key, value in TRAPS.items():
        git(repo, "config", key, value)
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text("#!/bin/sh\ntouch PWN_hook\n")
    hook.chmod(0o755)
    (repo / "a.txt").write_text("one\ntwo\n")
    os.utime(repo / "a.txt", (1, 1))  # stat-dirty: status must look at the content
    return repo


def markers(repo: Path) -> list[str]:
    return sorted(p.name for p in repo.rglob("PWN*"))


def test_the_start_up_snapshot_runs_none_of_the_repository_s_commands(hostile: Path) -> None:
    info = git_info(str(hostile))
    assert info is not None
    assert info["log"].endswith("first")
    assert "a.txt" in info["status"]
    assert markers(hostile) == []


@pytest.mark.parametrize(
    "args",
    [
        ("status",),
        ("diff",),
        ("diff", "--stat"),
        ("log", "-p", "-1"),
        ("log", "-p", "--ext-diff", "-1"),
        ("show", "HEAD"),
        ("show", "--ext-diff", "HEAD"),
        ("log", "--show-signature", "-1"),
        ("blame", "a.txt"),
    ],
)
def test_read_only_git_under_the_safe_environment_runs_nothing(
    hostile: Path, args: tuple[str, ...]
) -> None:
    out = git(hostile, *args, env=safe_git_env([hostile]))
    assert markers(hostile) == [], out
    assert "fatal" not in out


def test_an_external_diff_is_replaced_by_a_plain_unified_diff(hostile: Path) -> None:
    out = git(hostile, "diff", env=safe_git_env([hostile]))
    assert "+two" in out and "--- a/a.txt" in out


def test_without_the_overrides_the_traps_do_fire(hostile: Path) -> None:
    git(hostile, "status")
    assert "PWN_fsmonitor" in markers(hostile)  # the fixture is really hostile


def test_only_the_repository_s_own_keys_are_overridden(hostile: Path) -> None:
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text('[diff "mine"]\n\ttextconv = my-converter\n')
    overrides = repository_overrides([hostile])
    assert overrides["diff.external"] == SAFE_DIFF
    assert overrides["diff.evil.textconv"] == "cat"
    assert overrides["filter.evil.process"] == ""
    assert "diff.mine.textconv" not in overrides
    assert overrides["core.hookspath"] == "/dev/null"


def test_submodule_configs_are_read_too(hostile: Path) -> None:
    module = hostile / ".git" / "modules" / "lib"
    module.mkdir(parents=True)
    (module / "HEAD").write_text("ref: refs/heads/main\n")
    (module / "config").write_text('[filter "sub"]\n\tclean = touch PWN_sub\n')
    assert repository_overrides([hostile])["filter.sub.clean"] == ""


def test_user_overrides_already_in_the_environment_are_kept(
    hostile: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "user.name")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "Someone")
    env = safe_git_env([hostile])
    assert "GIT_CONFIG_KEY_0" not in env
    assert int(env["GIT_CONFIG_COUNT"]) > 1
    assert env["GIT_CONFIG_KEY_1"] == "core.fsmonitor"


def test_outside_a_repository_only_the_fixed_overrides_apply(tmp_path: Path) -> None:
    assert set(repository_overrides([tmp_path])) == {"core.fsmonitor", "core.hookspath"}


def test_bash_gets_the_overrides_only_when_every_git_only_reads(hostile: Path) -> None:
    from agent.permissions.safe_git import env_for_command

    assert env_for_command("git status && git log -p | head", hostile)["GIT_CONFIG_COUNT"]
    assert env_for_command("ls", hostile) == {}
    assert env_for_command("git status && git commit -m x", hostile) == {}
    nested = hostile / "sub"
    nested.mkdir()
    git(nested, "init", "-q")
    git(nested, "config", "filter.inner.clean", "touch PWN_inner")
    env = env_for_command("cd sub && git status", hostile)
    assert "filter.inner.clean" in env.values()
