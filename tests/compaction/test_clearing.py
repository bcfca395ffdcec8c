"""Saving cleared outputs: whole files or none, and a marker only for a file that was written."""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Iterator
from pathlib import Path

from agent.core.messages import Message, tool_result_block, user_text
from agent.sessions.session import Session
from compaction.clearing import Clearing
from compaction.result_index import is_cleared
from compaction.services import CompactionServices
from tools.file_state import FileStateCache

BIG = "line of build output\n" * 600  # about 3,000 tokens: over the size that is saved


def bash_rounds(count: int) -> list[Message]:
    messages = [user_text("build it")]
    for index in range(count):
        use_id = f"toolu_{index:03d}"
        use = {
            "type": "tool_use",
            "id": use_id,
            "name": "Bash",
            "input": {"command": f"make {index}"},
        }
        messages.append(Message("assistant", [use], kind="response", api_id=f"msg_{index}"))
        messages.append(Message("user", [tool_result_block(use_id, BIG)], kind="tool_result"))
    return messages


def clear_cold(session: Session, messages: list[Message]) -> tuple[list[Message], list[str]]:
    """Clear as after a long pause (the cache has expired, so everything old goes)."""
    clearing = Clearing(CompactionServices(FileStateCache(), session=session))
    plan = clearing.plan(
        messages, now=100_000.0, last_response_at=0.0, used_tokens=20_000, auto_threshold=None
    )
    outcome = clearing.apply(messages, plan)
    return outcome.messages, outcome.saved_paths


@contextlib.contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """Writes past ``limit`` bytes fail with EFBIG, as on a full disk (SIGXFSZ is ignored)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def results(messages: list[Message]) -> list[dict]:
    return [block for m in messages for block in m.tool_results()]


def test_large_cleared_outputs_are_saved_whole_and_the_marker_names_them(tmp_path: Path) -> None:
    session = Session.create(tmp_path, "claude-sonnet-5-5", config_dir=tmp_path / "config")
    cleared, saved = clear_cold(session, bash_rounds(6))
    assert len(saved) == 3  # the three latest results stay
    for path in saved:
        assert Path(path).read_text() == BIG
    markers = [b["content"] for b in results(cleared) if is_cleared(b)]
    assert [path in marker for path, marker in zip(saved, markers, strict=True)] == [True] * 3


def test_an_output_that_cannot_be_saved_is_kept_and_leaves_no_file(tmp_path: Path) -> None:
    session = Session.create(tmp_path, "claude-sonnet-5-5", config_dir=tmp_path / "config")
    messages = bash_rounds(6)
    with file_size_limit(1_000):
        cleared, saved = clear_cold(session, messages)
    assert saved == []
    assert not any(is_cleared(b) for b in results(cleared)), "no marker without its file"
    assert [b["content"] for b in results(cleared)] == [BIG] * 6
    folder = session.folder / "cleared"
    assert not folder.exists() or os.listdir(folder) == [], "no empty or partial file left"
