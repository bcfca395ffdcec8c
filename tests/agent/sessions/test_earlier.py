"""The compacted past read back on demand, and the search over the whole transcript."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agent.core.messages import Message, user_text
from agent.sessions.earlier import earlier_segment, search_transcript
from agent.sessions.session import Session
from tests.agent.sessions.helpers import assistant

pytestmark = pytest.mark.usefixtures("config")


def compacted(cwd: Path, segments: int = 3, undo_last: bool = False) -> Session:
    """``segments`` compactions of two prompts each, each keeping the last prompt and reply."""
    session = Session.create(cwd, "claude-sonnet-5-5")
    live: list[Message] = []
    for segment in range(segments + 1):
        for turn in range(2):
            pair = [
                user_text(f"prompt {segment}.{turn}"),
                assistant({"type": "text", "text": f"reply {segment}.{turn} with Ünïcode"}),
            ]
            for message in pair:
                session.append_message(message)
            live += pair
        if segment == segments:
            break
        summary = Message("user", [{"type": "text", "text": f"summary {segment}"}], kind="summary")
        session.append_record(
            {
                "type": "compact_boundary",
                "messages_summarized": len(live) - 2,
                "messages_kept": 2,
                "summary": f"summary {segment}",
                "replaced_count": 3,
                "at": time.time(),
            }
        )
        for message in (summary, *live[-2:]):
            session.append_message(message)
        live = [summary, *live[-2:]]
    if undo_last:
        session.append_record({"type": "compact_undo", "at": time.time()})
    session.close()
    return session


def texts(messages: list[Message]) -> list[str]:
    return [m.text() for m in messages]


def test_segments_come_back_newest_first_without_what_was_kept(cwd: Path) -> None:
    session = compacted(cwd)
    newest = earlier_segment(session.path)
    assert newest is not None and newest.compaction["summary"] == "summary 2"
    # it opens with the summary of the compaction before it; its kept round follows the marker
    assert texts(newest.messages) == [
        "summary 1",
        "prompt 1.1",
        "reply 1.1 with Ünïcode",
        "prompt 2.0",
        "reply 2.0 with Ünïcode",
    ]
    middle = earlier_segment(session.path, newest.before)
    assert middle is not None and middle.compaction["summary"] == "summary 1"
    first = earlier_segment(session.path, middle.before)
    assert first is not None and first.before is None  # nothing before the first
    assert texts(first.messages) == ["prompt 0.0", "reply 0.0 with Ünïcode"]


def test_an_undone_compaction_is_no_segment(cwd: Path) -> None:
    session = compacted(cwd, undo_last=True)
    newest = earlier_segment(session.path)
    assert newest is not None and newest.compaction["summary"] == "summary 1"


def test_a_session_without_compactions_has_no_earlier_segment(cwd: Path) -> None:
    session = compacted(cwd, segments=0)
    assert earlier_segment(session.path) is None


def test_search_finds_each_message_once_and_says_how_long_ago(cwd: Path) -> None:
    session = compacted(cwd)
    found, total = search_transcript(session.path, "PROMPT 0.1")  # kept by compaction 0
    assert total == 1 and found[0].compactions_since == 2  # written last after compaction 0
    found, total = search_transcript(session.path, "prompt 0.0")
    assert (total, found[0].compactions_since, found[0].kind) == (1, 3, "prompt")
    found, total = search_transcript(session.path, "prompt 3.1")
    assert found[0].compactions_since == 0  # the conversation now
    found, total = search_transcript(session.path, "ünïcode")  # not bytewise: every line parsed
    assert total == 8
    found, total = search_transcript(session.path, "reply", limit=3)
    assert total == 8 and [f.snippet for f in found][-1].startswith("reply 3.1")
    assert len(found) == 3
    assert search_transcript(session.path, '"quoted"') == ([], 0)
    assert search_transcript(session.path, "") == ([], 0)
