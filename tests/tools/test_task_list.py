"""The model's task list: TaskCreate / TaskGet / TaskList / TaskUpdate and the file it lives in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot
from tools.base import ToolResult
from tools.task_list import MAX_TASKS, TaskList
from tools.task_list_tools import (
    TaskCreateTool,
    TaskGetTool,
    TaskListTool,
    TaskUpdateTool,
    task_list_tools,
)


@pytest.fixture
def tasks(tmp_path: Path) -> TaskList:
    return TaskList(tmp_path / "tasks" / "s1.json")


def test_schemas_are_claude_codes_names() -> None:
    for tool in (TaskCreateTool, TaskGetTool, TaskListTool, TaskUpdateTool):
        assert_schema_matches_snapshot(tool)
        assert tool.is_mutating is False
    update = TaskUpdateTool.input_schema()["properties"]
    assert {"taskId", "status", "activeForm", "addBlocks", "addBlockedBy", "owner"} <= set(update)
    assert update["status"]["enum"] == ["pending", "in_progress", "completed", "deleted"]
    assert TaskCreateTool.input_schema()["required"] == ["subject"]


async def test_create_update_list_get(tasks: TaskList, call: Call) -> None:
    create, get, listing, update = task_list_tools(tasks)
    first = await call(create, subject="Write the parser", activeForm="Writing the parser")
    assert first.output == "Task #1 created: Write the parser"
    assert first.meta["tasks"] == [
        {
            "id": "1",
            "subject": "Write the parser",
            "status": "pending",
            "active_form": "Writing the parser",
        }
    ]
    await call(create, subject="Test it", description="pytest -q tests/parser")
    blocked = await call(update, taskId="2", addBlockedBy=["1"])
    assert not blocked.is_error and "(blocked by #1)" in blocked.output
    started = await call(update, taskId="#1", status="in_progress")
    assert "#1 [~] Write the parser" in started.output

    shown = await call(listing)
    assert shown.output.splitlines() == [
        "0 of 2 tasks completed:",
        "#1 [~] Write the parser",
        "#2 [ ] Test it (blocked by #1)",
    ]
    done = await call(update, taskId="1", status="completed")
    assert "[x]" in done.output
    details = await call(get, taskId="2")
    assert "Description: pytest -q tests/parser" in details.output
    assert "Blocked by" not in details.output  # a finished task no longer blocks
    last = await call(update, taskId="2", status="completed")
    assert "Every task on the list is completed." in last.output


async def test_errors_change_nothing(tasks: TaskList, call: Call) -> None:
    create, get, _listing, update = task_list_tools(tasks)
    await call(create, subject="One")
    missing = await call(update, taskId="9", status="completed")
    assert missing.is_error and "no task #9" in missing.output and "#1" in missing.output
    self_block = await call(update, taskId="1", addBlocks=["1"])
    assert self_block.is_error
    unknown_dep = await call(update, taskId="1", addBlocks=["7"], status="completed")
    assert unknown_dep.is_error and tasks.get("1").status == "pending"  # nothing half-applied
    nothing = await call(update, taskId="1")
    assert nothing.is_error and "Nothing to change" in nothing.output
    blank = await call(create, subject="   ")
    assert blank.is_error
    assert (await call(get, taskId="x")).is_error
    bad = update.parse({"taskId": "1", "status": "done"})
    assert isinstance(bad, ToolResult) and "status" in bad.output


async def test_delete_unlinks_dependencies(tasks: TaskList, call: Call) -> None:
    create, _get, listing, update = task_list_tools(tasks)
    await call(create, subject="A")
    await call(create, subject="B")
    await call(update, taskId="2", addBlockedBy=["1"])
    gone = await call(update, taskId="1", status="deleted")
    assert gone.output == "Task #1 deleted." and [r["id"] for r in gone.meta["tasks"]] == ["2"]
    assert "blocked" not in (await call(listing)).output
    again = await call(create, subject="C")
    assert again.output.startswith("Task #3 ")  # ids are never reused


async def test_kept_in_a_file_and_reloaded(tasks: TaskList, call: Call, tmp_path: Path) -> None:
    create, _get, _listing, update = task_list_tools(tasks)
    await call(create, subject="Keep me", metadata={"ticket": 12})
    await call(update, taskId="1", status="in_progress", metadata={"ticket": None, "x": 1})
    assert tasks.path is not None
    data = json.loads(tasks.path.read_text())
    assert data["tasks"][0]["metadata"] == {"x": 1}
    reopened = TaskList(tasks.path)
    assert reopened.render() == tasks.render()
    assert reopened.create("Next").id == "2"


def test_a_torn_file_starts_empty_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"next_id": 3, "tasks": [{"id": "1", "subj')
    torn = TaskList(path)
    assert torn.tasks() == [] and torn.load_problem and "could not be read" in torn.load_problem
    torn.create("Fresh")
    assert json.loads(path.read_text())["tasks"][0]["subject"] == "Fresh"


def test_watchers_and_reset(tasks: TaskList, tmp_path: Path) -> None:
    seen: list[int] = []
    tasks.watch(lambda t: seen.append(len(t.tasks())))
    tasks.create("A")
    tasks.reset(tmp_path / "tasks" / "s2.json")
    assert seen == [1, 0] and tasks.tasks() == []
    assert tasks.create("B").id == "1"


def test_the_list_is_bounded(tmp_path: Path) -> None:
    tasks = TaskList(None)
    for n in range(MAX_TASKS):
        tasks.create(f"t{n}")
    with pytest.raises(ValueError, match="already has"):
        tasks.create("one more")
