"""FileCheckpoints: files put back as they were when a prompt was sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.file_checkpoints import FileCheckpoints


def test_rewind_restores_the_earliest_state_from_that_prompt_on(tmp_path: Path) -> None:
    kept, new = tmp_path / "kept.txt", tmp_path / "new.txt"
    kept.write_text("original\n")
    checkpoints = FileCheckpoints()
    checkpoints.before_write("p1", kept)
    kept.write_text("edited in p1\n")
    checkpoints.before_write("p2", kept)
    checkpoints.before_write("p2", new)
    kept.write_text("edited in p2\n")
    new.write_text("made in p2\n")
    checkpoints.before_write("p2", kept)  # a second edit in the same prompt keeps the first state
    kept.write_text("edited again\n")

    # what a rewind would put back, said before it does (the rewind picker names them)
    assert checkpoints.changed_since("p2", ["p1", "p2"]) == sorted([str(kept), str(new)])
    assert checkpoints.changed_since("p1", ["p1", "p2"]) == sorted([str(kept), str(new)])
    assert checkpoints.changed_since("p3", ["p1", "p2"]) == []
    assert checkpoints.rewind("p2", ["p1", "p2"]) == sorted([str(kept), str(new)])
    assert kept.read_text() == "edited in p1\n" and not new.exists()
    assert checkpoints.rewind("p1", ["p1", "p2"]) == [str(kept)]
    assert kept.read_text() == "original\n"


def test_rewind_to_a_prompt_the_session_does_not_have_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no user message"):
        FileCheckpoints().rewind("nope", ["p1"])
