"""A resume that reads the transcript from its end sends what a resume of the whole file sends.

A session with several compactions (reads, edits and calibration between them) is
resumed twice from the same bytes: once as ccx does (``load_for_resume`` reads
from the last boundary) and once loading every record. The first request after
the resume, its messages and system prompt, must be the same; so must what
/undo-compact brings back (the part before the boundary, read on demand) and an
Edit of a file read before the last compaction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import Event
from agent.sessions import session as sessions
from tests.fake_env import use_fake_api
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.session.driver import SessionDriver
from tui.session.options import RunOptions


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    for i in range(6):
        (repo / f"part{i}.txt").write_text(body(i))
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


def body(i: int) -> str:
    return f"HEAD of part {i}\n" + f"part {i}: a line of text\n" * 200


async def long_session(api: FakeApi, repo: Path) -> str:
    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), lambda _e: None)
    try:
        for round_ in range(3):
            for i in (round_ * 2, round_ * 2 + 1):
                api.add(tool_reply(("Read", {"file_path": f"part{i}.txt"})), text_reply(f"read {i}"))  # fmt: skip
                await driver.run(f"read part{i}.txt")
            api.add(text_reply(f"<summary>round {round_}: two parts read</summary>"))
            assert not (await driver.run("/compact")).is_error
        api.add(tool_reply(("Read", {"file_path": "part5.txt"})), text_reply("read 5 again"))
        await driver.run("read part5.txt once more")
        return driver.session_id
    finally:
        await driver.aclose()


async def resumed_requests(
    api: FakeApi, repo: Path, session_id: str, lines: list[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The request bodies of ``lines`` sent after resuming, and the command results."""
    mark, said = len(api.requests), []
    events: list[Event] = []
    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False, resume=session_id, permission_mode="acceptEdits"), events.append)  # fmt: skip
    try:
        for line in lines:
            result = await driver.run(line)
            said.append(result.text if result is not None else "")
    finally:
        await driver.aclose()
    return [r.body for r in api.requests[mark:]], said


def comparable(bodies: list[dict[str, Any]]) -> str:
    """The requests' system prompts, messages and tools; the ids the fake API gave the tool
    calls it scripted after the resume are numbered in order of appearance."""
    parts = [{"system": b.get("system"), "messages": b["messages"], "tools": b.get("tools")} for b in bodies]  # fmt: skip
    text = json.dumps(parts)
    ids: dict[str, str] = {}
    return re.sub(r"toolu_\w+", lambda m: ids.setdefault(m.group(0), f"id{len(ids)}"), text)


async def test_the_request_after_a_resume_is_the_one_the_whole_file_gives(
    api: FakeApi, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = await long_session(api, repo)
    path = sessions.find_session(session_id, repo)
    assert path is not None
    stored = path.read_bytes()
    loaded = sessions.load_for_resume(path)
    assert loaded.unread_before > 0  # read from the end

    def script() -> None:
        api.add(text_reply("fine"))
        for i in (0, 5):  # read long before the last compaction, and after it
            api.add(tool_reply(("Edit", {"file_path": f"part{i}.txt", "old_string": f"HEAD of part {i}", "new_string": "CHANGED"})), text_reply("edited"))  # fmt: skip
        api.add(text_reply("after the undo"))

    lines = ["and now?", "change part0.txt", "change part5.txt", "/undo-compact", "and before?"]
    script()
    from_end, said_from_end = await resumed_requests(api, repo, session_id, lines)
    after_from_end = [(repo / f"part{i}.txt").read_text() for i in (0, 5)]

    path.write_bytes(stored)
    for i in (0, 5):
        (repo / f"part{i}.txt").write_text(body(i))
    monkeypatch.setattr(sessions, "load_tail", lambda _path: None)  # every record, as before
    assert sessions.load_for_resume(path).unread_before == 0
    script()
    whole, said_whole = await resumed_requests(api, repo, session_id, lines)

    assert len(from_end) == len(whole) == 6
    assert comparable(from_end) == comparable(whole)
    assert said_from_end[3] == said_whole[3]  # the undo's own words
    assert after_from_end == [(repo / f"part{i}.txt").read_text() for i in (0, 5)]
    assert after_from_end == [body(0), body(5).replace("HEAD of part 5", "CHANGED")]
    refusal = json.dumps(from_end[2]["messages"][-1])  # the Edit of part0, refused
    assert "summarized away" in refusal  # a read from before the boundary is still known
