"""The conversation's owner: each change applied in memory, and recorded so the transcript replays to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.compaction_record import CompactionRecord
from agent.core.conversation import Compacted, Conversation, Undone
from agent.core.invariants import InvariantError
from agent.core.messages import INTERRUPTED_TOOL_RESULT, Message, tool_result_block, user_text
from agent.sessions.session import Session, load_session
from agent.sessions.transcript import read_records


def use(tool_id: str) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": "/x"}}


def response(*blocks: dict, api_id: str = "msg_1") -> Message:
    return Message("assistant", list(blocks), kind="response", api_id=api_id)


def answer(*ids: str) -> Message:
    return Message("user", [tool_result_block(i, f"out {i}") for i in ids], kind="tool_result")


def recorded(tmp_path: Path, messages: list[Message] | None = None) -> Conversation:
    session = Session.create(tmp_path / "cwd", "claude-sonnet-5-5", config_dir=tmp_path / "cfg")
    return Conversation(messages or [], session)


def replayed(conversation: Conversation) -> list[str]:
    """The uuids the transcript replays to, after closing it."""
    session = conversation.transcript
    assert isinstance(session, Session)
    session.close()
    return [m.uuid for m in load_session(session.path).messages]


def uuids(conversation: Conversation) -> list[str]:
    return [m.uuid for m in conversation.messages]


def test_appended_messages_are_escaped_and_recorded(tmp_path: Path) -> None:
    conversation = recorded(tmp_path)
    view = conversation.messages
    conversation.append(user_text("bad \udcff byte"))
    conversation.append(response({"type": "text", "text": "ok"}))
    assert conversation.messages is view and len(view) == 2  # one list, for the session's life
    assert view[0].text() == "bad \\xff byte"
    assert replayed(conversation) == uuids(conversation)


def test_dangling_calls_get_a_new_recorded_answer(tmp_path: Path) -> None:
    conversation = recorded(tmp_path)
    conversation.append(user_text("go"))
    conversation.append(response(use("a"), use("b")))
    added = conversation.close_dangling()
    assert added is conversation.messages[-1]
    assert [b["tool_use_id"] for b in added.tool_results()] == ["a", "b"]
    assert added.tool_results()[0]["content"] == INTERRUPTED_TOOL_RESULT
    assert conversation.close_dangling() is None  # nothing dangles now
    assert replayed(conversation) == uuids(conversation)


def test_a_partial_answer_is_completed_in_place_results_first() -> None:
    follower = Message("user", [*answer("a").content, {"type": "text", "text": "meanwhile"}])
    conversation = Conversation([user_text("go"), response(use("a"), use("b")), follower])
    changed = conversation.close_dangling("stopped")
    assert changed is conversation.messages[2] and changed.uuid == follower.uuid
    assert [b.get("tool_use_id") for b in changed.content] == ["b", "a", None]
    assert len(follower.content) == 2  # replaced, never edited in place


def test_a_compaction_is_recorded_as_a_boundary_and_undone_with_what_followed(
    tmp_path: Path,
) -> None:
    original = [user_text("read it"), response({"type": "text", "text": "read"}, api_id="m1")]
    conversation = recorded(tmp_path, original)
    for message in original:
        conversation.transcript.append_message(message)  # type: ignore[union-attr]
    summary = user_text("<summary>s</summary>", kind="summary")
    record = CompactionRecord("manual", "full", 900, 100, 0.5, 2, 0, {}, 0, 10, "s")
    previous = conversation.replace(Compacted([summary], record))
    assert [m.uuid for m in previous] == [m.uuid for m in original]
    assert uuids(conversation) == [summary.uuid]
    later = [user_text("and then?"), response({"type": "text", "text": "this"}, api_id="m2")]
    for message in later:
        conversation.append(message)
    conversation.undo(Undone(previous, later))
    assert uuids(conversation) == [m.uuid for m in [*original, *later]]
    assert replayed(conversation) == uuids(conversation)
    (boundary,) = [
        r
        for r in read_records(conversation.transcript.path).records  # type: ignore[union-attr]
        if r["type"] == "compact_boundary"
    ]
    assert boundary == {"type": "compact_boundary", **record.to_json()}


def test_clearing_and_dropping_change_memory_only(tmp_path: Path) -> None:
    start = [
        user_text("go"),
        response(use("a")),
        answer("a"),
        response({"type": "text", "text": "x"}),
    ]
    conversation = recorded(tmp_path, start)
    for message in start:
        conversation.transcript.append_message(message)  # type: ignore[union-attr]
    cleared = [*start[:2], answer("a"), start[3]]
    conversation.clear_results(cleared)
    assert conversation.messages[2] is cleared[2]
    conversation.drop_oldest(start[3:])
    assert uuids(conversation) == [start[3].uuid]
    assert replayed(conversation) == [m.uuid for m in start]  # the transcript keeps everything


def test_for_prompt_repairs_in_production_and_raises_in_tests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = [user_text("go"), response(use("a")), user_text("no answer")]
    with pytest.raises(InvariantError):
        Conversation(broken).for_prompt()
    monkeypatch.delenv("CCX_STRICT_INVARIANTS")
    conversation = Conversation(broken)
    sent = conversation.for_prompt()
    assert sent is conversation.messages
    assert sent[2].tool_results()[0]["tool_use_id"] == "a"


def test_escape_text_heals_what_got_in_without_append() -> None:
    conversation = Conversation([user_text("fine"), user_text("a\udcffb")])
    assert conversation.escape_text() == 1
    assert conversation.messages[1].text() == "a\\xffb"
    assert conversation.escape_text() == 0


def test_restart_empties_the_conversation_into_a_new_transcript(tmp_path: Path) -> None:
    conversation = recorded(tmp_path, [user_text("old")])
    old = conversation.transcript
    fresh = Session.create(tmp_path / "cwd", "claude-sonnet-5-5", config_dir=tmp_path / "cfg")
    conversation.restart(fresh)
    assert len(conversation) == 0 and conversation.transcript is fresh is not old
    conversation.append(user_text("new"))
    assert replayed(conversation) == uuids(conversation)
