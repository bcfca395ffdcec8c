"""TaskCreate, TaskGet, TaskList and TaskUpdate: the model's hands on its task list.

Names and input fields are Claude Code 2.1.328's (``subject``, ``activeForm``,
``taskId``, ``addBlocks``, ``addBlockedBy``, status ``deleted`` to remove), so a
model trained on it calls them as it learned to. The state is tools/task_list.py.
Every result carries the list's rows in ``meta["tasks"]`` for the front ends.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from tools.base import P, StrPath, Tool, ToolContext, ToolParams, ToolResult, one_line
from tools.task_list import Task, TaskList, TaskListError


class TaskCreateParams(ToolParams):
    subject: str = Field(description="A few words, imperative: “Fix the login bug”")
    description: str | None = Field(
        default=None,
        description="Details, when the subject is not enough",
    )
    activeForm: str | None = Field(
        default=None,
        description="Shown while in progress: “Fixing the login bug”",
    )
    metadata: dict[str, Any] | None = Field(default=None, description="Data to keep with it")


class TaskIdParams(ToolParams):
    taskId: str = Field(description="The task's id")


class TaskListParams(ToolParams):
    pass


class TaskUpdateParams(ToolParams):
    taskId: str = Field(description="The task's id")
    status: Literal["pending", "in_progress", "completed", "deleted"] | None = Field(
        default=None, description="The new status"
    )
    subject: str | None = None
    description: str | None = None
    activeForm: str | None = None
    owner: str | None = Field(default=None, description="Who works on it")
    addBlocks: list[str] | None = Field(
        default=None, description="Ids of tasks waiting for this one"
    )
    addBlockedBy: list[str] | None = Field(
        default=None, description="Ids of tasks this one waits for"
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="Keys to merge; null removes one"
    )


class _TaskTool(Tool[P]):
    """What the four tools share: the list, and a result that shows it."""

    is_mutating: ClassVar[bool] = False  # they change the model's own notes, never the user's files
    deferred: ClassVar[bool] = True  # loaded with ToolSearch when needed

    def __init__(self, tasks: TaskList) -> None:
        self.tasks = tasks

    def _result(self, output: str, display: str) -> ToolResult:
        rows = self.tasks.rows()
        return ToolResult(output=output, display=display, meta={"tasks": rows, "display": display})


class TaskCreateTool(_TaskTool[TaskCreateParams]):
    name = "TaskCreate"

    def label(self, params: TaskCreateParams, cwd: StrPath | None = None) -> str:
        return f"Task: {one_line(params.subject)}"

    async def run(self, params: TaskCreateParams, ctx: ToolContext) -> ToolResult:
        try:
            task = self.tasks.create(
                params.subject, params.description or "", params.activeForm, params.metadata
            )
        except TaskListError as exc:
            return ToolResult.error(str(exc))
        return self._result(f"Task #{task.id} created: {task.subject}", f"Added #{task.id}")


class TaskGetTool(_TaskTool[TaskIdParams]):
    name = "TaskGet"

    def label(self, params: TaskIdParams, cwd: StrPath | None = None) -> str:
        return f"Task #{params.taskId.lstrip('#')}"

    async def run(self, params: TaskIdParams, ctx: ToolContext) -> ToolResult:
        try:
            task = self.tasks.get(params.taskId)
        except TaskListError as exc:
            return ToolResult.error(str(exc))
        return self._result(_details(task), f"#{task.id} {task.status}")


class TaskListTool(_TaskTool[TaskListParams]):
    name = "TaskList"

    def label(self, params: TaskListParams, cwd: StrPath | None = None) -> str:
        return "Task list"

    async def run(self, params: TaskListParams, ctx: ToolContext) -> ToolResult:
        count = len(self.tasks.tasks())
        return self._result(self.tasks.render(), f"{count} task{'s' if count != 1 else ''}")


class TaskUpdateTool(_TaskTool[TaskUpdateParams]):
    name = "TaskUpdate"

    def label(self, params: TaskUpdateParams, cwd: StrPath | None = None) -> str:
        what = params.status or "update"
        return f"Task #{params.taskId.lstrip('#')}: {what.replace('_', ' ')}"

    async def run(self, params: TaskUpdateParams, ctx: ToolContext) -> ToolResult:
        names = {"activeForm": "active_form", "addBlocks": "add_blocks"}
        names |= {"addBlockedBy": "add_blocked_by"}
        changes = {
            names.get(key, key): value
            for key, value in params.model_dump(exclude={"taskId"}).items()
            if value is not None
        }
        if not changes:
            return ToolResult.error("Nothing to change: give a status or a field to update.")
        try:
            task = self.tasks.update(params.taskId, **changes)
        except TaskListError as exc:
            return ToolResult.error(str(exc))
        bare = params.taskId.strip().lstrip("#")
        if task is None:
            return self._result(f"Task #{bare} deleted.", f"Deleted #{bare}")
        fields = ", ".join(sorted(changes))
        output = f"Task #{task.id} updated ({fields}): {task.line()}"
        if task.status == "completed" and not self.tasks.has_open_tasks():
            output += "\nEvery task on the list is completed."
        return self._result(output, f"#{task.id} {task.status.replace('_', ' ')}")


def _details(task: Task) -> str:
    lines = [f"Task #{task.id}: {task.subject}", f"Status: {task.status}"]
    if task.description:
        lines.append(f"Description: {task.description}")
    if task.active_form:
        lines.append(f"While in progress: {task.active_form}")
    if task.owner:
        lines.append(f"Owner: {task.owner}")
    if task.blocked_by:
        lines.append("Blocked by: " + ", ".join("#" + b for b in task.blocked_by))
    if task.blocks:
        lines.append("Blocks: " + ", ".join("#" + b for b in task.blocks))
    if task.metadata:
        lines.append(f"Metadata: {task.metadata}")
    return "\n".join(lines)


def task_list_tools(tasks: TaskList) -> list[Tool[Any]]:
    return [TaskCreateTool(tasks), TaskGetTool(tasks), TaskListTool(tasks), TaskUpdateTool(tasks)]
