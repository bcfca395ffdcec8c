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
    write(home / "notes.md", "notes: outside the project")
    for name in ("inline.md", "fenced.md"):
        write(cwd / name, "must not be imported")

    memory = MemoryFiles(cwd)
    files = memory.load()
    assert [(f.kind, f.path) for f in files] == [
        ("project", cwd / "CLAUDE.md"),
        ("import", cwd / "docs" / "style.md"),
        ("import", cwd / "docs" / "deeper" / "rules.md"),
    ]
    assert memory.warnings == ["CLAUDE.md imports ~/notes.md: not read (outside the project)"]


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


# -- what a file may import ------------------------------------------------------------

SECRET = "TOP-SECRET-VALUE"


@pytest.fixture
def project(home: Path, tmp_path: Path) -> Path:
    """A cloned repository beside a secret, with the user's home holding an SSH key."""
    root = tmp_path / "work" / "repo"
    (root / ".git").mkdir(parents=True)
    write(tmp_path / "work" / "secret.txt", SECRET)
    write(home / ".ssh" / "id_rsa", SECRET)
    write(tmp_path / "elsewhere" / "keys" / "key.txt", SECRET)
    return root


def loaded_text(memory: MemoryFiles) -> str:
    return "\n".join(f.content for f in memory.load())


@pytest.mark.parametrize(
    "reference",
    ["../secret.txt", "sub/../../secret.txt", "~/.ssh/id_rsa", "ABSOLUTE"],
    ids=["dotdot", "dotdot-inside-path", "home", "absolute"],
)
def test_a_project_file_never_imports_from_outside(
    project: Path, tmp_path: Path, reference: str
) -> None:
    reference = reference.replace("ABSOLUTE", str(tmp_path / "work" / "secret.txt"))
    (project / "sub").mkdir()
    write(project / "CLAUDE.md", f"Project rules.\n@{reference}\n")
    memory = MemoryFiles(project)
    text = loaded_text(memory)
    assert "Project rules." in text and SECRET not in text
    (refused,) = memory.refused
    assert refused.outside and refused.reference == reference
    assert memory.warnings == [f"CLAUDE.md imports {reference}: not read (outside the project)"]


def test_a_symlink_in_the_project_that_leads_out_is_not_followed(
    project: Path, tmp_path: Path
) -> None:
    (project / "notes.md").symlink_to(tmp_path / "work" / "secret.txt")
    (project / "keys").symlink_to(tmp_path / "elsewhere" / "keys")  # a symlinked directory
    write(project / "CLAUDE.md", "See @notes.md and @keys/key.txt.\n")
    memory = MemoryFiles(project)
    assert SECRET not in loaded_text(memory)
    assert [(r.reference, r.real) for r in memory.refused] == [
        ("notes.md", tmp_path / "work" / "secret.txt"),
        ("keys/key.txt", tmp_path / "elsewhere" / "keys" / "key.txt"),
    ]


def test_a_memory_file_that_is_itself_a_link_out_is_not_read(project: Path, tmp_path: Path) -> None:
    (project / "CLAUDE.md").symlink_to(tmp_path / "work" / "secret.txt")
    memory = MemoryFiles(project)
    assert SECRET not in loaded_text(memory)
    (refused,) = memory.refused
    assert refused.importer is None
    assert memory.warnings == [
        f"CLAUDE.md (a link to {tmp_path / 'work' / 'secret.txt'}): not read (outside the project)"
    ]


def test_links_and_imports_inside_the_project_are_read(project: Path) -> None:
    write(project / "docs" / "rules.md", "inside rules")
    (project / "rules-link.md").symlink_to(project / "docs" / "rules.md")
    (project / "AGENTS.md").symlink_to(project / "CLAUDE.md")  # read once, as CLAUDE.md
    write(project / "CLAUDE.md", "@rules-link.md\n")
    memory = MemoryFiles(project)
    assert [f.content for f in memory.load()] == ["@rules-link.md\n", "inside rules"]
    assert memory.refused == [] and memory.warnings == []


def test_an_import_of_an_import_is_held_to_the_project_too(project: Path) -> None:
    write(project / "CLAUDE.md", "@docs/a.md\n")
    write(project / "docs" / "a.md", "a, then @b.md\n")
    write(project / "docs" / "b.md", "b, then @../../secret.txt and @~/.ssh/id_rsa\n")
    memory = MemoryFiles(project)
    text = loaded_text(memory)
    assert "a, then" in text and "b, then" in text and SECRET not in text
    assert [w.split(":")[0] for w in memory.warnings] == [
        "docs/b.md imports ../../secret.txt",
        "docs/b.md imports ~/.ssh/id_rsa",
    ]


def test_import_cycles_end_and_a_refused_file_is_named_once(project: Path) -> None:
    write(project / "CLAUDE.md", "@a.md\n@../secret.txt\n")
    write(project / "a.md", "a @b.md @../secret.txt")
    write(project / "b.md", "b @a.md @CLAUDE.md")
    (project / "c.md").symlink_to(project / "a.md")
    write(project / "CLAUDE.local.md", "@c.md")  # a.md again, through a link
    memory = MemoryFiles(project)
    files = memory.load()
    assert [f.path.name for f in files] == ["CLAUDE.md", "a.md", "b.md", "CLAUDE.local.md"]
    assert len(memory.refused) == 1 and len(memory.warnings) == 1


def test_a_denied_path_is_not_imported_by_any_route(project: Path) -> None:
    from agent.permissions.gate import PermissionGate, Rule

    write(project / ".env", f"API_KEY={SECRET}\n")
    (project / "envlink").symlink_to(project / ".env")
    write(project / "CLAUDE.md", "@.env and @envlink and @sub/../.env\n")
    (project / "sub").mkdir()
    gate = PermissionGate("default", [], [Rule.parse("Read(./.env)")], [], cwd=project)
    memory = MemoryFiles(project, read_denied=gate.read_denied)
    assert SECRET not in loaded_text(memory)
    (refused,) = memory.refused  # one file, refused once
    assert not refused.outside
    assert memory.warnings == ["CLAUDE.md imports .env: not read (a Read deny rule covers it)"]


def test_the_users_own_file_may_import_from_home_but_not_a_denied_file(
    project: Path, home: Path
) -> None:
    from agent.permissions.gate import PermissionGate, Rule

    write(home / "notes" / "style.md", "the user's style")
    write(home / ".claude" / "CLAUDE.md", "@~/notes/style.md @~/.ssh/id_rsa\n")
    deny = [Rule.parse("Read(~/.ssh/**)")]
    gate = PermissionGate("default", [], deny, [], cwd=project, home=home)
    memory = MemoryFiles(project, read_denied=gate.read_denied)
    text = loaded_text(memory)
    assert "the user's style" in text and SECRET not in text
    assert [r.outside for r in memory.refused] == [False]


def test_added_directories_count_as_the_project(project: Path, tmp_path: Path) -> None:
    write(project / "CLAUDE.md", "@../../elsewhere/keys/key.txt\n")
    shared = tmp_path / "elsewhere"
    assert SECRET in loaded_text(MemoryFiles(project, roots=[project, shared]))
    assert SECRET not in loaded_text(MemoryFiles(project))


def test_a_file_above_the_project_imports_within_its_own_folder(
    project: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    write(work / "team.md", "team conventions")
    write(work / "CLAUDE.md", "@team.md @secret.txt @../elsewhere/keys/key.txt\n")
    memory = MemoryFiles(project)
    text = loaded_text(memory)
    assert "team conventions" in text and SECRET in text  # work/ is the user's own folder
    assert [r.reference for r in memory.refused] == ["../elsewhere/keys/key.txt"]


def test_nested_files_below_the_cwd_are_held_to_the_project(project: Path, tmp_path: Path) -> None:
    write(project / "CLAUDE.md", "root")
    write(project / "src" / "CLAUDE.md", "src rules @../../secret.txt")
    (project / "linked").symlink_to(tmp_path / "elsewhere" / "keys")
    write(tmp_path / "elsewhere" / "keys" / "CLAUDE.md", f"outside memory {SECRET}")
    memory = MemoryFiles(project)
    memory.load()
    nested = memory.nested_for(project / "src" / "main.py")
    assert summary(nested) == [("nested", "src rules @../../secret.txt")]
    assert memory.nested_for(project / "linked" / "key.txt") == []
    assert [r.reference for r in memory.refused] == ["../../secret.txt", "CLAUDE.md"]
