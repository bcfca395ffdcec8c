"""Custom command files: names, frontmatter, precedence, and filling in the body."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.instructions.custom_commands import (
    command_header,
    command_name_for,
    discover_commands,
    file_references,
    fill_arguments,
    read_frontmatter,
    shell_snippets,
    tool_rules,
    typed_line,
)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir(exist_ok=True)  # the repo fixture makes it too
    return tmp_path / "home"


def discover(repo: Path, home: Path):  # type: ignore[no-untyped-def]
    return discover_commands(repo, home=home, config_dir=home / ".ccx")


@pytest.mark.parametrize(
    ("body", "args", "expected"),
    [
        ("Fix issue #$ARGUMENTS now", "123", "Fix issue #123 now"),
        ("$0 then $1 (all: $ARGUMENTS)", '"two words" b', 'two words then b (all: "two words" b)'),
        ("a0=$ARGUMENTS[0] a1=$ARGUMENTS[1]", "x y", "a0=x a1=y"),
        ("Build $0 in mode $2", "web prod", "Build web in mode $2"),  # out of range: as written
        ("No placeholders", "some args", "No placeholders\n\nARGUMENTS: some args"),
        ("No placeholders", "", "No placeholders"),
        ("Quote $0", "it's", "Quote it's"),  # unbalanced quotes: split on spaces
        ("$ARGUMENTS", "$1 literal", "$1 literal"),  # what the user typed is not filled again
    ],
)
def test_fill_arguments(body: str, args: str, expected: str) -> None:
    assert fill_arguments(body, args) == expected


def test_names_come_from_the_path_with_folders_as_namespaces(tmp_path: Path) -> None:
    root = tmp_path / "commands"
    assert command_name_for(root / "frontend" / "build.md", root) == "frontend:build"
    assert command_name_for(root / "a" / "b" / "c-d.md", root) == "a:b:c-d"
    assert command_name_for(root / "fix.v2.md", root) == "fix.v2"
    assert command_name_for(root / "has space.md", root) is None
    assert command_name_for(root / "1st.md", root) is None


def test_frontmatter_yaml_or_plain_lines() -> None:
    assert read_frontmatter("description: d\nallowed-tools: [Read, Grep]") == {
        "description": "d",
        "allowed-tools": ["Read", "Grep"],
    }
    # not YAML, but plain "key: value" lines: read as Claude Code reads them
    assert read_frontmatter("argument-hint: [a] [b]\nmodel: haiku")["argument-hint"] == "[a] [b]"
    with pytest.raises(ValueError):
        read_frontmatter("description: [open\n  - nested: [")
    assert tool_rules("Bash(git add:*), Bash(git status:*) Read") == [
        "Bash(git add:*)",
        "Bash(git status:*)",
        "Read",
    ]
    assert tool_rules(["Bash(npm test *)", "Edit"]) == ["Bash(npm test *)", "Edit"]
    assert tool_rules(None) == []


def test_discovery_precedence_scopes_and_skipped_files(repo: Path, home: Path) -> None:
    project = repo / ".claude" / "commands"
    write(project / "review.md", "---\ndescription: Project review\n---\nReview $ARGUMENTS")
    write(project / "frontend" / "build.md", "# Build the app\n\nSteps...")
    write(project / "broken.md", "---\ndescription: x\n")  # never closed
    write(project / "latin1.md", "caf\xe9".encode("latin-1"))
    write(project / "bad name.md", "x")
    write(home / ".claude" / "commands" / "review.md", "User review")
    write(home / ".claude" / "commands" / "mine.md", "---\nmodel: haiku\n---\nMine")
    write(home / ".ccx" / "commands" / "mine.md", "ccx's own folder comes first")

    found = discover(repo, home)

    by_name = {c.name: c for c in found}
    assert sorted(by_name) == ["frontend:build", "mine", "review"]
    assert by_name["review"].scope == "project" and by_name["review"].help == (
        "Project review (project)"
    )
    assert by_name["frontend:build"].description == "Build the app"  # the first line
    assert by_name["mine"].body == "ccx's own folder comes first"
    assert found.get("REVIEW") is by_name["review"]
    warnings = "\n".join(found.warnings)
    assert "broken.md has malformed frontmatter" in warnings
    assert "latin1.md is not UTF-8" in warnings
    assert "bad name.md" in warnings


def test_snippets_file_references_and_the_header() -> None:
    text = 'Run !`git status` and !`echo "hi"`; see @src/app.py, @notes.md. Mail a@b.com `@x`'
    assert shell_snippets(text) == ["git status", 'echo "hi"']
    assert file_references(text) == ["src/app.py", "notes.md"]
    assert command_header("a:b", "x y") == (
        "<command-message>a:b</command-message>\n"
        "<command-name>/a:b</command-name>\n"
        "<command-args>x y</command-args>\n"
    )


def test_the_typed_line_is_read_back_from_the_header() -> None:
    assert typed_line(command_header("a:b", "x <y> z")) == "/a:b x <y> z"
    assert typed_line(command_header("fix", "")) == "/fix"
    assert typed_line("Fix the bug") is None
