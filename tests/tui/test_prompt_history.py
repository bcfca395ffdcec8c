"""The project's prompt file: what loads from it, and a broken line or file costs nothing else."""

from __future__ import annotations

from pathlib import Path

from tui.prompt_history import KEPT, add_prompt, load_prompts


def test_prompts_round_trip_and_bad_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "project" / "prompts.history"
    assert load_prompts(path) == []  # no file yet
    add_prompt(path, "first\nwith a second line")
    add_prompt(path, "héllo")
    with path.open("a") as file:
        file.write('not json\n[1, 2]\n{"text": 3}\n{"text": "  "}\n')
    add_prompt(path, "héllo")  # the same twice in a row: once
    add_prompt(path, "last")
    assert load_prompts(path) == ["first\nwith a second line", "héllo", "last"]


def test_only_the_newest_are_loaded_and_an_unwritable_place_is_harmless(tmp_path: Path) -> None:
    path = tmp_path / "prompts.history"
    path.write_text("".join(f'{{"text": "p{i}"}}\n' for i in range(KEPT + 5)))
    loaded = load_prompts(path)
    assert len(loaded) == KEPT and loaded[0] == "p5" and loaded[-1] == f"p{KEPT + 4}"
    blocker = tmp_path / "file"
    blocker.write_text("")
    add_prompt(blocker / "prompts.history", "lost")  # its folder is a file: nothing raised
    assert load_prompts(blocker / "prompts.history") == []
