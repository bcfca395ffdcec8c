"""What a session does once a batch of tool calls has its results, before the next request.

The permission gate follows the shell's working directory; a Read of a
background job's output file counts as the model reading the job; a Read
inside a folder with its own memory file (a nested CLAUDE.md) brings that
file's instructions in, as a reminder now and again after every compaction;
and the tool hooks' notes for the model are passed on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent.core.messages import Message, ToolUseBlock
from agent.loop.tool_hooks import ToolHooks
from agent.permissions.gate import PermissionGate
from tools.bash import BashTool
from tools.jobs import JobRegistry
from tui.session.jobs_setup import mark_output_reads
from tui.session.system_prompt import SystemPrompt


class AfterTools:
    """The loop's ``on_tool_results``: returns the reminders for the model."""

    def __init__(
        self,
        gate: PermissionGate,
        shell: BashTool | None,
        tool_hooks: ToolHooks,
        jobs: JobRegistry,
        resolve: Callable[[str], Path],
        prompt: SystemPrompt,
        nested_instructions: list[str],
    ) -> None:
        """``shell``: the session's Bash tool, if it has one; ``nested_instructions``: the
        session's list of them, re-sent after a compaction (appended to here)."""
        self.gate = gate
        self.shell = shell
        self.tool_hooks = tool_hooks
        self.jobs = jobs
        self.resolve = resolve
        self.prompt = prompt
        self.nested_instructions = nested_instructions

    def __call__(self, uses: list[ToolUseBlock], _message: Message) -> list[str]:
        if self.shell is not None and self.shell.cwd is not None:
            self.gate.shell_cwd = self.shell.cwd
        reminders = self.tool_hooks.drain_notes()
        mark_output_reads(self.jobs, uses, self.resolve)
        for use in uses:
            if use.get("name") != "Read" or not isinstance(use.get("input"), dict):
                continue
            path = use["input"].get("file_path")
            if not isinstance(path, str):
                continue
            for memory_file in self.prompt.memory.nested_for(self.resolve(path)):
                text = (
                    f"Instructions from {memory_file.path} (apply to files in that directory):\n"
                    f"{memory_file.content}"
                )
                self.nested_instructions.append(text)
                reminders.append(text)
        self.prompt.emit_memory_warnings()
        return reminders
