"""Sessions and transcripts: writing, loading, repairing, finding, resuming, file state."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.messages import INTERRUPTED_TOOL_RESULT, Message, tool_result_block, user_text
from agent.session import (
    Session,
    SessionError,
    find_session,
    latest_session_path,
    list_sessions,
    load_session,
    project_dir,
    rebuild_file_state,
)
from tools.file_state import FileState, FileStateCache
from tools.surrogates import is_encodable


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "config"
    monkeypatch.setenv("CCX_CONFIG_DIR", str(root))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return root


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    path = tmp_path / "my project"
    path.mkdir()
    return path


def assistant(*blocks: dict) -> Message:
    return Message(role="assistant", content=list(blocks), kind="response", api_id="msg_1")


def tool_use(use_id: str, name: str = "Read") -> dict:
    return {"type": "tool_use", "id": use_id, "name": name, "input": {"file_path": "/x"}}


def results(*use_ids: str) -> Message:
    blocks = [tool_result_block(use_id, f"output of {use_id}") for use_id in use_ids]
    return Message(role="user", content=blocks, kind="tool_result")


def conversation() -> list[Message]:
    return [
        user_text("fix the bug in parser.py"),
        assistant({"type": "text", "text": "Reading it."}, tool_use("t1")),
        results("t1"),
        assistant({"type": "text", "text": "Done — ünïcode ok."}),
    ]


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_session(cwd: Path, messages: list[Message]) -> Session:
    session = Session.create(cwd, "claude-sonnet-5-5")
    for message in messages:
        session.append_message(message)
    session.close()
    return session


def same(a: list[Message], b: list[Message]) -> bool:
    return [m.to_record() for m in a] == [m.to_record() for m in b]


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


# -- performance ---------------------------------------------------------------------------


def test_loading_two_thousand_messages_is_fast(cwd: Path) -> None:
    session = Session.create(cwd, "claude-sonnet-5-5")
    chunk = "line of tool output with some text in it\n" * 480  # ~20 KB
    for index in range(1000):
        use_id = f"toolu_{index:05d}"
        session.append_message(
            assistant({"type": "text", "text": f"step {index}"}, tool_use(use_id, "Bash"))
        )
        answer = Message(
            role="user", content=[tool_result_block(use_id, chunk)], kind="tool_result"
        )
        session.append_message(answer)
    session.close()
    size_mb = session.path.stat().st_size / 1e6

    started = time.perf_counter()
    loaded = load_session(session.path)
    elapsed = time.perf_counter() - started
    listed_started = time.perf_counter()
    list_sessions(cwd)
    listed = time.perf_counter() - listed_started
    print(
        f"\nloaded {len(loaded.messages)} messages ({size_mb:.1f} MB) in {elapsed * 1000:.0f} ms;"
        f" list_sessions {listed * 1000:.1f} ms"
    )
    assert len(loaded.messages) == 2000 and loaded.repairs == []


# -- text that is not UTF-8 ----------------------------------------------------------------


def encodable(message: Message) -> bool:
    return is_encodable(json.dumps(message.to_api(), ensure_ascii=False))


def test_a_transcript_with_surrogates_resumes_repairs_once_and_replays_clean(cwd: Path) -> None:
    # As an older build wrote them: the surrogates kept in the file as JSON's \udcff.
    read_bad = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "b\udcff"}}
    dangling = {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls \ud800"}}
    old = [
        user_text("look at b\udcff"),
        assistant({"type": "text", "text": "Reading \ud800 it."}, read_bad),
        Message(
            role="user", content=[tool_result_block("t1", "1\tin b\udcff")], kind="tool_result"
        ),
        assistant({"type": "text", "text": "Fine."}),
        user_text("now list"),
        assistant(dangling),
    ]
    session = write_session(cwd, old)
    assert "\\udcff" in session.path.read_text()

    first = load_session(session.path)
    assert first.repairs[0] == "escaped text that is not valid UTF-8 in 4 message(s)"
    assert "Bash" in first.repairs[1]  # the other repairs still run, after the escaping
    assert all(encodable(m) for m in first.messages)
    assert first.messages[0].text() == "look at b\\xff"
    assert first.messages[1].tool_uses()[0]["input"] == {"file_path": "b\\xff"}
    assert first.messages[5].tool_uses()[0]["input"] == {"command": "ls \ufffd"}

    resumed, loaded = Session.open_existing(session.id, cwd)
    resumed.close()
    assert same(loaded.messages, first.messages)
    assert [r["type"] for r in records(session.path)][-2:] == ["resume", "repair"]

    second = load_session(session.path)
    assert second.repairs == [] and second.skipped_repair_records == 0
    assert same(second.messages, first.messages)


# -- one writer per session ----------------------------------------------------------------


def test_a_busy_session_is_forked_and_never_written_by_the_second_opener(cwd: Path) -> None:
    session = write_session(cwd, conversation())
    holder, _ = Session.open_existing(session.id, cwd)  # holds the file's lock until closed
    try:
        busy_bytes = session.path.read_bytes()
        fork, loaded = Session.open_existing(session.id, cwd, model="claude-haiku-5-5")
        fork.append_message(user_text("in the fork"))
        fork.close()
        assert session.path.read_bytes() == busy_bytes
        holder.append_message(user_text("in the original"))
    finally:
        holder.close()

    assert fork.forked_from == session.id and fork.busy_pid == os.getpid()
    assert fork.id != session.id and fork.path.parent == session.path.parent
    header = records(fork.path)[0]
    assert header["session_id"] == fork.id and header["forked_from"] == session.id
    assert loaded.session_id == fork.id and loaded.path == fork.path
    texts = [m.text() for m in conversation()]
    assert [m.text() for m in loaded.messages] == texts
    assert [m.text() for m in load_session(fork.path).messages] == [*texts, "in the fork"]
    assert [m.text() for m in load_session(session.path).messages] == [*texts, "in the original"]

    again, _ = Session.open_existing(session.id, cwd)  # closed, so free: continued in place
    again.close()
    assert again.forked_from is None and again.path == session.path


def test_a_fork_copies_whole_records_only(cwd: Path) -> None:
    session = write_session(cwd, conversation())
    holder, _ = Session.open_existing(session.id, cwd)
    try:
        with open(session.path, "ab") as handle:  # a record the holder is writing right now
            handle.write(b'{"type":"message","uuid":"half-writ')
        fork, loaded = Session.open_existing(session.id, cwd)
        fork.close()
    finally:
        holder.close()
    assert loaded.torn_tail and len(loaded.messages) == 4
    copy = load_session(fork.path)
    assert copy.invalid_lines == 0 and not copy.torn_tail
    assert same(copy.messages, loaded.messages)


def test_records_written_between_reading_and_locking_are_not_lost(cwd: Path) -> None:
    session = write_session(cwd, conversation())
    early = load_session(session.path)  # the TUI reads the file before the runtime opens it
    other, _ = Session.open_existing(session.id, cwd)
    other.append_message(user_text("written meanwhile"))
    other.close()
    resumed, loaded = Session.open_existing(session.id, cwd, loaded=early)
    resumed.close()
    assert loaded.messages[-1].text() == "written meanwhile"


# -- failed writes -------------------------------------------------------------------------

_CUT_SHORT = """
import json, resource, sys
from pathlib import Path
from agent.messages import user_text
from agent.session import Session

session = Session.create(Path(sys.argv[1]), "claude-sonnet-5-5")
session.append_message(user_text("small"))
size = session.path.stat().st_size
# As a nearly full disk: the next record gets 100 bytes in (a short write), then EFBIG.
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, resource.RLIM_INFINITY))
session.append_message(user_text("x" * 1000))
after_failure = session.path.stat().st_size
errno = session.write_error.errno
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
session.append_message(user_text("after"))
session.close()
print(json.dumps([str(session.path), size, after_failure, errno]))
"""


def test_a_write_cut_short_leaves_no_partial_record_and_nothing_is_lost(cwd: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CUT_SHORT, str(cwd)], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    path, size, after_failure, code = json.loads(proc.stdout)
    assert after_failure == size, "the partial record was cut off"
    assert code == errno.EFBIG
    lines = Path(path).read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])
    assert [m.text() for m in load_session(path).messages] == ["small", "x" * 1000, "after"]


_NO_ROOM_AT_ALL = """
import json, os, resource, sys
from pathlib import Path
from agent.messages import user_text
from agent.session import Session

session = Session.create(Path(sys.argv[1]), "claude-sonnet-5-5")
resource.setrlimit(resource.RLIMIT_FSIZE, (50, resource.RLIM_INFINITY))  # not even the header
session.append_message(user_text("one"))
left = sorted(os.listdir(session.path.parent))
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
session.append_message(user_text("two"))
session.close()
print(json.dumps([str(session.path), left, sorted(os.listdir(session.path.parent))]))
"""


def test_a_new_session_that_cannot_write_its_first_record_leaves_no_file(cwd: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _NO_ROOM_AT_ALL, str(cwd)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    path, left, after = json.loads(proc.stdout)
    assert left == [], "no empty transcript, no temporary file"
    assert after == [Path(path).name]
    assert [m.text() for m in load_session(path).messages] == ["one", "two"]
    assert records(Path(path))[0]["type"] == "session"
