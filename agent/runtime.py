"""Assembling a working agent from options: settings, session, tools, permissions, prompt.

This is the composition root that every front end shares (headless, the TUI,
the plain REPL): it decides which concrete parts the loop gets, so the loop
and the parts stay ignorant of each other.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.api import ModelClient
from agent.events import EventSink, Notice, SessionStarted
from agent.loop import Agent, AgentConfig
from agent.memory import MemoryFiles
from agent.messages import Message
from agent.models import resolve_model
from agent.permissions import PermissionGate, Rule
from agent.session import Session, find_session, latest_session_path, rebuild_file_state
from agent.settings import Settings, add_permission_rule, load_settings, project_root
from agent.system_prompt import build_system_prompt
from agent.tool_runner import AskPermission, ToolRunner
from tools.base import ToolContext
from tools.bash import BashTool
from tools.file_state import FileStateCache
from tools.registry import default_tools
from tools.watching import FileWatcher

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")


class StartupError(Exception):
    """Options that cannot be honoured (an unknown session id, a bad mode); shown as is."""


@dataclass
class RunOptions:
    cwd: Path
    model: str | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    max_turns: int | None = None
    continue_session: bool = False
    resume: str | None = None
    autocompact: str | None = None
    fallback_model: str | None = None
    headless: bool = True
    watch_files: bool = True


def split_rules(values: list[str]) -> list[str]:
    """`--allowedTools "Read,Bash(git log *)" Edit` -> ["Read", "Bash(git log *)", "Edit"]."""
    rules: list[str] = []
    for value in values:
        depth, current = 0, ""
        for char in value:
            if char == "(":
                depth += 1
            elif char == ")":
                depth = max(0, depth - 1)
            if depth == 0 and (char == "," or char.isspace()):
                if current.strip():
                    rules.append(current.strip())
                current = ""
                continue
            current += char
        if current.strip():
            rules.append(current.strip())
    return rules


class Runtime:
    """One session's parts, wired; ``close()`` releases the watcher and the transcript."""

    def __init__(self, options: RunOptions, emit: EventSink, ask: AskPermission | None = None):
        self.options = options
        self.emit = emit
        self.cwd = options.cwd.resolve()
        self.settings: Settings = load_settings(self.cwd)
        for warning in self.settings.warnings:
            emit(Notice(warning, "warning"))
        for key, value in self.settings.env.items():
            os.environ.setdefault(key, str(value))
        self.model = resolve_model(
            options.model or self.settings.model or os.environ.get("ANTHROPIC_MODEL")
        )
        self.gate = self._permission_gate()
        self.file_state = FileStateCache()
        self.session, restored = self._open_session()
        self.session.attach_file_state(self.file_state)
        self.memory = MemoryFiles(self.cwd)
        memory_files = self.memory.load()
        self.system = build_system_prompt(self.cwd, self.model, memory_files)
        self.tool_context = ToolContext(
            cwd=self.cwd, file_state=self.file_state, session_dir=self.session.folder
        )
        self.watcher = FileWatcher(self.file_state)
        if options.watch_files:
            self.watcher.start()
        self.tools = default_tools()
        self.runner = ToolRunner(
            self.tools, self.tool_context, self.gate, emit, ask, self._remember_rule
        )
        self.agent = Agent(
            config=AgentConfig(
                model=self.model,
                fallback_model=options.fallback_model or self.settings.fallback_model,
                max_turns=options.max_turns,
            ),
            client=ModelClient(emit=emit),
            runner=self.runner,
            system=self.system,
            emit=emit,
            session=self.session,
            messages=restored,
            reminder_sources=[self.watcher.drain_notices],
            on_tool_results=self._after_tools,
        )
        emit(
            SessionStarted(
                session_id=self.session.id,
                model=self.model,
                cwd=str(self.cwd),
                transcript_path=str(self.session.path),
                resumed=bool(options.continue_session or options.resume),
                tools=[tool.name for tool in self.tools],
                permission_mode=self.gate.mode,
            )
        )

    def _permission_gate(self) -> PermissionGate:
        mode = self.options.permission_mode or self.settings.permission_mode or "default"
        if mode not in PERMISSION_MODES:
            raise StartupError(
                f"Unknown permission mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}"
            )
        try:
            allow = self.settings.allow + [
                Rule.parse(r, source="cli") for r in split_rules(self.options.allowed_tools)
            ]
            deny = self.settings.deny + [
                Rule.parse(r, source="cli") for r in split_rules(self.options.disallowed_tools)
            ]
        except ValueError as exc:
            raise StartupError(f"Bad permission rule: {exc}") from exc
        return PermissionGate(
            mode, allow, deny, self.settings.ask, cwd=self.cwd, project_root=project_root(self.cwd)
        )

    def _open_session(self) -> tuple[Session, list[Message]]:
        options = self.options
        path: Path | None = None
        if options.resume:
            path = find_session(options.resume, self.cwd)
            if path is None:
                raise StartupError(f"No session with id {options.resume!r} was found")
        elif options.continue_session:
            path = latest_session_path(self.cwd)
            if path is None:
                self.emit(Notice("No earlier session in this directory; starting a new one"))
        if path is None:
            return Session.create(self.cwd, self.model), []
        session, loaded = Session.open_existing(path, self.cwd)
        for repair in loaded.repairs:
            self.emit(Notice(f"Session repaired: {repair}", "warning"))
        rebuild_file_state(loaded, self.file_state)
        return session, list(loaded.messages)

    def _remember_rule(self, rule: Rule) -> None:
        target = project_root(self.cwd) / ".claude" / "settings.local.json"
        add_permission_rule(target, "allow", str(rule))

    def _after_tools(self, uses: list[dict[str, Any]], _message: Message) -> list[str]:
        """Keep the permission gate on the shell's directory; attach nested memory files."""
        bash = next((tool for tool in self.tools if isinstance(tool, BashTool)), None)
        if bash is not None and bash.cwd is not None:
            self.gate.shell_cwd = bash.cwd
        reminders = []
        for use in uses:
            if use.get("name") != "Read" or not isinstance(use.get("input"), dict):
                continue
            path = use["input"].get("file_path")
            if not isinstance(path, str):
                continue
            for memory_file in self.memory.nested_for(self.tool_context.resolve(path)):
                reminders.append(
                    f"Instructions from {memory_file.path} (apply to files in that directory):\n"
                    f"{memory_file.content}"
                )
        return reminders

    def close(self) -> None:
        for tool in self.tools:
            if isinstance(tool, BashTool):
                tool.kill_background()
        self.watcher.stop()
        self.session.close()
