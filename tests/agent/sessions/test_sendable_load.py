"""A transcript holding what the API refuses (written by an older ccx, or by hand) loads
without it: block types ccx does not know, blank text, blank tool results, images it
does not take. Thinking blocks load exactly as written."""

from __future__ import annotations

from pathlib import Path

from agent.core.messages import Message, tool_result_block, user_text
from agent.core.request import build_request
from agent.sessions.session import load_session
from tests.agent.sessions.helpers import assistant, tool_use, write_session
from tests.request_rules import refusals

THINKING = {"type": "thinking", "thinking": "First, read it.", "signature": "c2lnbmVk"}


def test_what_the_api_refuses_is_left_out_as_the_transcript_loads(tmp_path: Path) -> None:
    svg = {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml",
                                       "data": "PHN2Zy8+"}}  # fmt: skip
    prompt = user_text("fix it")
    prompt.content += [{"type": "text", "text": ""}, {"type": "text", "text": " \n"}]
    messages = [
        prompt,
        assistant(
            THINKING,
            {"type": "mystery_block", "x": 1},
            {"type": "text", "text": " "},
            tool_use("t1"),
        ),
        Message(
            role="user",
            kind="tool_result",
            content=[tool_result_block("t1", [{"type": "text", "text": ""}, svg])],
        ),
        assistant({"type": "mystery_block"}),
        user_text("go on"),
    ]
    session = write_session(tmp_path, messages)
    loaded = load_session(session.path)
    first, response, results, empty, last = loaded.messages
    assert first.content == [{"type": "text", "text": "fix it"}]
    assert response.content == [THINKING, tool_use("t1")]  # thinking exactly as written
    (result,) = results.content
    (described,) = result["content"]
    assert described["type"] == "text" and "image/svg+xml" in described["text"]
    assert empty.content == [{"type": "text", "text": "(no content)"}]
    assert last.text() == "go on"
    request = build_request(
        model="m", system=[{"type": "text", "text": "s"}], tools=[], messages=loaded.messages,
        max_tokens=10,
    )  # fmt: skip
    assert refusals(request) == []
    assert load_session(session.path).messages[1].content == response.content  # stable


def test_a_clean_transcript_loads_unchanged(tmp_path: Path) -> None:
    messages = [
        user_text("read"),
        assistant(THINKING, {"type": "text", "text": "Reading."}, tool_use("t1")),
        Message(role="user", content=[tool_result_block("t1", "ok")], kind="tool_result"),
    ]
    session = write_session(tmp_path, messages)
    loaded = load_session(session.path)
    assert [m.to_record() for m in loaded.messages] == [m.to_record() for m in messages]
    assert loaded.repairs == []
