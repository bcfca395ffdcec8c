"""What the runner does around a permission question: calls that would fail are not asked
about, and a question cut short by an interrupt leaves the model a true result."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import Event
from agent.core.messages import ToolResultBlock
from agent.loop.tool_runner import (
    AFTER_STOP,
    STOPPED_AT_PROMPT,
    Answer,
    PermissionRequest,
    Reply,
    ToolRunner,
)
from agent.permissions.gate import PermissionGate
from tools.base import ToolContext
from tools.file_state import FileStateCache
from tools.registry import default_tools


def use(tool_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def make_runner(cwd: Path, asked: list[PermissionRequest], answer: Any) -> ToolRunner:
    async def ask(request: PermissionRequest) -> Answer:
        asked.append(request)
        if answer == "hang":
            await asyncio.Event().wait()
        return answer  # type: ignore[no-any-return]

    events: list[Event] = []
    ctx = ToolContext(cwd=cwd, file_state=FileStateCache())
    gate = PermissionGate("default", [], [], [], cwd=cwd)
    return ToolRunner(default_tools(), ctx, gate, events.append, ask=ask)


def text_of(block: ToolResultBlock) -> str:
    content = block["content"]
    return content if isinstance(content, str) else str(content)


async def test_an_edit_of_an_unread_file_fails_without_asking(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("LIMIT = 3\n")
    asked: list[PermissionRequest] = []
    runner = make_runner(tmp_path, asked, "allow")
    results: dict[str, ToolResultBlock] = {}
    edit = use("e", "Edit", file_path="app.py", old_string="LIMIT = 3", new_string="LIMIT = 5")
    write = use("w", "Write", file_path="app.py", content="x\n")
    await runner.run([edit, write], {}, results)  # type: ignore[list-item]
    assert asked == []
    for key in ("e", "w"):
        assert results[key]["is_error"] and "has not been read" in text_of(results[key])
    assert (tmp_path / "app.py").read_text() == "LIMIT = 3\n"


async def test_an_edit_after_a_read_is_asked_about_and_runs(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("LIMIT = 3\n")
    asked: list[PermissionRequest] = []
    runner = make_runner(tmp_path, asked, "allow")
    results: dict[str, ToolResultBlock] = {}
    read = use("r", "Read", file_path=str(tmp_path / "app.py"))
    edit = use("e", "Edit", file_path="app.py", old_string="LIMIT = 3", new_string="LIMIT = 5")
    new = use("n", "Write", file_path="new.py", content="x\n")  # a new file needs no read
    await runner.run([read, edit, new], {}, results)  # type: ignore[list-item]
    assert [r.tool_name for r in asked] == ["Edit", "Write"]
    assert not results["e"].get("is_error") and not results["n"].get("is_error")
    assert (tmp_path / "app.py").read_text() == "LIMIT = 5\n"


async def test_an_interrupt_at_the_prompt_tells_the_model_the_call_never_ran(
    tmp_path: Path,
) -> None:
    asked: list[PermissionRequest] = []
    runner = make_runner(tmp_path, asked, "hang")
    results: dict[str, ToolResultBlock] = {}
    uses = [
        use("a", "Bash", command="touch one"),
        use("b", "Bash", command="touch two"),
    ]
    task = asyncio.create_task(runner.run(uses, {}, results))  # type: ignore[arg-type]
    while not asked:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(asked) == 1  # the second call is never asked about
    assert text_of(results["a"]) == STOPPED_AT_PROMPT and results["a"]["is_error"]
    assert "b" not in results  # the loop answers it as interrupted
    assert not (tmp_path / "one").exists()


async def test_a_reply_that_stops_the_turn_asks_about_nothing_after_it(tmp_path: Path) -> None:
    asked: list[PermissionRequest] = []
    runner = make_runner(tmp_path, asked, Reply("deny", message="stop here", interrupt=True))
    results: dict[str, ToolResultBlock] = {}
    uses = [use("a", "Bash", command="touch one"), use("b", "Bash", command="touch two")]
    await runner.run(uses, {}, results)  # type: ignore[arg-type]
    assert len(asked) == 1
    assert text_of(results["a"]) == "stop here" and text_of(results["b"]) == AFTER_STOP
    assert runner.take_stop() == "stop here"


async def test_a_running_bash_reports_its_lines_so_far(tmp_path: Path) -> None:
    from agent.core.events import ToolProgress

    events: list[Event] = []
    ctx = ToolContext(cwd=tmp_path, file_state=FileStateCache())
    gate = PermissionGate("bypassPermissions", [], [], [], cwd=tmp_path)
    runner = ToolRunner(default_tools(), ctx, gate, events.append)
    results: dict[str, ToolResultBlock] = {}
    command = "for i in 1 2 3; do echo $i; done; sleep 1.2"
    await runner.run([use("b", "Bash", command=command)], {}, results)  # type: ignore[list-item]
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert progress and progress[-1] == ToolProgress("b", 3)
