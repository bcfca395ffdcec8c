from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot
from tools.skill import SkillInfo, SkillTool, read_skill_body, split_frontmatter


def test_schema_snapshot() -> None:
    assert_schema_matches_snapshot(SkillTool)


def test_api_shape() -> None:
    api = SkillTool([]).to_api()
    assert api["name"] == "Skill"
    assert len(api["description"]) > 200
    assert api["input_schema"]["required"] == ["skill"]
    assert SkillTool.is_mutating is False


@pytest.fixture
def skill(tmp_path: Path) -> SkillInfo:
    folder = tmp_path / "skills" / "release"
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text(
        "---\nname: release\ndescription: Cut a release\n---\n"
        "# Release\n\nRun scripts/bump.sh with the version: $ARGUMENTS\n",
        encoding="utf-8",
    )
    return SkillInfo("release", "Cut a release", path, folder)


async def test_loads_body_with_base_directory(call: Call, skill: SkillInfo) -> None:
    seen: list[tuple[SkillInfo, str]] = []
    tool = SkillTool([skill], on_invoke=lambda s, body: seen.append((s, body)))

    result = await call(tool, skill="release")

    assert not result.is_error
    text = result.output_text()
    assert text.splitlines()[0] == f"Base directory for this skill: {skill.base_dir}"
    assert "Arguments:" not in text
    assert text.endswith("# Release\n\nRun scripts/bump.sh with the version: ")
    assert "description: Cut a release" not in text  # the frontmatter stays out
    assert result.display == "Loaded skill release"
    assert seen == [(skill, "# Release\n\nRun scripts/bump.sh with the version: ")]


async def test_args_are_shown_and_substituted(call: Call, skill: SkillInfo) -> None:
    seen: list[str] = []
    tool = SkillTool([skill], on_invoke=lambda s, body: seen.append(body))
    result = await call(tool, skill="/release", args=" 2.1.0 ")
    text = result.output_text()
    assert "Arguments: 2.1.0" in text.splitlines()[:3]
    assert text.endswith("with the version: 2.1.0")
    assert seen[0].endswith("with the version: 2.1.0")


async def test_reads_the_file_at_call_time(call: Call, skill: SkillInfo) -> None:
    tool = SkillTool([skill])
    skill.path.write_text("---\nname: release\n---\nChanged since discovery\n", encoding="utf-8")
    result = await call(tool, skill="release")
    assert result.output_text().endswith("\n\nChanged since discovery")


async def test_unknown_skill_lists_available(call: Call, skill: SkillInfo) -> None:
    other = SkillInfo("audit", "", skill.path, skill.base_dir)
    invoked: list[str] = []
    tool = SkillTool([skill, other], on_invoke=lambda s, body: invoked.append(s.name))
    result = await call(tool, skill="deploy")
    assert result.is_error
    assert result.output_text() == "Unknown skill 'deploy'. Available skills: audit, release."
    assert invoked == []


async def test_unknown_skill_with_none_available(call: Call) -> None:
    result = await call(SkillTool([]), skill="x")
    assert result.is_error and "no skills are available" in result.output_text()


async def test_case_insensitive_fallback_and_missing_file(call: Call, skill: SkillInfo) -> None:
    tool = SkillTool([skill])
    assert not (await call(tool, skill="Release")).is_error
    skill.path.unlink()
    result = await call(tool, skill="release")
    assert result.is_error and "Could not read the skill 'release'" in result.output_text()


def test_split_frontmatter() -> None:
    assert split_frontmatter("no front\n") == (None, "no front\n")
    assert split_frontmatter("---\na: 1\n---\nbody") == ("a: 1\n", "body")
    assert split_frontmatter("---\na: 1\n...\nbody") == ("a: 1\n", "body")
    # a horizontal rule later in the body is not frontmatter
    assert split_frontmatter("text\n---\nmore") == (None, "text\n---\nmore")


def test_unterminated_frontmatter_body_is_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text("---\nname: x\nbody\n", encoding="utf-8")
    assert read_skill_body(path) == "---\nname: x\nbody"


@pytest.mark.parametrize("body", ["", "   \n\t\n", "$ARGUMENTS"])
async def test_a_skill_without_words_says_so(call: Call, tmp_path: Path, body: str) -> None:
    folder = tmp_path / "skills" / "hollow"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: hollow\ndescription: x\n---\n{body}")
    tool = SkillTool([SkillInfo("hollow", "x", folder / "SKILL.md", folder)])
    result = await call(tool, skill="hollow")
    assert result.output_text().endswith("\n\n(this skill's file has no body)")
