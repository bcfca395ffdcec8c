"""The system prompt: a static block that caches across sessions, then the environment."""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from agent.instructions.memory import MemoryFile
from agent.instructions.system_prompt import build_system_prompt

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def make_git_repo(path: Path) -> Path:
    """On branch trunk: one commit, a.py modified since, 50 untracked files."""
    path.mkdir()
    git(path, "init", "-q", "-b", "trunk")
    (path / "a.py").write_text("a = 1\n")
    git(path, "add", "a.py")
    git(path, "commit", "-q", "-m", "first commit")
    (path / "a.py").write_text("a = 2\n")
    for index in range(50):
        (path / f"new{index:02d}.txt").write_text("x")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    return make_git_repo(tmp_path / "repo")


def test_two_text_blocks_and_the_first_is_the_same_everywhere(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    first = build_system_prompt(one, "claude-sonnet-5-5", [], now=datetime(2030, 1, 2), git=False)
    second = build_system_prompt(
        two,
        "claude-opus-5-5",
        [MemoryFile(two / "CLAUDE.md", "project", "be terse")],
        now=datetime(2031, 5, 6),
    )
    assert [set(block) for block in first] == [{"type", "text"}] * 2
    assert all(block["type"] == "text" and block["text"] for block in first + second)
    assert first[0] == second[0]
    static = first[0]["text"]
    assert "ccx" in static and "Edit" in static and "Grep" in static
    assert str(one) not in static and "2030" not in static
    assert str(one) in first[1]["text"] and "2030-01-02" in first[1]["text"]
    assert "claude-sonnet-5-5" in first[1]["text"]


def test_memory_files_are_included_under_their_paths(tmp_path: Path) -> None:
    files = [
        MemoryFile(Path("/home/u/.claude/CLAUDE.md"), "user", "Always answer in French."),
        MemoryFile(tmp_path / "CLAUDE.md", "project", "Run `make check` before finishing."),
        MemoryFile(tmp_path / "empty.md", "import", "  \n"),
    ]
    blocks = build_system_prompt(tmp_path, "claude-sonnet-5-5", files, git=False)
    dynamic = blocks[1]["text"]
    assert "/home/u/.claude/CLAUDE.md" in dynamic and "Always answer in French." in dynamic
    assert f"{tmp_path / 'CLAUDE.md'}" in dynamic and "make check" in dynamic
    assert dynamic.index("French") < dynamic.index("make check")
    assert "precedence" in dynamic
    assert "empty.md" not in dynamic
    assert "French" not in blocks[0]["text"]


def test_a_directory_outside_git_works(tmp_path: Path) -> None:
    blocks = build_system_prompt(tmp_path, "claude-haiku-5-5", [])
    assert "Git repository: no" in blocks[1]["text"]
    assert "Recent commits" not in blocks[1]["text"]


@needs_git
def test_git_branch_status_and_log_are_reported(repo: Path) -> None:
    """How fast this is built is measured by bench/speed_targets.py."""
    text = build_system_prompt(repo, "claude-sonnet-5-5", [])[1]["text"]
    assert "Git repository: yes" in text and "Branch: trunk" in text
    assert " M a.py" in text and "first commit" in text
    assert "new38.txt" in text and "new39.txt" not in text
    assert "11 more lines" in text


def test_without_a_git_binary_the_prompt_still_builds(
    repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-binaries-here"))
    blocks = build_system_prompt(repo, "claude-sonnet-5-5", [])
    assert "Git repository: no" in blocks[1]["text"]
