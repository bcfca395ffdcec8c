"""Where the session works, and moving it (EnterWorktree / ExitWorktree).

The folder a session was started in stays its home (transcripts, settings,
trust); the working directory is where the tools resolve relative paths,
where Bash's shell stands, the project root permission rules and protected
paths are judged against, the folder hooks run in, and the one the system
prompt and its memory files (CLAUDE.md) describe. ``move_to`` moves all of
them at once, so no part is left pointing at the old folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from agent.core.events import EventSink, Notice, WorkingDirectoryChanged
from agent.core.messages import TextBlock
from agent.instructions.hooks import HookRunner
from agent.permissions.gate import PermissionGate
from agent.permissions.settings import Settings
from tools.base import ToolContext
from tools.bash import BashTool
from tools.jobs import JobRegistry
from tools.worktrees import BaseRef
from tui.session.system_prompt import SystemPrompt


class WorkingDirectory:
    """The session's working directory; ``shells`` is asked for when moving (the Bash tools
    are made after this)."""

    def __init__(
        self,
        launch: Path,
        tool_context: ToolContext,
        gate: PermissionGate,
        prompt: SystemPrompt,
        hooks: HookRunner,
        shells: Callable[[], list[BashTool]],
        emit: EventSink,
        use_prompt: Callable[[list[TextBlock]], None],
    ) -> None:
        """``use_prompt``: hands the rebuilt system prompt to the loop."""
        self.launch = launch
        self.current = launch
        self.tool_context = tool_context
        self.gate = gate
        self.prompt = prompt
        self.hooks = hooks
        self.shells = shells
        self.emit = emit
        self.use_prompt = use_prompt

    def move_to(self, path: Path) -> None:
        """Make ``path`` the working directory of every part that has one."""
        path = Path(os.path.realpath(path))
        self.current = path
        self.tool_context.cwd = path
        for shell in self.shells():
            shell.cwd = path
        self.gate.cwd = path
        self.gate.project_root = path
        self.gate.shell_cwd = path
        self.hooks.cwd = path
        memory = self.prompt.memory
        memory.cwd = path
        if path not in memory.roots:
            memory.roots = (*memory.roots, path)
        self.prompt.cwd = path
        self.prompt.load_memory()
        self.use_prompt(self.prompt.rebuild())
        self.emit(Notice(f"Working directory: {path}", "info"))
        self.emit(WorkingDirectoryChanged(str(path)))


def worktree_base_ref(settings: Settings) -> BaseRef:
    """``worktree.baseRef`` of the settings: "head" branches from HEAD, "fresh" (the default)
    from the remote's default branch when there is one."""
    section = settings.get("worktree")
    value = section.get("baseRef") if isinstance(section, dict) else None
    return "head" if value == "head" else "fresh"


def jobs_running_in(jobs: JobRegistry, folder: Path) -> list[str]:
    """The ids of the background jobs still running in ``folder`` or below it."""
    return [
        job.id for job in jobs.running() if job.cwd is not None and job.cwd.is_relative_to(folder)
    ]
