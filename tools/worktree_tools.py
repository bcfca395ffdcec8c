"""EnterWorktree and ExitWorktree: Claude Code 2.1.328's names and input schemas, on tools/worktrees.py.

EnterWorktree makes a git worktree on a new branch (or enters one that
exists, with ``path``) and moves the session there; ExitWorktree moves it
back, keeping the worktree or removing it (refused while it holds work,
unless ``discard_changes``). Both change state, so the permission gate asks.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar, Literal

from pydantic import Field

from tools.base import StrPath, Tool, ToolContext, ToolParams, ToolResult
from tools.worktrees import WorktreeError, Worktrees, WorktreeVisit


class EnterWorktreeParams(ToolParams):
    name: str | None = Field(
        default=None, description="Letters, digits, . _ - and /; max 64; random if omitted"
    )
    path: str | None = Field(default=None, description="An existing worktree to enter instead")


class ExitWorktreeParams(ToolParams):
    action: Literal["keep", "remove"]
    discard_changes: bool | None = None


class EnterWorktreeTool(Tool[EnterWorktreeParams]):
    name: ClassVar[str] = "EnterWorktree"
    deferred: ClassVar[bool] = True  # loaded with ToolSearch when needed

    def __init__(self, worktrees: Worktrees) -> None:
        self.worktrees = worktrees

    def label(self, params: EnterWorktreeParams, cwd: StrPath | None = None) -> str:
        if params.path:
            return f"Enter worktree {params.path}"
        return f"Enter worktree {params.name}" if params.name else "Enter a new worktree"

    async def run(self, params: EnterWorktreeParams, ctx: ToolContext) -> ToolResult:
        if params.name is not None and params.path is not None:
            return ToolResult.error("Pass either `name` (a new worktree) or `path`, not both.")
        try:
            if params.path is not None:
                visit = await asyncio.to_thread(self.worktrees.enter_existing, ctx.cwd, params.path)
            else:
                visit = await asyncio.to_thread(self.worktrees.create, ctx.cwd, params.name)
        except WorktreeError as error:
            return ToolResult.error(str(error))
        return _entered(visit)


class ExitWorktreeTool(Tool[ExitWorktreeParams]):
    name: ClassVar[str] = "ExitWorktree"
    deferred: ClassVar[bool] = True  # loaded with ToolSearch when needed

    def __init__(self, worktrees: Worktrees) -> None:
        self.worktrees = worktrees

    def label(self, params: ExitWorktreeParams, cwd: StrPath | None = None) -> str:
        return "Leave the worktree" + (" and remove it" if params.action == "remove" else "")

    async def run(self, params: ExitWorktreeParams, ctx: ToolContext) -> ToolResult:
        if self.worktrees.active is None:
            text = "No worktree session is active (EnterWorktree was not used): nothing changed."
            return ToolResult(text, display="No worktree to leave")
        discard, back = bool(params.discard_changes), self.worktrees.active.original_cwd
        try:
            text = await asyncio.to_thread(self.worktrees.leave, params.action, discard)
        except WorktreeError as error:
            return ToolResult.error(str(error))
        return ToolResult(text, display=text, meta={"cwd": str(back)})


def _entered(visit: WorktreeVisit) -> ToolResult:
    on = f" on the new branch {visit.branch}" if visit.created and visit.branch else ""
    made = "Made the worktree" if visit.created else "Entered the worktree"
    text = (
        f"{made} {visit.path}{on}. The session now works there: relative paths, Bash and "
        "permissions follow it. Leave it with ExitWorktree (keep or remove)."
    )
    display = f"Switched to worktree {visit.path}" + (f" (branch {visit.branch})" if on else "")
    meta = {"cwd": str(visit.path), "branch": visit.branch, "created": visit.created}
    return ToolResult(text, display=display, meta=meta)
