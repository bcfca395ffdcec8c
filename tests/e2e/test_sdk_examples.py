"""The Agent SDK's own 15 example programs, run unchanged with ccx as their CLI.

Each program (tests/e2e/sdk_examples/programs, as the SDK ships them) runs in a copy of the
SDK's layout through run_program.py, which points the SDK at ccx; ccx talks to the fake
Messages API on 127.0.0.1, which plays the model with the program's scripted replies. The
replies and the checks (exit code, lines printed, files left) are the ones
bench/sdk_examples.py gives ccx and Claude Code on the referee: both take them from
tests/e2e/sdk_examples/catalogue.py. Programs that import more than the SDK (trio) get it
from the test extra.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import CCX, Ccx
from tests.e2e.sdk_examples.catalogue import (
    FINAL_REPLY,
    PROGRAMS,
    SIDE_REPLY,
    Program,
    Step,
    check,
    filled,
    is_agent_turn,
    missing_module,
    run_example,
    workspace,
)
from tui.fake_api import FakeApi, RecordedRequest, Reply, text_reply, tool_reply


def reply(step: Step, folder: Path) -> Reply:
    """One scripted step as the fake API's reply: a text, or a tool call (after its words)."""
    if "tool" not in step:
        return text_reply(step["text"])
    return tool_reply((step["tool"], filled(step["input"], folder)), text=step.get("say"))


class Player:
    """The model for one program. As the referee: an agent turn gets the next reply, and
    FINAL_REPLY once there is none; any other request (a subagent with fewer tools) gets
    SIDE_REPLY. Unlike the referee, the next reply is the next one of the prompt the
    request answers: a program that interrupts a turn before its request is sent (a loaded
    machine starts ccx slower) must not shift every later reply."""

    def __init__(self, program: Program, folder: Path) -> None:
        self.turns = program.turns
        self.left = [list(one.steps) for one in program.turns]
        self.folder = folder
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        if not is_agent_turn(request.body):
            return text_reply(SIDE_REPLY)
        with self.lock:
            step = self.next_step(request.messages)
        return text_reply(FINAL_REPLY) if step is None else reply(step, self.folder)

    def next_step(self, messages: list[dict[str, Any]]) -> Step | None:
        """The next reply of the latest prompt in ``messages`` that the program has turns for
        (prompts repeated across sessions: the first turn with replies left)."""
        for message in reversed(messages):
            said = prompt_text(message)
            found = [i for i, one in enumerate(self.turns) if said and one.prompt in said]
            if found:
                return next((self.left[i].pop(0) for i in found if self.left[i]), None)
        return None


def prompt_text(message: dict[str, Any]) -> str:
    """The words of a user message (its text, not its tool results)."""
    if message.get("role") != "user":
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or [] if b.get("type") == "text")


def cases() -> list[object]:
    return [pytest.param(program, id=program.name) for program in PROGRAMS]


@pytest.mark.parametrize("program", cases())
def test_the_example_program_runs_with_ccx_as_with_claude_code(
    program: Program, tmp_path: Path
) -> None:
    assert not missing_module(program), "the test extra installs what the programs import"
    examples = workspace(tmp_path / "sdk")
    (tmp_path / "home").mkdir()
    with FakeApi() as api:
        api.on(lambda _request: True, Player(program, examples))
        env = Ccx(api, examples, tmp_path / "config").env | {"CCX_SDK_CLI": CCX}
        done = run_example(program, examples, env)
    said = f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == program.exit_code, said
    assert check(program, done.stdout, examples) == [], said
    assert api.errors == []
