"""The tools a session starts with."""

from __future__ import annotations

from tools.base import Tool
from tools.bash import BashTool, CommandEnv
from tools.edit import EditTool
from tools.glob import GlobTool
from tools.grep import GrepTool
from tools.read import ReadTool
from tools.sandbox import SandboxPolicy
from tools.write import WriteTool


def default_tools(
    sandbox: SandboxPolicy | None = None, command_env: CommandEnv | None = None
) -> list[Tool]:
    """``sandbox``: the policy Bash commands run under (None: unsandboxed); ``command_env``:
    per-command environment for Bash (see BashTool)."""
    return [
        ReadTool(),
        WriteTool(),
        EditTool(),
        BashTool(sandbox=sandbox, command_env=command_env),
        GlobTool(),
        GrepTool(),
    ]
