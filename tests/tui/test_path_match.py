"""The ``@`` completion's matcher and index: ranking, ignore rules, rebuilding on changes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tui.path_match import PathMatcher
from tui.project_index import ProjectIndex, list_project_files, with_directories

PATHS = [
    "README.md",
    "src/app.py",
    "src/apparatus/",
    "src/apparatus/gear.py",
    "lib/wrapper.py",
    "tests/test_app_start.py",
    "docs/api/paths.md",
    "Makefile",
]


def test_tiers_name_start_then_name_then_path_then_subsequence() -> None:
    matcher = PathMatcher(PATHS)
    assert matcher.match("app") == [
        "src/app.py",  # the name starts with it, shortest first
        "src/apparatus/",
        "lib/wrapper.py",  # the name holds it (wr-APP-er)
        "tests/test_app_start.py",
        "src/apparatus/gear.py",  # the path holds it
        "docs/api/paths.md",  # the path holds it as a subsequence (A-P-i/P-aths)
    ]
    assert matcher.match("sapy") == [
        "tests/test_app_start.py",  # the name holds it as a subsequence
        "src/app.py",  # the path does
        "src/apparatus/gear.py",
    ]


def test_case_is_ignored_and_shown_as_written() -> None:
    matcher = PathMatcher(PATHS)
    assert matcher.match("make") == ["Makefile"]
    assert matcher.match("MAKE") == ["Makefile"]
    assert matcher.match("readme")[0] == "README.md"


def test_a_query_with_a_slash_matches_paths_and_a_miss_matches_nothing() -> None:
    matcher = PathMatcher(PATHS)
    assert matcher.match("api/pa") == ["docs/api/paths.md"]
    assert matcher.match("src/") == ["src/app.py", "src/apparatus/", "src/apparatus/gear.py"]
    assert matcher.match("qqq") == []
    assert matcher.match("") == sorted(PATHS, key=lambda p: (len(p), p))


def test_regex_characters_and_other_scripts_are_plain_text() -> None:
    matcher = PathMatcher(["a[1]/b.c", "ab/c", "café/menü.txt", "cafe/menu.txt", "x+y.md"])
    assert matcher.match("[1]") == ["a[1]/b.c"]
    assert matcher.match("b.c") == ["a[1]/b.c"]
    assert matcher.match("x+") == ["x+y.md"]
    assert matcher.match("menü") == ["café/menü.txt"]
    assert matcher.match("cfmü") == ["café/menü.txt"]


def test_the_limit_keeps_the_best() -> None:
    paths = [f"pkg/module_{i:05d}.py" for i in range(5_000)] + ["module.py"]
    matcher = PathMatcher(paths)
    found = matcher.match("module", limit=3)
    assert found == ["module.py", "pkg/module_00000.py", "pkg/module_00001.py"]


def test_the_listing_honours_gitignore_and_adds_directories(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("dist/\n*.tmp\n")
    for name in [
        "src/a.py",
        "src/deep/b.py",
        "dist/out.js",
        "x.tmp",
        ".env",
        "node_modules/m/i.js",
    ]:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    listed = with_directories(list_project_files(tmp_path))
    assert sorted(listed) == ["src/", "src/a.py", "src/deep/", "src/deep/b.py"]


def wait_until(condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_the_index_builds_in_the_background_and_follows_new_and_deleted_files(
    tmp_path: Path,
) -> None:
    (tmp_path / "one.py").write_text("1\n")
    builds: list[float] = []
    index = ProjectIndex(tmp_path, watch=True, on_change=lambda: builds.append(time.monotonic()))
    try:
        time.sleep(0.3)
        assert index.matcher is None  # nothing is listed before completion asks
        assert index.match("one") is None  # the first ask starts the listing
        wait_until(lambda: index.match("one") == ["one.py"])
        (tmp_path / "pkg").mkdir()
        (tmp_path / "pkg" / "two.py").write_text("2\n")
        wait_until(lambda: index.match("two") == ["pkg/two.py"])
        (tmp_path / "one.py").unlink()
        wait_until(lambda: index.match("one") == [])
        assert len(builds) >= 3
    finally:
        index.stop()


def test_without_a_watch_a_stale_list_is_rebuilt_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui.project_index as project_index

    (tmp_path / "one.py").write_text("1\n")
    index = ProjectIndex(tmp_path, watch=False)
    try:
        index.start()
        wait_until(lambda: index.match("one") == ["one.py"])
        (tmp_path / "two.py").write_text("2\n")
        assert index.match("two") == []  # fresh: not listed again
        monkeypatch.setattr(project_index, "STALE_S", 0.0)
        assert index.match("two") == []  # the old list answers while the new one is made
        wait_until(lambda: index.match("two") == ["two.py"])
    finally:
        index.stop()


def test_the_index_moves_with_the_session(tmp_path: Path) -> None:
    first, second = tmp_path / "main", tmp_path / "worktree"
    for folder, name in ((first, "main_only.py"), (second, "tree_only.py")):
        folder.mkdir()
        (folder / name).write_text("x\n")
    index = ProjectIndex(first, watch=True)
    try:
        index.start()
        wait_until(lambda: index.match("only") == ["main_only.py"])
        index.move(second)
        wait_until(lambda: index.match("only") == ["tree_only.py"])
        (second / "new_only.py").write_text("y\n")  # watched there now
        wait_until(lambda: sorted(index.match("only") or []) == ["new_only.py", "tree_only.py"])
    finally:
        index.stop()
