"""The session's task list: what the model plans to do, and how far it has got.

The model keeps it with TaskCreate / TaskUpdate / TaskGet / TaskList
(tools/task_list_tools.py). The list lives in one JSON file per session, written
atomically on every change, so it survives a compaction (compaction restores it as
text) and a resume (``ccx -c`` reopens the same file). Watchers (the full-screen
app's task panel) are told after each change.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from tools.atomic_file import atomic_write

Status = Literal["pending", "in_progress", "completed"]
STATUS_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
MAX_TASKS = 500  # a runaway loop of TaskCreate must not grow the file (and its restoration) forever


@dataclass
class Task:
    id: str
    subject: str
    description: str = ""
    active_form: str | None = None
    status: Status = "pending"
    owner: str | None = None
    blocks: list[str] = field(default_factory=list)
    blocked_by: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        """``#3 [~] Run the tests (blocked by #2)``: one row of the list."""
        text = f"#{self.id} {STATUS_MARK[self.status]} {self.subject}"
        if self.owner:
            text += f" (owner: {self.owner})"
        if open_blockers := self.blocked_by:
            text += f" (blocked by {', '.join('#' + b for b in open_blockers)})"
        return text

    def row(self) -> dict[str, Any]:
        """The task as the front ends draw it."""
        return {
            "id": self.id,
            "subject": self.subject,
            "status": self.status,
            "active_form": self.active_form or self.subject,
        }


class TaskListError(ValueError):
    """A change the list cannot make; the message is for the model."""


class TaskList:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._tasks: dict[str, Task] = {}
        self._next = 1
        self._watchers: list[Callable[[TaskList], None]] = []
        self.load_problem: str | None = None  # why a saved list could not be read
        if path is not None:
            self._load(path)

    # -- reading ------------------------------------------------------------------------

    def tasks(self) -> list[Task]:
        return list(self._tasks.values())

    def get(self, task_id: str) -> Task:
        task = self._tasks.get(_bare(task_id))
        if task is None:
            known = ", ".join("#" + t for t in self._tasks) or "none yet"
            raise TaskListError(f"There is no task #{_bare(task_id)} (tasks: {known}).")
        return task

    def rows(self) -> list[dict[str, Any]]:
        return [task.row() for task in self._tasks.values()]

    def render(self) -> str:
        """The whole list as text, for TaskList and for what a compaction restores."""
        if not self._tasks:
            return "The task list is empty."
        done = sum(task.status == "completed" for task in self._tasks.values())
        lines = [f"{done} of {len(self._tasks)} tasks completed:"]
        lines += [task.line() for task in self._tasks.values()]
        return "\n".join(lines)

    def has_open_tasks(self) -> bool:
        return any(task.status != "completed" for task in self._tasks.values())

    # -- changing -----------------------------------------------------------------------

    def create(
        self,
        subject: str,
        description: str = "",
        active_form: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Task:
        if not subject.strip():
            raise TaskListError("A task needs a subject: a few words saying what it is.")
        if len(self._tasks) >= MAX_TASKS:
            raise TaskListError(
                f"The task list already has {MAX_TASKS} tasks. Delete finished ones "
                '(TaskUpdate with status "deleted") before adding more.'
            )
        task = Task(
            str(self._next),
            subject.strip(),
            description,
            active_form or None,
            metadata=dict(metadata or {}),
        )
        self._next += 1
        self._tasks[task.id] = task
        self._changed()
        return task

    def update(self, task_id: str, **changes: Any) -> Task | None:
        """Apply ``changes`` (fields of Task, plus ``status="deleted"``, ``add_blocks`` and
        ``add_blocked_by``); the task, or None once deleted."""
        task = self.get(task_id)
        if changes.get("status") == "deleted":
            del self._tasks[task.id]
            for other in self._tasks.values():
                other.blocks = [b for b in other.blocks if b != task.id]
                other.blocked_by = [b for b in other.blocked_by if b != task.id]
            self._changed()
            return None
        for other_id in [*changes.get("add_blocks", ()), *changes.get("add_blocked_by", ())]:
            if _bare(other_id) == task.id:
                raise TaskListError(f"Task #{task.id} cannot block itself.")
            self.get(other_id)  # raises for an unknown id, before anything changes
        if "subject" in changes and not str(changes["subject"]).strip():
            raise TaskListError("A task's subject cannot be empty.")
        for name in ("subject", "description", "active_form", "status", "owner"):
            if name in changes:
                setattr(task, name, changes[name])
        if metadata := changes.get("metadata"):
            for key, value in metadata.items():  # a null value removes the key
                if value is None:
                    task.metadata.pop(key, None)
                else:
                    task.metadata[key] = value
        for other_id in map(_bare, changes.get("add_blocks", ())):
            _add(task.blocks, other_id)
            _add(self._tasks[other_id].blocked_by, task.id)
        for other_id in map(_bare, changes.get("add_blocked_by", ())):
            _add(task.blocked_by, other_id)
            _add(self._tasks[other_id].blocks, task.id)
        if task.status == "completed":
            for other in self._tasks.values():  # a finished task no longer holds anyone up
                other.blocked_by = [b for b in other.blocked_by if b != task.id]
        self._changed()
        return task

    def reset(self, path: Path | None) -> None:
        """Start an empty list kept at ``path`` (``/clear``: a new session); the old file stays."""
        self.path = path
        self._tasks.clear()
        self._next = 1
        for watcher in list(self._watchers):
            watcher(self)

    def watch(self, watcher: Callable[[TaskList], None]) -> None:
        self._watchers.append(watcher)

    # -- the file -----------------------------------------------------------------------

    def _changed(self) -> None:
        if self.path is not None:
            data = {"next_id": self._next, "tasks": [asdict(t) for t in self._tasks.values()]}
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(self.path, json.dumps(data, indent=1).encode("utf-8"))
            except OSError as exc:  # the list still works in memory; say once why it is not kept
                self.load_problem = f"The task list could not be saved to {self.path}: {exc}"
        for watcher in list(self._watchers):
            watcher(self)

    def _load(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            tasks = [Task(**entry) for entry in data["tasks"]]
            next_id = int(data["next_id"])
        except FileNotFoundError:
            return
        except (OSError, ValueError, TypeError, KeyError) as exc:
            self.load_problem = (
                f"The saved task list {path} could not be read ({exc}); it starts empty."
            )
            return
        self._tasks = {task.id: task for task in tasks if task.status in STATUS_MARK}
        self._next = max([next_id, *(int(t) + 1 for t in self._tasks if t.isdigit())])


def task_list_path(config_dir: Path, session_id: str) -> Path:
    return Path(config_dir) / "tasks" / f"{session_id}.json"


def _bare(task_id: str) -> str:
    return str(task_id).strip().lstrip("#")


def _add(items: list[str], item: str) -> None:
    if item not in items:
        items.append(item)
