"""A Claude Code transcript is told from a ccx session before -r writes anything to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.sessions.foreign import claude_code_transcript, foreign_session_reason
from agent.sessions.session import Session, SessionError

SID = "7e1479dd-9872-4c1b-a746-d092a835210e"


def claude_code_file(path: Path) -> Path:
    records = [
        {"type": "queue-operation", "operation": "enqueue", "sessionId": SID, "content": "hi"},
        {"parentUuid": None, "isSidechain": False, "type": "user", "sessionId": SID,
         "message": {"role": "user", "content": "hi"}, "uuid": "08f36dd7"},
    ]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_claude_code_transcript_is_foreign_and_a_ccx_one_is_not(tmp_path: Path) -> None:
    foreign = claude_code_file(tmp_path / f"{SID}.jsonl")
    assert "Claude Code transcript" in (foreign_session_reason(foreign) or "")
    ours = tmp_path / "ours.jsonl"
    ours.write_text(json.dumps({"type": "session", "session_id": "x"}) + "\n")
    assert foreign_session_reason(ours) is None
    assert foreign_session_reason(tmp_path / "missing.jsonl") is None  # the loader says so


def test_resuming_a_claude_code_file_is_refused_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    foreign = claude_code_file(tmp_path / f"{SID}.jsonl")
    before = foreign.read_bytes()
    with pytest.raises(SessionError, match="Claude Code transcript"):
        Session.open_existing(foreign, tmp_path, config_dir=tmp_path / "cfg")
    assert foreign.read_bytes() == before


def test_a_claude_code_id_is_found_under_its_own_folder(tmp_path: Path) -> None:
    path = claude_code_file(tmp_path / ".claude" / "projects" / "-repo" / f"{SID}.jsonl")
    assert claude_code_transcript(SID, home=tmp_path) == path
    assert claude_code_transcript("other", home=tmp_path) is None
    assert claude_code_transcript("../x", home=tmp_path) is None
