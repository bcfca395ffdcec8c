from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot
from tools import rg_binary
from tools.base import ToolContext, ToolResult
from tools.glob import GlobParams, GlobTool, find_files
from tools.glob_pattern import compile_gitignore_glob, glob_to_regex

GLOB = GlobTool()
RG = rg_binary.find_rg()


@pytest.fixture(
    autouse=True,
    params=[
        pytest.param("rg", marks=pytest.mark.skipif(RG is None, reason="rg is not installed")),
        "python",
    ],
)
def lister(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs twice: files listed by `rg --files`, and by the Python walk."""
    if request.param == "python":
        monkeypatch.setattr(rg_binary, "find_rg", lambda: None)
    return str(request.param)


def _touch(root: Path, rel: str, mtime: float = 1_700_000_000) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rel)
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def tree(ctx: ToolContext) -> Path:
    root = ctx.cwd
    _touch(root, "main.py", 1_700_000_300)
    _touch(root, "src/app.py", 1_700_000_500)
    _touch(root, "src/util/helpers.py", 1_700_000_100)
    _touch(root, "src/util/data.json", 1_700_000_200)
    _touch(root, "web/index.ts", 1_700_000_400)
    _touch(root, "web/view.tsx", 1_700_000_600)
    _touch(root, ".github/ci.yml")
    _touch(root, ".git/hooks/pre.py")
    _touch(root, "node_modules/pkg/index.js")
    _touch(root, ".venv/lib/site.py")
    _touch(root, "src/__pycache__/app.cpython-311.py")
    return root


def test_schema_snapshot() -> None:
    assert_schema_matches_snapshot(GlobTool)
    assert GlobTool.is_mutating is False


def test_bad_input_and_labels() -> None:
    result = GLOB.parse({"path": "src"})
    assert isinstance(result, ToolResult) and "pattern: Field required" in result.output
    params = GLOB.parse({"pattern": "**/*.py", "path": "src"})
    assert isinstance(params, GlobParams)
    assert GLOB.label(params) == "Glob **/*.py in src"


async def test_recursive_pattern_newest_first(tree: Path, call: Call) -> None:
    result = await call(GLOB, pattern="**/*.py")
    assert result.output.splitlines() == [
        str(tree / "src/app.py"),
        str(tree / "main.py"),
        str(tree / "src/util/helpers.py"),
    ]
    assert result.meta == {"count": 3, "truncated": False, "display": "Found 3 files"}


async def test_single_star_stays_at_one_level(tree: Path, call: Call) -> None:
    result = await call(GLOB, pattern="*.py")
    assert result.output == str(tree / "main.py")
    result = await call(GLOB, pattern="*.py", path="src")
    assert result.output == str(tree / "src/app.py")


async def test_braces_classes_and_prefixes(tree: Path, call: Call) -> None:
    result = await call(GLOB, pattern="web/*.{ts,tsx}")
    assert result.output.splitlines() == [str(tree / "web/view.tsx"), str(tree / "web/index.ts")]
    result = await call(GLOB, pattern="src/**/[dh]*.*")
    assert result.output.splitlines() == [
        str(tree / "src/util/data.json"),
        str(tree / "src/util/helpers.py"),
    ]
    result = await call(GLOB, pattern=str(tree / "src") + "/**/*.json")
    assert result.output == str(tree / "src/util/data.json")


async def test_hidden_files_are_found_but_heavy_dirs_skipped(tree: Path, call: Call) -> None:
    result = await call(GLOB, pattern="**/*.yml")
    assert result.output == str(tree / ".github/ci.yml")
    result = await call(GLOB, pattern="**/*")
    found = result.output.splitlines()
    for skipped in (".git", "node_modules", ".venv", "__pycache__"):
        assert not any(f"/{skipped}/" in line for line in found), skipped


async def test_skipped_dirs_searched_when_named(tree: Path, call: Call) -> None:
    result = await call(GLOB, pattern="node_modules/**/*.js")
    assert result.output == str(tree / "node_modules/pkg/index.js")
    result = await call(GLOB, pattern="**/.git/**/*.py")
    assert result.output == str(tree / ".git/hooks/pre.py")
    result = await call(GLOB, pattern="**/*.py", path=".venv")
    assert result.output == str(tree / ".venv/lib/site.py")


async def test_literal_path(tree: Path, call: Call) -> None:
    result = await call(GLOB, pattern="src/app.py")
    assert result.output == str(tree / "src/app.py")


async def test_no_match_and_bad_paths(tree: Path, call: Call) -> None:
    result = await call(GLOB, pattern="**/*.rs")
    assert not result.is_error and result.output == "No files found"
    result = await call(GLOB, pattern="*.py", path="missing")
    assert result.is_error and "does not exist" in result.output
    result = await call(GLOB, pattern="*.py", path="main.py")
    assert result.is_error and "not a directory" in result.output
    result = await call(GLOB, pattern="   ")
    assert result.is_error


async def test_undefined_path_means_default(tree: Path, call: Call) -> None:
    result = await call(GLOB, pattern="*.py", path="undefined")
    assert result.output == str(tree / "main.py")


async def test_truncated_after_100(ctx: ToolContext, call: Call) -> None:
    for i in range(105):
        _touch(ctx.cwd, f"many/f{i:03d}.txt", 1_700_000_000 + i)
    result = await call(GLOB, pattern="many/*.txt")
    lines = result.output.splitlines()
    assert len(lines) == 101
    assert lines[0] == str(ctx.cwd / "many/f104.txt")
    assert "truncated" in lines[-1] and "105" in lines[-1]
    assert result.meta["truncated"] is True


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("*.py", ["a.py"], ["d/a.py", "a.pyc"]),
        ("**/*.py", ["a.py", "d/e/a.py"], ["a.txt"]),
        ("src/**", ["src/a", "src/d/e"], ["src", "lib/a"]),
        ("a/**/b", ["a/b", "a/x/y/b"], ["a/xb"]),
        ("?.md", ["x.md"], ["xy.md"]),
        ("[!a]*.js", ["b.js"], ["a.js"]),
        ("*.{ts,tsx}", ["x.ts", "x.tsx"], ["x.t"]),
        ("{src,lib}/**/*.c", ["src/a.c", "lib/x/y.c"], ["doc/a.c"]),
        ("weird{brace", ["weird{brace"], []),
        ("a\\*b", ["a*b"], ["axb"]),
    ],
)
def test_glob_to_regex(pattern: str, matches: list[str], misses: list[str]) -> None:
    regex = re.compile(glob_to_regex(pattern), re.DOTALL)
    for path in matches:
        assert regex.fullmatch(path), (pattern, path)
    for path in misses:
        assert not regex.fullmatch(path), (pattern, path)


def test_gitignore_style_globs() -> None:
    regex, dir_only = compile_gitignore_glob("*.py")
    assert regex.fullmatch("a.py") and regex.fullmatch("x/y/a.py") and not dir_only
    regex, _ = compile_gitignore_glob("src/*.py")
    assert regex.fullmatch("src/a.py") and not regex.fullmatch("lib/src/a.py")
    regex, dir_only = compile_gitignore_glob("build/")
    assert dir_only and regex.fullmatch("x/build")


async def test_symlinks_are_neither_listed_nor_followed(tree: Path, call: Call) -> None:
    (tree / "linked.py").symlink_to(tree / "main.py")
    (tree / "linked_dir").symlink_to(tree / "src")
    result = await call(GLOB, pattern="**/*.py")
    assert "linked" not in result.output
    assert result.meta["count"] == 3


def test_listing_stops_when_cancelled(tree: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    assert find_files(tree, "**/*", cancel) == []


async def test_depth_limit_without_double_star(tree: Path, call: Call) -> None:
    _touch(tree, "a/b/c/deep.py")
    result = await call(GLOB, pattern="*/*/*.py")
    assert result.output == str(tree / "src/util/helpers.py")
    result = await call(GLOB, pattern="a/*/*/*.py")
    assert result.output == str(tree / "a/b/c/deep.py")
