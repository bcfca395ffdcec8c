"""The task list through the `ccx` command: kept by the model, restored after a compaction,
there again on resume, listed by /todos."""

from __future__ import annotations

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply


def test_task_list_survives_compaction_and_resume(ccx: Ccx) -> None:
    ccx.api.add(
        tool_reply(("ToolSearch", {"query": "select:TaskCreate,TaskUpdate"})),
        tool_reply(
            ("TaskCreate", {"subject": "Read the app", "activeForm": "Reading the app"}),
            ("TaskCreate", {"subject": "Fix the retry limit"}),
        ),
        tool_reply(("TaskUpdate", {"taskId": "1", "status": "completed"})),
        tool_reply(("TaskUpdate", {"taskId": "2", "status": "in_progress"})),
        text_reply("Working on it."),
    )
    first = ccx.run("-p", "fix the retry limit", "--output-format", "json")
    assert first.returncode == 0, first.stderr
    # The task-list tools are deferred: named to the model, loaded by ToolSearch when needed.
    start, loaded = ccx.api.requests[:2]
    names = [tool["name"] for tool in start.body["tools"]]
    assert "ToolSearch" in names and not {"TaskCreate", "TaskGet", "TaskList", "TaskUpdate"} & set(
        names
    )
    assert "TaskCreate" in start.system_text() and "TaskCreate" not in start.last_user_text()
    deferred = [t["name"] for t in loaded.body["tools"] if t.get("defer_loading")]
    assert {"TaskCreate", "TaskUpdate"} <= set(deferred) and "TaskGet" not in deferred
    assert "Task #2 created: Fix the retry limit" in ccx.api.requests[2].all_text()

    todos = ccx.run("-c", "-p", "/todos")
    assert todos.returncode == 0, todos.stderr
    assert "#1 [x] Read the app" in todos.stdout
    assert "#2 [~] Fix the retry limit" in todos.stdout

    ccx.api.add(text_reply("<summary>The user wants the retry limit fixed.</summary>"))
    compact = ccx.run("-c", "-p", "/compact")
    assert compact.returncode == 0, compact.stderr

    ccx.api.add(
        tool_reply(("TaskUpdate", {"taskId": "2", "status": "completed"})), text_reply("Done.")
    )
    after = ccx.run("-c", "-p", "go on", "--output-format", "json")
    assert after.json()["result"] == "Done."
    restored = ccx.api.requests[-2].all_text()
    assert "Your task list" in restored
    assert "#2 [~] Fix the retry limit" in restored and "#1 [x] Read the app" in restored
    assert "Every task on the list is completed." in ccx.api.requests[-1].all_text()
    assert ccx.api.errors == []


def test_an_empty_list_adds_nothing_to_a_compaction(ccx: Ccx) -> None:
    ccx.api.add(text_reply("hello"))
    ccx.run("-p", "hi")
    ccx.api.add(text_reply("<summary>The user said hi.</summary>"))
    ccx.run("-c", "-p", "/compact")
    ccx.api.add(text_reply("ok"))
    ccx.run("-c", "-p", "next")
    assert "Your task list" not in ccx.api.requests[-1].all_text()
    empty = ccx.run("-c", "-p", "/todos")
    assert "No tasks yet" in empty.stdout
