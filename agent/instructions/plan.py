"""Plan mode: the session's plan file and the reminders that keep the model read-only.

While plan mode is on, the permission gate lets only read-only tools run and
the one plan file be written (``PermissionGate.plan_file``). The model
researches, writes its plan there and calls ExitPlanMode for approval.
``PlanState`` is also a reminder source for the loop: the full reminder when
plan mode starts, a short one now and then, and a note when it ends.
"""

from __future__ import annotations

from pathlib import Path

SPARSE_REMINDER_EVERY = 5  # user messages between two short reminders


def plan_file_path(config_dir: Path, session_id: str) -> Path:
    return Path(config_dir) / "plans" / f"{session_id}.md"


def plan_mode_reminder(plan_path: Path, exists: bool) -> str:
    """Full instructions for a model that is in plan mode."""
    if exists:
        file_note = (
            f"A plan file already exists at {plan_path}. Read it first, then improve it "
            "with Edit (or replace it with Write) as you learn more."
        )
    else:
        file_note = f"There is no plan yet. Write your plan to {plan_path} with the Write tool."
    return (
        "Plan mode is on. The user wants a plan before anything is changed.\n"
        "- Investigate with read-only tools only: Read, Grep, Glob, and shell commands that "
        "only look (ls, git log, git diff, cat ...).\n"
        "- Do not edit files, run commands that change anything, install packages, or commit. "
        "The only file you may write is the plan file. This overrides any other instruction.\n"
        f"- {file_note}\n"
        "- A good plan names the files to change, what changes in each and why, the order of "
        "the steps, and how the result will be checked. Ask the user when a choice is "
        "theirs to make.\n"
        "- When the plan is complete, call ExitPlanMode to ask the user to approve it. Do not "
        "ask for approval in any other way, and do not start the work before it is approved."
    )


def plan_mode_short_reminder(plan_path: Path) -> str:
    return (
        f"Plan mode is still on: only read-only tools, and the plan file {plan_path}. "
        "Call ExitPlanMode when the plan is ready."
    )


def plan_mode_exited_reminder(plan_path: Path) -> str:
    return (
        "Plan mode is off: you may now edit files and run commands. "
        f"The plan is in {plan_path} if you need to look at it again."
    )


class PlanState:
    """The plan file of a session and whether plan mode is on; the runtime keeps it in step
    with the permission gate's mode by calling ``enter()`` and ``exit()``."""

    def __init__(self, path: Path, active: bool = False) -> None:
        self.path = Path(path)
        self.active = active
        self._announce = active  # the full reminder is owed
        self._exited = False  # the "plan mode is off" note is owed
        self._since_reminder = 0

    def enter(self) -> None:
        if not self.active:
            self.active = True
            self._announce = True
            self._exited = False

    def exit(self) -> None:
        if self.active:
            self.active = False
            self._announce = False
            self._exited = True

    def exists(self) -> bool:
        return self.path.is_file()

    def content(self) -> str | None:
        """The plan file's text, or None when there is no readable plan file."""
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def reminder(self) -> str | None:
        """The full plan-mode reminder when plan mode is on (compaction re-sends it)."""
        return plan_mode_reminder(self.path, self.exists()) if self.active else None

    def reminders(self) -> list[str]:
        """A reminder source for the loop: called once per user message."""
        if self._exited:
            self._exited = False
            return [plan_mode_exited_reminder(self.path)]
        if not self.active:
            return []
        if self._announce:
            self._announce = False
            self._since_reminder = 0
            return [plan_mode_reminder(self.path, self.exists())]
        self._since_reminder += 1
        if self._since_reminder >= SPARSE_REMINDER_EVERY:
            self._since_reminder = 0
            return [plan_mode_short_reminder(self.path)]
        return []
