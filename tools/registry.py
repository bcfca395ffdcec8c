"""The tools a session starts with, and the label of a stored call (for resumed history)."""

from __future__ import annotations

import functools
import os
from typing import Any

from tools.base import Tool
from tools.bash import BashTool, CommandEnv
from tools.edit import EditTool
from tools.glob import GlobTool
from tools.grep import GrepTool
from tools.jobs import JobRegistry
from tools.monitor import MonitorTool
from tools.notebook_edit import NotebookEditTool
from tools.read import ReadTool
from tools.sandbox import SandboxPolicy
from tools.task_tools import TaskOutputTool, TaskStopTool
from tools.web_fetch import WebFetchTool
from tools.web_search import WebSearchTool
from tools.worktree_tools import EnterWorktreeTool, ExitWorktreeTool
from tools.worktrees import Worktrees
from tools.write import WriteTool


def default_tools(
    sandbox: SandboxPolicy | None = None,
    command_env: CommandEnv | None = None,
    jobs: JobRegistry | None = None,
    worktrees: Worktrees | None = None,
) -> list[Tool[Any]]:
    """``sandbox``: the policy Bash commands run under (None: unsandboxed); ``command_env``:
    per-command environment for Bash (see BashTool); ``jobs``: the session's background jobs
    (with it, Bash may run commands in the background, and TaskOutput, TaskStop and Monitor
    come);
    ``worktrees``: the session's worktree (with it, EnterWorktree and ExitWorktree come)."""
    bash = BashTool(sandbox=sandbox, command_env=command_env, jobs=jobs)
    tools: list[Tool[Any]] = [
        ReadTool(),
        WriteTool(),
        EditTool(),
        NotebookEditTool(),
        bash,
        GlobTool(),
        GrepTool(),
        WebFetchTool(),  # its page reader is connected by the runtime (tui/session/page_reader.py)
        WebSearchTool(),  # and its searcher (tui/session/web_searcher.py)
    ]
    if jobs is not None:
        tools += [TaskOutputTool(jobs), TaskStopTool(jobs), MonitorTool(bash, jobs)]
    if worktrees is not None:
        tools += [EnterWorktreeTool(worktrees), ExitWorktreeTool(worktrees)]
    return tools


@functools.cache
def _labellers() -> dict[str, Tool[Any]]:
    """One instance of each built-in tool that needs nothing to be built, to label with."""
    return {
        tool.name: tool
        for tool in default_tools(jobs=JobRegistry(), worktrees=Worktrees(lambda _: None))
    }


def label_call(name: str, tool_input: dict[str, Any], cwd: str | os.PathLike[str]) -> str:
    """The label a call of ``name`` had (what ToolStarted carried), from its stored input;
    the tool's name alone when the tool is not a built-in or the input does not parse."""
    tool = _labellers().get(name)
    if tool is None:
        return name
    params = tool.parse(tool_input)
    if not isinstance(params, tool.Params):
        return name
    try:
        return tool.label(params, cwd)
    except Exception:  # a label is decoration: never let it break drawing the history
        return name
