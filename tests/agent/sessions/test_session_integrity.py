"""Sessions that meet bad conditions: text that is not UTF-8, a second writer, a failed write."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.core.messages import Message, tool_result_block, user_text
from agent.sessions.session import (
    Session,
    load_session,
)
from tests.agent.sessions.helpers import (
    assistant,
    conversation,
    records,
    same,
    write_session,
)
from tools.surrogates import is_encodable

pytestmark = pytest.mark.usefixtures("config")

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
from agent.core.messages import user_text
from agent.sessions.session import Session

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
from agent.core.messages import user_text
from agent.sessions.session import Session

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
