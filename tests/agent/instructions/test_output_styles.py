"""Output styles: the built-in ones, style files, and the system prompt's section."""

from __future__ import annotations

from pathlib import Path

from agent.instructions.output_styles import discover_output_styles, style_section


def test_built_ins_files_and_precedence(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = repo / ".claude" / "output-styles"
    project.mkdir(parents=True)
    (project / "pirate.md").write_text("---\nname: Pirate\ndescription: Arr\n---\nTalk like one.")
    (project / "explanatory.md").write_text("---\nname: explanatory\n---\nA built-in wins.")
    (project / "bad.md").write_bytes(b"\xff")
    user = home / ".claude" / "output-styles"
    user.mkdir(parents=True)
    (user / "terse.md").write_text("Few words.")  # no frontmatter: the file's name

    styles = discover_output_styles(repo, home=home, config_dir=home / ".ccx")

    assert styles.names == ["default", "Explanatory", "Learning", "Pirate", "terse"]
    assert styles.find("PIRATE").source == "project"  # type: ignore[union-attr]
    assert styles.find("terse").instructions == "Few words."  # type: ignore[union-attr]
    assert styles.find("nope") is None and styles.find(None) is None
    assert any("bad.md is not UTF-8" in w for w in styles.warnings)


def test_the_section_for_the_prompt(repo: Path, tmp_path: Path) -> None:
    styles = discover_output_styles(repo, home=tmp_path, config_dir=tmp_path / ".ccx")
    assert style_section(styles.find("default")) == ""
    section = style_section(styles.find("learning"))
    assert section.startswith("# Output Style: Learning\n") and "TODO(human)" in section
