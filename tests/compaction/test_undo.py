"""Undo snapshots: finding what a compaction put in place, from memory and from a transcript."""

from __future__ import annotations

from agent.core.messages import Message, user_text
from compaction.undo import UNDO_IN_MEMORY, Snapshot, UndoHistory, snapshots_from_transcript


def reply(text: str) -> Message:
    return Message("assistant", [{"type": "text", "text": text}])


def test_end_is_found_by_uuid_even_after_the_head_changed() -> None:
    summary, attachment = (
        user_text("summary", kind="summary"),
        user_text("files", kind="attachment"),
    )
    later = [user_text("next"), reply("ok")]
    snapshot = Snapshot([user_text("old")], attachment.uuid, 2)
    assert snapshot.end_in([summary, attachment, *later]) == 2
    marker = user_text("[dropped]", kind="meta")
    assert snapshot.end_in([marker, summary, attachment, *later]) == 3
    assert snapshot.end_in([marker, *later]) is None  # gone: nothing can be undone safely


def test_without_a_uuid_the_count_is_used() -> None:
    snapshot = Snapshot([user_text("old")], None, 2)
    assert snapshot.end_in([user_text("a"), user_text("b"), user_text("c")]) == 2
    assert snapshot.end_in([user_text("a")]) is None


def test_snapshots_from_a_transcript_name_the_last_message_put_in_place() -> None:
    first = [user_text("one"), reply("1")]
    after_first = [user_text("s1", kind="summary"), user_text("a1", kind="attachment")]
    second = [*after_first, user_text("two"), reply("2")]
    live = [user_text("s2", kind="summary"), user_text("three"), reply("3")]
    boundaries = [
        {"replaced_count": 2},  # an older record: no last_uuid
        {"replaced_count": 1, "last_uuid": "named"},
    ]
    snapshots = snapshots_from_transcript([first, second], boundaries, live)
    assert [s.last_uuid for s in snapshots] == [after_first[1].uuid, "named"]
    assert snapshots[0].messages == first and snapshots[1].messages == second
    # The last boundary of an older transcript without the live conversation: the count.
    (legacy,) = snapshots_from_transcript([first], [{"replaced_count": 1}])
    assert legacy.last_uuid is None and legacy.replaced_count == 1
    (resumed,) = snapshots_from_transcript([first], [{"replaced_count": 1}], live)
    assert resumed.last_uuid == live[0].uuid
    assert snapshots_from_transcript([first], [{"replaced_count": 0}]) == []


def test_history_keeps_the_last_snapshots_in_memory_and_reads_back_the_rest() -> None:
    older = [Snapshot([user_text(f"before {n}")], f"u{n}", 1) for n in range(5)]
    loads: list[int] = []

    def load() -> list[Snapshot]:
        loads.append(1)
        return older[:3]  # what the transcript still has in effect

    history = UndoHistory(load=load)
    for snapshot in older:
        history.push(snapshot)
    assert history.snapshots == older[-UNDO_IN_MEMORY:] and history.spilled == 5 - UNDO_IN_MEMORY
    assert len(history) == 5 and history
    for expected in reversed(older[-UNDO_IN_MEMORY:]):
        assert history.last() is expected
        history.pop()
    assert loads == []  # memory had them
    assert history.last() is older[2] and loads == [1]
    assert history.snapshots == older[3 - UNDO_IN_MEMORY : 3]
    assert history.spilled == 3 - UNDO_IN_MEMORY


def test_history_whose_transcript_gives_nothing_back_has_nothing_to_undo() -> None:
    history = UndoHistory(load=list)
    for n in range(UNDO_IN_MEMORY + 1):
        history.push(Snapshot([user_text(f"before {n}")], f"u{n}", 1))
    for _ in range(UNDO_IN_MEMORY):
        history.pop()
    assert history and history.last() is None and not history
