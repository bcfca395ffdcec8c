"""Sessions and transcripts: writing, loading, repairing, finding, resuming, file state."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from agent.core.messages import INTERRUPTED_TOOL_RESULT, Message, tool_result_block, user_text
from agent.sessions.session import (
    Session,
    SessionError,
    find_session,
    latest_session_path,
    list_sessions,
    load_session,
    project_dir,
    rebuild_file_state,
)
from tests.agent.sessions.helpers import (
    assistant,
    conversation,
    records,
    results,
    same,
    tool_rounds_session,
    tool_use,
    write_session,
)
from tools.file_state import FileState, FileStateCache

pytestmark = pytest.mark.usefixtures("config")

# -- writing and reading -------------------------------------------------------------------


def test_location_follows_cwd_with_non_alphanumerics_as_dashes(cwd: Path, config: Path) -> None:
    session = Session.create(cwd, "claude-sonnet-5-5")
    expected_dir = config / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))
    assert project_dir(cwd) == expected_dir
    assert session.path == expected_dir / f"{session.id}.jsonl"
    assert session.folder == expected_dir / session.id


def test_round_trip_header_first_and_one_record_per_line(cwd: Path) -> None:
    messages = conversation()
    session = Session.create(cwd, "claude-sonnet-5-5")
    assert not session.path.exists()  # nothing to resume until something is said
    for message in messages:
        session.append_message(message)
        # flushed as written: the line is on disk before close()
        assert session.path.read_bytes().endswith(b"\n")
    session.close()

    lines = records(session.path)
    assert lines[0]["type"] == "session"
    assert lines[0]["session_id"] == session.id
    assert lines[0]["cwd"] == str(cwd)
    assert lines[0]["model"] == "claude-sonnet-5-5"
    assert lines[0]["resumed_from"] is None
    assert [r["type"] for r in lines[1:]] == ["message"] * 4

    loaded = load_session(session.path)
    assert same(loaded.messages, messages)
    assert loaded.repairs == [] and loaded.invalid_lines == 0
    assert loaded.session_id == session.id


def test_torn_last_line_is_skipped_and_the_next_write_starts_a_new_line(cwd: Path) -> None:
    messages = conversation()
    session = write_session(cwd, messages)
    with open(session.path, "ab") as handle:
        handle.write(b'{"type":"message","uuid":"x","message":{"role":"us')

    loaded = load_session(session.path)
    assert same(loaded.messages, messages)
    assert loaded.torn_tail and loaded.invalid_lines == 1

    resumed, _ = Session.open_existing(session.path, cwd)
    resumed.append_message(user_text("next"))
    resumed.close()
    again = load_session(session.path)
    assert [m.text() for m in again.messages][-1] == "next"
    assert len(again.messages) == 5
    assert not again.torn_tail and again.invalid_lines == 1


def test_garbage_line_in_the_middle_is_skipped(cwd: Path) -> None:
    session = write_session(cwd, conversation())
    lines = session.path.read_bytes().splitlines(keepends=True)
    lines.insert(3, b"this is not json\n")
    lines.insert(4, b'{"type":"message","message":{"role":"robot","content":[]}}\n')
    lines.insert(5, b"[1, 2]\n")
    session.path.write_bytes(b"".join(lines))

    loaded = load_session(session.path)
    assert [m.role for m in loaded.messages] == ["user", "assistant", "user", "assistant"]
    assert loaded.invalid_lines == 3
    assert not loaded.torn_tail


def test_tool_blocks_without_their_ids_are_invalid_lines(cwd: Path) -> None:
    """One hand-edited line must not make every later request fail on a missing id."""
    messages = [
        *conversation(),
        user_text("and the tests?"),
        assistant({"type": "tool_use", "name": "Read", "input": {}}),  # no id
        Message(role="user", content=[{"type": "tool_result", "content": "x"}], kind="tool_result"),
        assistant({"type": "text", "text": "Fine."}),
    ]
    session = write_session(cwd, messages)
    loaded = load_session(session.path)
    assert loaded.invalid_lines == 2
    assert [m.text() for m in loaded.messages][-2:] == ["and the tests?", "Fine."]
    for message in loaded.messages:
        message.to_api()
        for block in message.content:
            assert block.get("type") != "tool_use" or isinstance(block["id"], str)
            assert block.get("type") != "tool_result" or isinstance(block["tool_use_id"], str)


def test_the_first_failed_write_is_reported_once_and_nothing_is_dropped(cwd: Path) -> None:
    session = Session.create(cwd, "claude-sonnet-5-5")
    reported: list[str] = []
    session.on_write_error = reported.append
    folder = session.path.parent
    folder.parent.mkdir(parents=True)
    folder.write_text("a file where the session folder should be")
    session.append_message(user_text("one"))
    session.append_message(user_text("two"))
    assert reported == [f"{session.path}: File exists"]
    assert session.write_error is not None and session.first_write_error is not None

    folder.unlink()  # the cause is fixed: what was kept goes out, in order
    session.append_message(user_text("three"))
    session.close()
    assert session.write_error is None and reported == [reported[0]]
    kinds = [r["type"] for r in records(session.path)]
    assert kinds == ["session", "message", "message", "message"]
    assert [m.text() for m in load_session(session.path).messages] == ["one", "two", "three"]


def test_missing_file_raises_session_error(tmp_path: Path, cwd: Path) -> None:
    with pytest.raises(SessionError):
        load_session(tmp_path / "nope.jsonl")
    with pytest.raises(SessionError):
        Session.open_existing("0000-no-such-session", cwd)


# -- repair --------------------------------------------------------------------------------


def test_dangling_tool_use_is_closed_and_the_repair_persists(cwd: Path) -> None:
    messages = [*conversation(), assistant(tool_use("t2", "Bash"), tool_use("t3"))]
    session = write_session(cwd, messages)

    first = load_session(session.path)
    assert len(first.repairs) == 1 and "Bash" in first.repairs[0]
    closing = first.messages[-1]
    assert closing.role == "user" and closing.kind == "tool_result"
    assert closing.content == [
        tool_result_block("t2", INTERRUPTED_TOOL_RESULT, is_error=True),
        tool_result_block("t3", INTERRUPTED_TOOL_RESULT, is_error=True),
    ]

    resumed, loaded = Session.open_existing(session.id, cwd)
    resumed.close()
    assert same(loaded.messages, first.messages)
    assert [r["type"] for r in records(session.path)][-2:] == ["resume", "repair"]

    second = load_session(session.path)
    assert second.repairs == []
    assert same(second.messages, first.messages)


def test_partly_answered_tool_uses_get_results_first_in_the_following_message(
    cwd: Path,
) -> None:
    follower = Message(
        role="user",
        content=[tool_result_block("a", "ok"), {"type": "text", "text": "stop"}],
        kind="tool_result",
    )
    messages = [user_text("go"), assistant(tool_use("a"), tool_use("b")), follower]
    session = write_session(cwd, messages)

    resumed, loaded = Session.open_existing(session.path, cwd)
    resumed.close()
    fixed = loaded.messages[2]
    assert fixed.uuid == follower.uuid
    assert [b.get("tool_use_id") for b in fixed.content] == ["b", "a", None]
    assert fixed.content[0]["is_error"] is True
    again = load_session(session.path)
    assert again.repairs == [] and same(again.messages, loaded.messages)


def test_orphan_tool_results_are_dropped_and_empty_messages_with_them(cwd: Path) -> None:
    mixed = Message(
        role="user",
        content=[tool_result_block("ghost", "?"), {"type": "text", "text": "hello"}],
    )
    messages = [
        user_text("hi"),
        assistant({"type": "text", "text": "hello"}),
        results("ghost2"),  # only an orphan: the message goes
        mixed,  # orphan dropped, text kept
        assistant(tool_use("t9")),
        results("t9", "t9"),  # the duplicate answer is an orphan too
    ]
    session = write_session(cwd, messages)

    resumed, loaded = Session.open_existing(session.path, cwd)
    resumed.close()
    assert [m.role for m in loaded.messages] == ["user", "assistant", "user", "assistant", "user"]
    assert loaded.messages[2].content == [{"type": "text", "text": "hello"}]
    assert len(loaded.messages[4].content) == 1
    assert len(loaded.repairs) == 3

    again = load_session(session.path)
    assert again.repairs == [] and same(again.messages, loaded.messages)


# -- boundaries and events -----------------------------------------------------------------


def test_live_conversation_starts_after_the_last_boundary(cwd: Path) -> None:
    session = Session.create(cwd, "claude-sonnet-5-5")
    before = conversation()
    for message in before:
        session.append_message(message)
    session.append_record({"type": "compact_boundary", "trigger": "manual", "tokens_before": 9})
    summary = user_text("Summary of the earlier conversation", kind="summary")
    session.append_message(summary)
    session.append_record({"type": "event", "event": {"type": "compaction_finished", "ms": 3}})
    session.close()

    loaded = load_session(session.path)
    assert same(loaded.messages, [summary])
    assert loaded.before_last_boundary is not None
    assert same(loaded.before_last_boundary, before)
    assert loaded.last_boundary is not None and loaded.last_boundary["trigger"] == "manual"
    assert loaded.events == [{"type": "compaction_finished", "ms": 3}]

    with open(session.path, "ab") as handle:
        handle.write(b'{"type":"compact_undo"}\n')
    undone = load_session(session.path)
    assert same(undone.messages, before)
    assert undone.boundaries == [] and undone.segments == []


# -- finding sessions ----------------------------------------------------------------------


def test_latest_find_and_list(cwd: Path, tmp_path: Path) -> None:
    old = write_session(cwd, [user_text("first prompt " + "x" * 200)])
    new = write_session(
        cwd, [user_text("second\n   prompt"), assistant({"type": "text", "text": "ok"})]
    )
    os.utime(old.path, (time.time() - 100, time.time() - 100))
    other_dir = tmp_path / "elsewhere"
    other_dir.mkdir()
    elsewhere = write_session(other_dir, [user_text("other project")])

    assert latest_session_path(cwd) == new.path
    assert latest_session_path(tmp_path / "empty") is None
    assert find_session(old.id, cwd) == old.path
    assert find_session(elsewhere.id, cwd) == elsewhere.path  # searched in every project
    assert find_session(new.id[:8], cwd) == new.path  # a unique prefix in this project
    assert find_session("../../etc/passwd", cwd) is None
    assert find_session("deadbeef-0000", cwd) is None

    listed = list_sessions(cwd)
    assert [info.id for info in listed] == [new.id, old.id]
    assert listed[0].message_count == 2 and listed[1].message_count == 1
    assert listed[0].first_prompt == "second prompt"
    assert listed[1].first_prompt.startswith("first prompt xxx")
    assert len(listed[1].first_prompt) <= 80 and listed[1].first_prompt.endswith("…")


def test_resume_appends_to_the_same_file(cwd: Path) -> None:
    session = write_session(cwd, conversation())
    resumed, loaded = Session.open_existing(session.id, cwd)
    assert resumed.id == session.id and resumed.path == session.path
    assert len(loaded.messages) == 4
    resumed.append_message(user_text("and now the tests"))
    resumed.close()

    kinds = [r["type"] for r in records(session.path)]
    assert kinds.count("session") == 1
    assert kinds[-2:] == ["resume", "message"]
    assert [p.name for p in session.path.parent.iterdir()] == [session.path.name]
    assert load_session(session.path).messages[-1].text() == "and now the tests"


# -- file state ----------------------------------------------------------------------------


def read_into(cache: FileStateCache, path: Path, **extra) -> None:
    content = path.read_text()
    cache.set(path, FileState(content, path.stat().st_mtime, read_at=time.time(), **extra))


def test_file_state_is_recorded_and_rebuilt_against_the_disk(cwd: Path) -> None:
    unchanged, changed, deleted, late = (cwd / f"{n}.py" for n in ("a", "b", "c", "d"))
    for path in (unchanged, changed, deleted, late):
        path.write_text(f"# {path.name}\n")

    session = Session.create(cwd, "claude-sonnet-5-5")
    cache = FileStateCache()
    session.attach_file_state(cache)
    session.append_message(user_text("look at these"))
    read_into(cache, unchanged)
    read_into(cache, changed, offset=10, limit=5)
    read_into(cache, deleted)
    session.append_record({"type": "compact_boundary", "trigger": "auto"})
    read_into(cache, late)
    session.close()

    changed.write_text("# rewritten\n")
    os.utime(changed, (time.time() + 5, time.time() + 5))
    deleted.unlink()

    loaded = load_session(session.path)
    fresh = FileStateCache()
    resumed, _ = Session.open_existing(session.path, cwd)
    resumed.attach_file_state(fresh)  # attached first: the rebuild must not echo records
    count_before = len(records(session.path))
    assert rebuild_file_state(loaded, fresh) == 3
    resumed.close()
    assert len(records(session.path)) == count_before

    a, b, d = fresh.peek(unchanged), fresh.peek(changed), fresh.peek(late)
    assert a is not None and b is not None and d is not None
    assert deleted not in fresh
    assert not a.stale and not a.in_context  # read before the boundary
    assert b.stale and b.content == "# rewritten\n" and (b.offset, b.limit) == (10, 5)
    assert not d.stale and d.in_context
    assert fresh.paths()[-1] == os.path.normpath(late)  # recency kept


def test_only_the_reads_the_cache_keeps_are_read_again(cwd: Path) -> None:
    """More reads than the cache holds: the rebuild reads the newest from disk and ends with
    the cache that setting every one would leave (a missing file makes room for an older)."""
    paths = [cwd / f"f{i:03d}.py" for i in range(160)]
    session = Session.create(cwd, "claude-sonnet-5-5")
    cache = FileStateCache()
    session.attach_file_state(cache)
    for path in paths:
        path.write_text(f"# {path.name}\n")
        read_into(cache, path)
    session.close()
    paths[150].unlink()
    loaded = load_session(session.path)
    every = FileStateCache()
    for state in loaded.file_states:  # what the rebuild did before: set them all, in order
        if Path(state.path).exists():
            content = Path(state.path).read_text()
            every.set(state.path, FileState(content, state.mtime, read_at=state.at))
    fresh = FileStateCache()
    assert rebuild_file_state(loaded, fresh) == fresh.max_entries
    assert fresh.paths() == every.paths()
    assert fresh.paths()[0] == os.path.normpath(paths[59])  # one older, for the missing one


def test_a_new_read_after_resume_is_recorded(cwd: Path) -> None:
    target = cwd / "x.py"
    target.write_text("x = 1\n")
    session = Session.create(cwd, "claude-sonnet-5-5")
    cache = FileStateCache()
    session.attach_file_state(cache)
    read_into(cache, target)
    session.close()

    resumed, loaded = Session.open_existing(session.path, cwd)
    fresh = FileStateCache()
    resumed.attach_file_state(fresh)
    rebuild_file_state(loaded, fresh)
    time.sleep(0.01)
    read_into(fresh, target)
    resumed.close()
    assert [r["type"] for r in records(session.path)].count("file_state") == 2


# -- a long session (its load time is measured by bench/speed_targets.py) -------------------


def test_a_two_thousand_message_session_loads_whole_and_lists(cwd: Path) -> None:
    session = tool_rounds_session(cwd)
    loaded = load_session(session.path)
    assert len(loaded.messages) == 2000 and loaded.repairs == []
    assert [s.id for s in list_sessions(cwd)] == [session.id]
