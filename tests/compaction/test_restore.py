"""Which files a compaction re-reads: tool paths resolved as the session resolves them."""

from __future__ import annotations

import os
from pathlib import Path

from agent.core.messages import Message, tool_result_block
from compaction.markers import CLEARED_PREFIX
from compaction.restore import read_file_now, restore_files, visible_read_paths
from compaction.services import CompactionServices
from tools.file_state import FileState, FileStateCache, normalize_path


def read_round(use_id: str, path: str, output: str) -> list[Message]:
    use = {"type": "tool_use", "id": use_id, "name": "Read", "input": {"file_path": path}}
    return [
        Message("assistant", [use], api_id=f"msg_{use_id}"),
        Message("user", [tool_result_block(use_id, output)], kind="tool_result"),
    ]


def test_relative_read_paths_resolve_against_the_session_directory(tmp_path: Path) -> None:
    session_dir = tmp_path / "project"
    assert Path.cwd() != session_dir

    def resolve(path: str) -> str:
        return normalize_path(session_dir / path)

    messages = [
        *read_round("t1", "a.py", "1\tA = 1"),
        *read_round("t2", "gone.py", f"{CLEARED_PREFIX}: earlier Read of gone.py.]"),
    ]
    assert visible_read_paths(messages, resolve) == {str(session_dir / "a.py")}

    cache = FileStateCache()
    for index, name in enumerate(("a.py", "b.py", "gone.py", "CLAUDE.md")):
        cache.set(session_dir / name, FileState("x", mtime=1.0, read_at=float(index)))
    services = CompactionServices(
        file_state=cache,
        resolve_path=resolve,
        excluded_paths=lambda: {str(session_dir / "CLAUDE.md")},
    )
    # a.py is still visible in what is kept; the cleared read of gone.py is not.
    assert services.files_to_restore(messages) == [
        str(session_dir / "gone.py"),
        str(session_dir / "b.py"),
    ]
    assert len(services.files_to_restore([])) == 3


def test_restored_files_carry_the_text_and_mtime_they_were_rendered_from(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("one\ntwo\n")
    os.utime(target, (100.0, 100.0))
    (item,) = restore_files([str(target)], read_file_now)
    assert item.content == "one\ntwo\n" and item.mtime == 100.0
    assert "1\tone\n2\ttwo" in item.text
    assert read_file_now(str(tmp_path / "missing.py")) is None


def skill_round(use_id: str, name: str, output: str, is_error: bool = False) -> list[Message]:
    use = {"type": "tool_use", "id": use_id, "name": "Skill", "input": {"skill": name}}
    return [
        Message("assistant", [use], api_id=f"msg_{use_id}"),
        Message("user", [tool_result_block(use_id, output, is_error)], kind="tool_result"),
    ]


def test_a_skill_whose_text_the_kept_messages_show_is_not_restored_again() -> None:
    from compaction.restore import visible_skill_names

    kept = [
        *skill_round("s1", "/Deploy", "The deploy skill is now loaded ..."),
        *skill_round("s2", "lint", f"{CLEARED_PREFIX} old result]"),
        *skill_round("s3", "nope", "Unknown skill", is_error=True),
    ]
    assert visible_skill_names(kept) == {"deploy"}
