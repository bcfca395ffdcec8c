"""A session with thinking in its history, stored and resumed: every block back byte for byte."""

from __future__ import annotations

import json

from agent.core.messages import user_text
from agent.sessions.session import load_session
from tests.agent.sessions.helpers import assistant, results, tool_use, write_session

# Characters JSON escapes, non-ASCII and a long signature: none of it may change.
THOUGHT = {
    "type": "thinking",
    "thinking": 'Quotes " and \\ back-slashes, tabs\tand ünïcode — then a plan.\n',
    "signature": "EqQBCkYIBxgCKkD" + "x9/+=" * 40,
}
REDACTED = {"type": "redacted_thinking", "data": "RW5jcnlwdGVkIHRoaW5raW5n+/=="}


def test_thinking_and_redacted_thinking_come_back_exactly(tmp_path) -> None:
    messages = [
        user_text("look"),
        assistant(THOUGHT, {"type": "text", "text": "Reading."}, tool_use("t1")),
        results("t1"),
        assistant(REDACTED, THOUGHT, tool_use("t2")),
        results("t2"),
    ]
    session = write_session(tmp_path, messages)
    loaded = load_session(session.path)
    assert loaded.repairs == []
    assert [m.content for m in loaded.messages] == [m.content for m in messages]
    sent = json.dumps([m.to_api() for m in loaded.messages], sort_keys=True)
    assert sent == json.dumps([m.to_api() for m in messages], sort_keys=True)


def test_a_thinking_block_that_lost_its_signature_goes_whole_on_load(tmp_path) -> None:
    broken = {"type": "thinking", "thinking": "no signature here"}
    messages = [
        user_text("look"),
        assistant(broken, {"type": "text", "text": "Reading."}, tool_use("t1")),
        results("t1"),
        assistant({"type": "redacted_thinking"}, {"type": "text", "text": "done"}),
    ]
    session = write_session(tmp_path, messages)
    loaded = load_session(session.path)
    first, last = loaded.messages[1], loaded.messages[3]
    assert [b["type"] for b in first.content] == ["text", "tool_use"]
    assert [b["type"] for b in last.content] == ["text"]
    assert len(loaded.messages) == 4  # nothing else lost
