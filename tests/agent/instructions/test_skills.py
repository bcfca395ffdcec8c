from __future__ import annotations

from pathlib import Path

import pytest

from agent.instructions.skills import InvokedSkills, discover_skills, load_skill, skills_listing
from tools.skill import SkillInfo


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "home"
    config = tmp_path / "config"
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CCX_CONFIG_DIR", str(config))
    return {"home": home, "config": config, "project": project}


def write_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_text(name: str, description: str, body: str = "Do the thing.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def test_discovers_all_three_sources_project_first(dirs: dict[str, Path]) -> None:
    project_skills = dirs["project"] / ".claude" / "skills"
    write_skill(project_skills, "lint", skill_text("lint", "project lint"))
    write_skill(dirs["config"] / "skills", "lint", skill_text("lint", "config lint"))
    write_skill(dirs["config"] / "skills", "deploy", skill_text("deploy", "config deploy"))
    write_skill(dirs["home"] / ".claude" / "skills", "deploy", skill_text("deploy", "home deploy"))
    write_skill(dirs["home"] / ".claude" / "skills", "pdf", skill_text("pdf", "home pdf"))
    sub = dirs["project"] / "src" / "pkg"
    sub.mkdir(parents=True)

    skills = discover_skills(sub)

    assert [(s.name, s.description) for s in skills] == [
        ("lint", "project lint"),
        ("deploy", "config deploy"),
        ("pdf", "home pdf"),
    ]
    lint = skills[0]
    assert lint.path == project_skills / "lint" / "SKILL.md"
    assert lint.base_dir == project_skills / "lint"
    assert skills.warnings == []


def test_explicit_home_and_config_dir_override_environment(tmp_path: Path) -> None:
    home, config, cwd = tmp_path / "h", tmp_path / "c", tmp_path / "w"
    cwd.mkdir()
    write_skill(home / ".claude" / "skills", "a", skill_text("a", "from home"))
    write_skill(config / "skills", "b", skill_text("b", "from config"))
    assert {s.name for s in discover_skills(cwd, home=home, config_dir=config)} == {"a", "b"}


@pytest.mark.parametrize(
    ("text", "name", "description"),
    [
        # name defaults to the directory name
        ("---\ndescription: Formats code\n---\nbody\n", "folder", "Formats code"),
        # no description: the first body line stands in, heading marks dropped
        ("---\nname: x\n---\n\n# Release notes helper\nmore\n", "x", "Release notes helper"),
        # no frontmatter at all
        ("Just instructions here.\nSecond line.\n", "folder", "Just instructions here."),
        # an empty frontmatter block
        ("---\n---\nBody line\n", "folder", "Body line"),
        # multi-line YAML description folded into one line; a number coerced to text
        ("---\ndescription: |\n  first\n  second\n---\n", "folder", "first second"),
        ("---\nname: v2\ndescription: 42\n---\n", "v2", "42"),
        # CRLF line endings and a BOM
        ("\ufeff---\r\nname: crlf\r\ndescription: ok\r\n---\r\nbody\r\n", "crlf", "ok"),
        # a non-string name falls back to the directory name
        ("---\nname: [1, 2]\ndescription: d\n---\n", "folder", "d"),
        # empty file: still listed, with nothing to describe it
        ("", "folder", ""),
    ],
)
def test_frontmatter_forms(tmp_path: Path, text: str, name: str, description: str) -> None:
    path = write_skill(tmp_path, "folder", text)
    warnings: list[str] = []
    skill = load_skill(path, warnings)
    assert skill is not None
    assert (skill.name, skill.description) == (name, description)
    assert warnings == []


@pytest.mark.parametrize(
    "text",
    [
        "---\nname: bad\ndescription: [unclosed\n---\nbody\n",  # YAML syntax error
        "---\n- just\n- a list\n---\nbody\n",  # not a mapping
        "---\nname: never closed\nbody\n",  # no closing fence
    ],
)
def test_malformed_frontmatter_is_skipped_with_a_warning(dirs: dict[str, Path], text: str) -> None:
    skills_dir = dirs["project"] / ".claude" / "skills"
    write_skill(skills_dir, "broken", text)
    write_skill(skills_dir, "good", skill_text("good", "works"))
    skills = discover_skills(dirs["project"])
    assert [s.name for s in skills] == ["good"]
    assert len(skills.warnings) == 1
    assert "broken" in skills.warnings[0] and "skipped" in skills.warnings[0]


def test_unreadable_and_irrelevant_entries(dirs: dict[str, Path]) -> None:
    skills_dir = dirs["project"] / ".claude" / "skills"
    write_skill(skills_dir, "binary", "x").write_bytes(b"\xff\xfe\x00bad")
    (skills_dir / "no-skill-file").mkdir()
    (skills_dir / "stray.md").write_text("not a folder")
    write_skill(skills_dir, ".hidden", skill_text("hidden", "no"))
    write_skill(
        skills_dir, "user-only", "---\ndescription: d\ndisable-model-invocation: true\n---\n"
    )
    skills = discover_skills(dirs["project"])
    assert list(skills) == []
    assert len(skills.warnings) == 1 and "binary" in skills.warnings[0]


def test_no_skill_directories(dirs: dict[str, Path]) -> None:
    skills = discover_skills(dirs["project"])
    assert list(skills) == [] and skills.warnings == []
    assert skills_listing(skills) == ""


def test_listing_names_each_skill_on_one_line() -> None:
    skills = [
        SkillInfo("pdf", "Fill and merge PDF forms", Path("/s/pdf/SKILL.md"), Path("/s/pdf")),
        SkillInfo("blank", "", Path("/s/blank/SKILL.md"), Path("/s/blank")),
        SkillInfo("long", "word " * 300, Path("/s/long/SKILL.md"), Path("/s/long")),
        SkillInfo("real", "Use it when " + "x" * 700, Path("/s/real/SKILL.md"), Path("/s/real")),
    ]
    text = skills_listing(skills)
    lines = text.splitlines()
    assert "Skill tool" in text
    assert "- pdf: Fill and merge PDF forms" in lines
    assert "- blank: (no description)" in lines
    long_line = next(line for line in lines if line.startswith("- long: "))
    assert len(long_line) <= len("- long: ") + 1024 and long_line.endswith("…")
    # a description within the Agent Skills limit (1,024 characters) is listed whole
    assert "- real: Use it when " + "x" * 700 in lines


def make_skill(root: Path, name: str, body: str) -> SkillInfo:
    path = write_skill(root, name, skill_text(name, f"{name} skill", body))
    return SkillInfo(name, f"{name} skill", path, path.parent)


def test_invoked_skills_newest_first_one_per_name(tmp_path: Path) -> None:
    a, b = make_skill(tmp_path, "a", "A\n"), make_skill(tmp_path, "b", "B\n")
    invoked = InvokedSkills()
    invoked.record(a, "A v1")
    invoked.record(b, "B")
    invoked.record(a, "A v2")
    assert [(s.name, body) for s, body in invoked.recent()] == [("a", "A v2"), ("b", "B")]
    assert len(invoked) == 2
    invoked.clear()
    assert invoked.recent() == []


def test_event_shape(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "a", "A\n")
    event = InvokedSkills.event(skill, at=12.5)
    assert event == {"type": "skill_invoked", "name": "a", "path": str(skill.path), "at": 12.5}


def test_rebuild_rereads_skill_files(tmp_path: Path) -> None:
    a, b = make_skill(tmp_path, "a", "A old\n"), make_skill(tmp_path, "b", "B body\n")
    gone = make_skill(tmp_path, "gone", "G\n")
    outside = make_skill(tmp_path / "elsewhere", "moved", "Moved body\n")
    events = [
        InvokedSkills.event(a, at=1),
        {"type": "compaction", "trigger": "auto"},  # other events are ignored
        {"type": "event", "event": InvokedSkills.event(b, at=2)},  # a whole record also works
        InvokedSkills.event(gone, at=3),
        InvokedSkills.event(outside, at=4),  # not discovered, but its file is still there
        InvokedSkills.event(a, at=5),
        {"type": "skill_invoked", "name": 3},  # junk
        "not even a dict",
    ]
    a.path.write_text(skill_text("a", "a skill", "A new\n"), encoding="utf-8")
    gone.path.unlink()

    invoked = InvokedSkills.rebuild(events, [a, b, gone])  # type: ignore[list-item]

    assert [(s.name, body) for s, body in invoked.recent()] == [
        ("a", "A new"),
        ("moved", "Moved body"),
        ("b", "B body"),
    ]
    assert invoked.recent()[0][0] is a


def test_rebuild_finds_a_skill_by_name_when_its_old_path_is_gone(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "a", "Now here\n")
    event = {"type": "skill_invoked", "name": "a", "path": str(tmp_path / "old" / "SKILL.md")}
    invoked = InvokedSkills.rebuild([event], [skill])
    assert [(s.path, body) for s, body in invoked.recent()] == [(skill.path, "Now here")]
