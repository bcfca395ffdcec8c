"""Loading a transcript from its end gives what the whole file gives, for what a resume needs.

Big transcripts are made here record by record: many compactions (some undone),
file reads and events on both sides of the boundaries, a rewind, a repair, a
torn last line. ``load_for_resume`` must agree with ``load_session`` on the
conversation, the repairs, the file reads and the events, while reading only
the file's end.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agent.core.messages import Message, user_text
from agent.sessions import tail
from agent.sessions.session import Session, load_for_resume, load_session
from agent.sessions.tail import live_boundary
from tests.agent.sessions.helpers import assistant, results, same, tool_use

pytestmark = pytest.mark.usefixtures("config")


def boundary(summarized: int, kept: list[Message], summary: str) -> dict:
    return {
        "type": "compact_boundary",
        "trigger": "auto",
        "kind": "session_memory" if kept else "full",
        "messages_summarized": summarized,
        "messages_kept": len(kept),
        "summary": summary,
        "replaced_count": len(kept) + 1,
        "at": time.time(),
    }


def read_record(path: str, at: float) -> dict:
    return {
        "type": "file_state",
        "path": path,
        "mtime": 1.0,
        "offset": None,
        "limit": None,
        "partial": False,
        "at": at,
    }


def step(session: Session, index: int, chunk: str) -> list[Message]:
    """One tool round: a Read of a file and its (big) result, and the read recorded."""
    use_id = f"toolu_{index:05d}"
    call = assistant({"type": "text", "text": f"step {index}"}, tool_use(use_id))
    answer = results(use_id)
    answer.content[0]["content"] = f"step {index}: {chunk}"
    session.append_message(call)
    session.append_message(answer)
    session.append_record(read_record(f"/work/file_{index % 37}.py", float(index)))
    return [call, answer]


def big_session(
    cwd: Path, compactions: int = 12, steps: int = 40, undo_last: bool = False
) -> Session:
    """A session of ``compactions`` compactions of ``steps`` tool rounds each (~40 KB a round),
    each keeping its last four messages; skill and calibration events along the way."""
    session = Session.create(cwd, "claude-sonnet-5-5")
    chunk = "some output of a tool\n" * 1800
    session.append_message(user_text("work through the files"))
    live: list[Message] = []
    index = 0
    for round_ in range(compactions):
        for _ in range(steps):
            live += step(session, index, chunk)
            index += 1
        session.append_record(
            {"type": "event", "event": {"type": "skill_invoked", "name": f"s{round_}"}}
        )
        session.append_record({"type": "event", "event": {"type": "calibration", "value": 1.1}})
        kept = live[-4:]
        session.append_record(boundary(len(live) - 4, kept, f"summary {round_}"))
        session.append_message(Message(role="user", content=[{"type": "text", "text": f"summary {round_}"}], kind="summary"))  # fmt: skip
        for message in kept:
            session.append_message(message)
        live = []
    if undo_last:
        session.append_record({"type": "compact_undo", "at": time.time()})
    for _ in range(3):
        live += step(session, index, chunk)
        index += 1
    session.close()
    return session


def agree(path: Path) -> None:
    whole, from_end = load_session(path), load_for_resume(path)
    assert same(whole.messages, from_end.messages)
    assert whole.file_states == from_end.file_states
    assert whole.events == from_end.events
    assert (whole.header, whole.repairs, whole.repair_ops) == (
        from_end.header,
        from_end.repairs,
        from_end.repair_ops,
    )
    assert (whole.resumes, whole.writer_pid, whole.torn_tail, whole.layout) == (
        from_end.resumes,
        from_end.writer_pid,
        from_end.torn_tail,
        from_end.layout,
    )


def test_a_big_transcript_loads_from_its_last_boundary(cwd: Path) -> None:
    session = big_session(cwd)
    size = session.path.stat().st_size
    assert size > 15_000_000
    agree(session.path)
    loaded = load_for_resume(session.path)
    assert 0 < loaded.unread_before < size
    assert size - loaded.unread_before < size / 10  # the end only
    assert loaded.boundaries[-1]["summary"] == "summary 11"
    assert loaded.segments == [[]]  # the conversation before it is left unread
    assert [m.kind for m in loaded.messages[:2]] == ["summary", "response"]


def test_the_end_is_all_that_is_parsed(cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = big_session(cwd)
    parsed: list[int] = []
    real = tail._record

    def counting(line: bytes) -> dict | None:
        parsed.append(len(line))
        return real(line)

    real_lines = tail._parse_lines

    def counting_lines(lines: list[bytes]) -> list[dict | None]:
        parsed.extend(len(line) for line in lines)
        return real_lines(lines)

    monkeypatch.setattr(tail, "_record", counting)
    monkeypatch.setattr(tail, "_parse_lines", counting_lines)
    loaded = tail.load_tail(session.path)
    assert loaded is not None
    # Small records only: headers, boundaries, reads and events; no message line before it.
    assert len(parsed) > 12 * 40 and max(parsed) < 2_000


def test_an_undone_last_compaction_loads_from_the_one_before(cwd: Path) -> None:
    session = big_session(cwd, compactions=4, undo_last=True)
    agree(session.path)
    loaded = load_for_resume(session.path)
    assert loaded.unread_before > 0
    assert loaded.boundaries[-1]["summary"] == "summary 2"
    assert any(m.kind == "summary" and m.text() == "summary 2" for m in loaded.messages)


def test_undo_and_boundary_pair_as_brackets(cwd: Path) -> None:
    session = big_session(cwd, compactions=3, steps=4)
    with open(session.path, "rb") as handle:
        size = handle.seek(0, 2)
        cut = live_boundary(handle, size)
        assert cut is not None and cut.record["summary"] == "summary 2"
        earlier = live_boundary(handle, cut.start)
        assert earlier is not None and earlier.record["summary"] == "summary 1"
        assert live_boundary(handle, earlier.start) is not None
    reopened, _ = Session.open_existing(session.path, cwd)
    reopened.append_record({"type": "compact_undo", "at": 1.0})
    reopened.append_record({"type": "compact_undo", "at": 2.0})
    reopened.close()
    agree(session.path)
    assert load_for_resume(session.path).boundaries[-1]["summary"] == "summary 0"


def test_torn_last_line_and_a_repair_load_the_same(cwd: Path) -> None:
    session = big_session(cwd, compactions=3, steps=6)
    with open(session.path, "ab") as handle:
        call = assistant({"type": "text", "text": "one more"}, tool_use("toolu_open"))
        handle.write(json.dumps({"type": "message", **call.to_record()}).encode() + b"\n")
        handle.write(b'{"type":"message","uuid":"torn')
    agree(session.path)
    loaded = load_for_resume(session.path)
    assert loaded.torn_tail and loaded.repairs  # the unanswered call is closed
    reopened, again = Session.open_existing(session.path, cwd)
    reopened.close()
    agree(session.path)
    assert same(again.messages, load_for_resume(session.path).messages)


def test_a_rewind_before_the_boundary_loads_the_whole_file(cwd: Path) -> None:
    session = Session.create(cwd, "claude-sonnet-5-5")
    prompt = user_text("first")
    session.append_message(prompt)
    session.append_record(read_record("/work/a.py", time.time() + 10))
    session.append_record({"type": "rewind", "uuid": prompt.uuid, "at": time.time()})
    session.append_message(user_text("second"))
    session.append_record(boundary(1, [], "summary"))
    session.append_message(user_text("after"))
    session.close()
    assert tail.load_tail(session.path) is None
    loaded = load_for_resume(session.path)
    assert loaded.unread_before == 0
    assert loaded.file_states == []  # the rewind took the read back
    agree(session.path)


def test_old_and_small_transcripts_load_whole(cwd: Path, tmp_path: Path) -> None:
    no_boundary = Session.create(cwd, "claude-sonnet-5-5")
    no_boundary.append_message(user_text("hello"))
    no_boundary.close()
    assert tail.load_tail(no_boundary.path) is None
    agree(no_boundary.path)
    headless = tmp_path / "old.jsonl"  # an older build's file: no header line
    lines = [
        {"type": "message", **user_text("hi").to_record()},
        boundary(1, [], "s"),
        {"type": "message", **user_text("after").to_record()},
    ]
    headless.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert tail.load_tail(headless) is None
    assert [m.text() for m in load_for_resume(headless).messages] == ["after"]


def test_lines_that_open_differently_are_still_read(cwd: Path) -> None:
    """Records with other key orders or spacing (hand-edited, other builds) are parsed whole."""
    session = big_session(cwd, compactions=2, steps=3)
    with open(session.path, "a") as handle:
        handle.write(json.dumps({"path": "/work/z.py", **read_record("/work/z.py", 9.0)}) + "\n")
        opens_otherwise = {"summary": "hand", **boundary(2, [], "hand")}  # the summary first
        handle.write(json.dumps(opens_otherwise) + "\n")
        handle.write(json.dumps({"type": "message", **user_text("last").to_record()}) + "\n")
    agree(session.path)
    loaded = load_for_resume(session.path)
    assert loaded.boundaries[-1]["summary"] == "hand"
    assert [m.text() for m in loaded.messages] == ["last"]
    assert loaded.file_states[-1].path == "/work/z.py" and not loaded.file_states[-1].in_context


def test_a_file_system_that_cannot_map_files_is_read_instead(
    cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = big_session(cwd, compactions=3, steps=5)

    def refused(*_args: object, **_kwargs: object) -> None:
        raise OSError(19, "No such device")

    monkeypatch.setattr(tail.mmap, "mmap", refused)
    agree(session.path)
    assert load_for_resume(session.path).unread_before > 0


ODD_LINES = [
    b'{"type":"event","event":{"type":"calibration","value":1.2}}\n',
    b'{"type":"event","event":{"type":"x"}}   \t\n',  # spaces after the record
    b'{"type":"event","event":{"type":"x"}} {"type":"event"}\n',  # more than one value
    b'{"type":"event","type":"message","event":{}}\n',  # a later "type" key wins
    b'{"type":"file_state","path":\n',  # cut short: the next line does not complete it
    b'{"type":"event","event":{"name":"caf\xc3\xa9 \\ud800"}}\n',  # UTF-8 and an escape
    b'{"type":"event","event":"not an object"}\n',
    b'{"type":"event","event":\n',  # completed by the next line: no record of either
    b'{"type":"event"}}\n',
    b'{"type":"resume","pid":12,"at":3.0}\n',
]


@pytest.mark.parametrize("bad_byte", [False, True])
def test_lines_parsed_together_give_what_each_gives_alone(bad_byte: bool) -> None:
    """The lines a resume picks out before the boundary are decoded and scanned together; each
    must come out as ``json.loads`` gives it alone (None where that fails or is no object),
    also when a byte that is not UTF-8 sends them all to ``json.loads``."""
    lines = [*ODD_LINES, b'{"type":"event","event":{"raw":"\xed\xa0\x80"}}\n']
    if bad_byte:
        lines.append(b'{"type":"event","event":{"name":"\xff"}}\n')
    lines.append(b'{"type":"event","event":{"last":true}}')  # no newline: the file's end

    def alone(line: bytes) -> dict | None:
        try:
            value = json.loads(line)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    assert tail._parse_lines(lines) == [alone(line) for line in lines]
    assert tail._parse_lines([]) == []


def test_odd_records_before_the_boundary_load_as_from_the_whole_file(cwd: Path) -> None:
    session = Session.create(cwd, "claude-sonnet-5-5")
    session.append_message(user_text("first"))
    session.append_record(read_record("/work/a.py", 1.0))
    session.close()
    with open(session.path, "ab") as handle:
        handle.write(b"".join(ODD_LINES))
        handle.write(b'"/work/b.py","mtime":1.0}\n')  # the rest of the cut-short line
        handle.write(json.dumps(read_record("/work/c.py", 2.0)).encode() + b"\n")
        handle.write(json.dumps(boundary(1, [], "summary")).encode() + b"\n")
        handle.write(json.dumps({"type": "message", **user_text("after").to_record()}).encode())
        handle.write(b"\n")
    loaded = tail.load_tail(session.path)
    assert loaded is not None and loaded.unread_before > 0
    agree(session.path)
    assert [state.path for state in loaded.file_states] == ["/work/a.py", "/work/c.py"]
    assert loaded.resumes == 1 and loaded.writer_pid == 12
    assert {"type": "calibration", "value": 1.2} in loaded.events
