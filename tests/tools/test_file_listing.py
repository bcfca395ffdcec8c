"""list_files: what `@` completion offers, the same from `rg --files` and from the Python walk."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tools import file_listing, rg_binary
from tools.file_listing import list_files

RG = rg_binary.find_rg()


@pytest.fixture(
    params=[
        pytest.param("rg", marks=pytest.mark.skipif(RG is None, reason="rg is not installed")),
        "python",
    ]
)
def lister(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(rg_binary, "find_rg", lambda: None)
    return str(request.param)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        ".gitignore": "build/\n*.log\n",
        "main.py": "",
        "src/app.py": "",
        "src/.env": "",
        "src/deep/er/mod.ts": "",
        "build/out.js": "",
        "debug.log": "",
        ".github/ci.yml": "",
        ".git/config": "",
        "node_modules/.gitignore": "*\n",
        "node_modules/pkg/index.js": "",
        "name with spaces.md": "",
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "link.py").symlink_to(tmp_path / "main.py")
    return tmp_path


def test_ignored_and_hidden_files_are_left_out(tree: Path, lister: str) -> None:
    assert sorted(list_files(tree)) == [
        "main.py",
        "name with spaces.md",
        "src/app.py",
        "src/deep/er/mod.ts",
    ]


def test_hidden_files_on_request_but_never_git(tree: Path, lister: str) -> None:
    assert sorted(list_files(tree, hidden=True)) == [
        ".github/ci.yml",
        ".gitignore",
        "main.py",
        "name with spaces.md",
        "src/.env",
        "src/app.py",
        "src/deep/er/mod.ts",
    ]


def test_a_subdirectory_lists_relative_to_itself(tree: Path, lister: str) -> None:
    assert sorted(list_files(tree / "src")) == ["app.py", "deep/er/mod.ts"]


def test_cancel_and_early_stop(tree: Path, lister: str) -> None:
    cancel = threading.Event()
    cancel.set()
    assert list(list_files(tree, cancel)) == []
    listing = list_files(tree)
    first = next(listing)
    assert first in {"main.py", "name with spaces.md", "src/app.py", "src/deep/er/mod.ts"}
    listing.close()  # ends the rg process, if one runs


@pytest.mark.skipif(RG is None, reason="rg is not installed")
def test_rg_files_ends_rg_when_the_caller_stops(tmp_path: Path) -> None:
    for i in range(3000):
        (tmp_path / f"f{i:04d}.txt").write_text("")
    assert RG is not None
    listing = file_listing.rg_files(RG, str(tmp_path), [])
    assert next(listing).endswith(".txt")
    listing.close()
    # All 3,000 names come back on a full run, none torn at a read boundary.
    names = set(file_listing.rg_files(RG, str(tmp_path), []))
    assert names == {f"f{i:04d}.txt" for i in range(3000)}
