"""Memory files: discovery order, imports, comments, nested files."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.instructions.memory import MemoryFiles


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "ccx-config"))
    return home


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def summary(files) -> list[tuple[str, str]]:
    return [(f.kind, f.content.strip()) for f in files]


def test_discovery_order_user_first_then_outermost_to_cwd(home: Path, tmp_path: Path) -> None:
    repo = home / "code" / "repo"
    cwd = repo / "pkg"
    cwd.mkdir(parents=True)
    write(home / ".claude" / "CLAUDE.md", "user claude")
    write(tmp_path / "ccx-config" / "CLAUDE.md", "user ccx")
    write(home / "code" / "AGENTS.md", "code agents")
    write(repo / "CLAUDE.md", "repo claude")
    write(repo / ".claude" / "CLAUDE.md", "repo dot-claude")
    write(repo / "CLAUDE.local.md", "repo local")
    write(repo / "AGENTS.md", "repo agents")
    write(cwd / "CLAUDE.md", "pkg claude")
    write(cwd / "sub" / "CLAUDE.md", "below the cwd: not loaded up front")
    write(tmp_path / "CLAUDE.md", "above home: not loaded")

    memory = MemoryFiles(cwd)
    files = memory.load()
    assert summary(files) == [
        ("user", "user claude"),
        ("user", "user ccx"),
        ("agents", "code agents"),
        ("project", "repo claude"),
        ("project", "repo dot-claude"),
        ("local", "repo local"),
        ("agents", "repo agents"),
        ("project", "pkg claude"),
    ]
    assert memory.paths() == [f.path for f in files]
    assert memory.paths()[0] == home / ".claude" / "CLAUDE.md"


def test_outside_home_walks_from_the_root(home: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "srv" / "app"
    cwd.mkdir(parents=True)
    write(tmp_path / "CLAUDE.md", "outer")
    write(cwd / "CLAUDE.md", "inner")
    files = MemoryFiles(cwd, home=home).load()
    ours = [f for f in files if f.path.is_relative_to(tmp_path)]  # ignore any in / or /tmp
    assert summary(ours) == [("project", "outer"), ("project", "inner")]


def test_imports_follow_their_importer_with_cycles_and_code_ignored(home: Path) -> None:
    cwd = home / "repo"
    write(
        cwd / "CLAUDE.md",
        "Read @docs/style.md and @~/notes.md.\n"
        "`@inline.md` is code, and so is this:\n"
        "```\n@fenced.md\n```\n"
        "Mail me@example.com, missing @nowhere.md is fine.\n",
    )
    write(cwd / "docs" / "style.md", "style, see @../CLAUDE.md and @deeper/rules.md")
    write(cwd / "docs" / "deeper" / "rules.md", "rules")
    write(home / "notes.md", "notes")
    for name in ("inline.md", "fenced.md"):
        write(cwd / name, "must not be imported")

    files = MemoryFiles(cwd).load()
    assert [(f.kind, f.path) for f in files] == [
        ("project", cwd / "CLAUDE.md"),
        ("import", cwd / "docs" / "style.md"),
        ("import", cwd / "docs" / "deeper" / "rules.md"),
        ("import", home / "notes.md"),
    ]


def test_import_depth_is_limited(home: Path) -> None:
    cwd = home / "repo"
    write(cwd / "CLAUDE.md", "@f1.md")
    for index in range(1, 9):
        write(cwd / f"f{index}.md", f"level {index} @f{index + 1}.md")
    files = MemoryFiles(cwd).load()
    assert [f.path.name for f in files] == ["CLAUDE.md", *(f"f{i}.md" for i in range(1, 6))]


def test_html_comments_are_removed_outside_code(home: Path) -> None:
    cwd = home / "repo"
    write(
        cwd / "CLAUDE.md",
        "keep <!-- drop\nthis --> this\n<!-- @hidden.md -->\n```html\n<!-- shown -->\n```\n",
    )
    write(cwd / "hidden.md", "must not be imported")
    (memory,) = MemoryFiles(cwd).load()
    assert memory.content == "keep  this\n\n```html\n<!-- shown -->\n```\n"


def test_oversized_files_are_skipped_with_a_warning(home: Path) -> None:
    cwd = home / "repo"
    write(cwd / "CLAUDE.md", "x" * (101 * 1024))
    write(cwd / "AGENTS.md", "small")
    memory = MemoryFiles(cwd)
    assert summary(memory.load()) == [("agents", "small")]
    assert len(memory.warnings) == 1 and "100 KB" in memory.warnings[0]


def test_nested_files_come_once_when_a_deeper_file_is_read(home: Path) -> None:
    cwd = home / "repo"
    write(cwd / "CLAUDE.md", "root")
    write(cwd / "src" / "CLAUDE.md", "src rules @extra.md")
    write(cwd / "src" / "extra.md", "extra")
    write(cwd / "src" / "api" / "AGENTS.md", "api agents")
    write(cwd / "src" / "api" / "deep" / "CLAUDE.md", "deeper than the file: not loaded")
    write(cwd / "other" / "CLAUDE.md", "sibling: not loaded")

    memory = MemoryFiles(cwd)
    memory.load()
    nested = memory.nested_for(cwd / "src" / "api" / "handlers.py")
    assert summary(nested) == [
        ("nested", "src rules @extra.md"),
        ("import", "extra"),
        ("nested", "api agents"),
    ]
    assert memory.nested_for(cwd / "src" / "api" / "models.py") == []
    assert memory.nested_for(cwd / "main.py") == []  # the cwd's own files are loaded already
    assert memory.nested_for(home / "elsewhere" / "x.py") == []
    assert cwd / "src" / "api" / "AGENTS.md" in memory.paths()
