"""User messages too long to send whole, end to end: a 30 MB stream-json message (a string or the
Agent SDK's list of text blocks), a huge piped `-p` prompt and a huge piped REPL line are
saved to a file and sent as a pointer with their head and tail; the fake API accepts every
request and the session answers the next message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply
from tui.fake_api.recording import RecordedRequest

SMALL_REQUEST = 200_000  # bytes: the pointer, head and tail, with the system prompt and tools


def numbered(lines: int) -> str:
    return "".join(f"paste line {i:>12}\n" for i in range(1, lines + 1))  # 24 bytes a line


def saved(ccx: Ccx) -> list[Path]:
    return sorted((ccx.config / "projects").glob("*/*/user-messages/*.txt"))


def assert_small_and_accepted(requests: list[RecordedRequest]) -> None:
    for request in requests:
        assert request.status == 200, request.error
        assert len(json.dumps(request.body)) < SMALL_REQUEST


def user_line(content: Any) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}})


@pytest.mark.parametrize("shape", ["string", "blocks"])
def test_a_30_mb_stream_json_message_then_the_next_is_answered(ccx: Ccx, shape: str) -> None:
    huge = numbered(1_250_000)  # 30 MB
    content: Any = huge
    if shape == "blocks":  # as the Agent SDK sends it: a list of text blocks
        half = len(huge) // 2
        content = [{"type": "text", "text": huge[:half]}, {"type": "text", "text": huge[half:]}]
    ccx.api.add(text_reply("I was told where it is."), text_reply("Hello again."))
    stdin = user_line(content) + "\n" + user_line("hello again") + "\n"
    run = ccx.run(
        "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
        stdin=stdin, timeout=180,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    results = [e for e in run.events() if e["type"] == "result"]
    assert [(r["subtype"], r["result"]) for r in results] == [
        ("success", "I was told where it is."),
        ("success", "Hello again."),
    ]
    assert_small_and_accepted(ccx.api.requests)
    (path,) = saved(ccx)
    whole = huge if shape == "string" else huge[: len(huge) // 2] + "\n\n" + huge[len(huge) // 2 :]
    assert path.read_text() == whole
    first, second = ccx.api.requests
    pointer = first.last_user_text()
    assert str(path) in pointer and "paste line            1\n" in pointer
    assert "paste line      1250000\n" in pointer
    assert second.last_user_text().endswith("hello again")
    # The transcript keeps what was sent; the file holds the whole.
    (transcript,) = ccx.transcripts()
    assert transcript.stat().st_size < SMALL_REQUEST


def test_a_huge_piped_prompt_then_a_resumed_session_answers(ccx: Ccx) -> None:
    huge = numbered(200_000)  # 4.8 MB, over the 1 MiB cap
    ccx.api.add(text_reply("Got the pointer."), text_reply("Still here."))
    run = ccx.run("-p", "--output-format", "json", stdin=huge, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.json()["result"] == "Got the pointer."
    again = ccx.run("-p", "and now?", "-r", run.json()["session_id"], "--output-format", "json")
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.json()["result"] == "Still here."
    assert_small_and_accepted(ccx.api.requests)
    (path,) = saved(ccx)
    assert path.read_text().strip() == huge.strip()
    assert str(path) in ccx.api.requests[1].all_text()  # the resumed history has the pointer


def test_a_huge_line_piped_to_the_repl_then_the_next_line_is_answered(ccx: Ccx) -> None:
    huge = "word " * 1_000_000  # one 5 MB line
    ccx.api.add(text_reply("A long one."), text_reply("Answered."))
    run = ccx.run("--plain", stdin=huge + "\nhello again\n", timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "A long one." in run.stdout and "Answered." in run.stdout
    assert_small_and_accepted(ccx.api.requests)
    (path,) = saved(ccx)
    assert path.read_text().strip() == huge.strip()
    assert "use Bash" in ccx.api.requests[0].last_user_text()  # one line, longer than Read shows
