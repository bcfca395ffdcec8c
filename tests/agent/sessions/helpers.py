"""What the session tests share: sample messages and transcripts."""

from __future__ import annotations

import json
from pathlib import Path

from agent.core.messages import Message, tool_result_block, user_text
from agent.sessions.session import Session


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


def tool_rounds_session(cwd: Path, rounds: int = 1000) -> Session:
    """A stored session of ``rounds`` Bash calls with ~20 KB results each (2,000 messages)."""
    session = Session.create(cwd, "claude-sonnet-5-5")
    chunk = "line of tool output with some text in it\n" * 480  # ~20 KB
    for index in range(rounds):
        use_id = f"toolu_{index:05d}"
        session.append_message(
            assistant({"type": "text", "text": f"step {index}"}, tool_use(use_id, "Bash"))
        )
        answer = Message(
            role="user", content=[tool_result_block(use_id, chunk)], kind="tool_result"
        )
        session.append_message(answer)
    session.close()
    return session


def same(a: list[Message], b: list[Message]) -> bool:
    return [m.to_record() for m in a] == [m.to_record() for m in b]
