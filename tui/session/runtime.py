"""One session's parts, as tui.session.assembly put them together, and what the session does
with them: start, switch model, permission mode or output style, clear, close.

Every front end (headless, the TUI, the plain REPL) drives a ``Runtime``
through tui.session.driver. Its fields are set once, when it is assembled;
what changes while the session runs lives in the part whose job it is and
changes through that part's methods: the model in ``models``, the permission
mode in ``gate``, the output style in ``styles``, the system prompt in
``prompt``, the transcript and context manager in ``current``, the tools the
model has in ``runner``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.core.events import EventSink, ModeChanged, Notice, NoticeLevel
from agent.core.locations import config_dir
from agent.core.messages import TextBlock
from agent.instructions.custom_commands import DiscoveredCommands
from agent.instructions.hooks import HookRunner, additional_context_text
from agent.instructions.memory import MemoryFile
from agent.instructions.output_styles import OutputStyle, OutputStyles
from agent.instructions.plan import PlanState, plan_file_path
from agent.instructions.skills import DiscoveredSkills, InvokedSkills
from agent.loop.agent import Agent
from agent.loop.tool_runner import ToolRunner
from agent.mcp.servers import McpServers
from agent.model.catalog import in_table
from agent.permissions.gate import PermissionGate
from agent.permissions.rules import Rule, is_permission_mode
from agent.permissions.settings import Settings
from agent.plugins.loader import LoadedPlugins
from agent.sessions.session import Session
from compaction.manager import ContextManager
from tools.base import Tool, ToolContext
from tools.bash import BashTool
from tools.file_checkpoints import FileCheckpoints
from tools.file_state import FileStateCache
from tools.jobs import JobRegistry
from tools.structured_output import StructuredOutputTool
from tools.task_list import TaskList, task_list_path
from tools.watching import FileWatcher
from tools.worktrees import Worktrees
from tui.session.current_session import CurrentSession
from tui.session.mcp_setup import McpToolList, start_mcp_servers
from tui.session.options import RunOptions
from tui.session.output_style import OutputStyleChoice
from tui.session.sandbox_setup import SandboxSetup
from tui.session.session_hooks import SessionHooks
from tui.session.session_model import SessionModel
from tui.session.session_setup import bypass_refusal, remember_rule, watch_transcript
from tui.session.subagents import Subagents
from tui.session.system_prompt import SystemPrompt
from tui.session.working_dir import WorkingDirectory


@dataclass(frozen=True, eq=False)
class Runtime:
    """One session's parts, wired; ``aclose()`` (or ``close()`` without a loop) releases them."""

    options: RunOptions
    emit: EventSink
    cwd: Path  # where the session started: its transcripts and settings belong there
    directory: WorkingDirectory  # where it works now (EnterWorktree moves it)
    worktrees: Worktrees  # the worktree it is in, if any
    settings: Settings
    models: SessionModel  # the model and its thinking: /model, plan mode (opusplan)
    gate: PermissionGate  # the permission mode and rules
    current: CurrentSession  # the transcript and the context manager: /clear replaces both
    file_state: FileStateCache
    skills: DiscoveredSkills
    invoked_skills: InvokedSkills
    custom_commands: DiscoveredCommands
    styles: OutputStyleChoice  # /output-style
    plan: PlanState
    tasks: TaskList  # the model's task list (TaskCreate / TaskUpdate), /todos
    hooks: HookRunner
    session_hooks: SessionHooks
    prompt: SystemPrompt  # rebuilt when the model, the style or the memory files change
    tool_context: ToolContext
    watcher: FileWatcher
    sandbox: SandboxSetup
    jobs: JobRegistry
    subagents: Subagents
    mcp: McpServers
    mcp_tools: McpToolList  # the MCP tools requests carry: published at turn boundaries
    runner: ToolRunner  # the tools the model has now (MCP servers add theirs as they connect)
    agent: Agent
    structured: StructuredOutputTool | None  # --json-schema
    checkpoints: FileCheckpoints | None  # the SDK's file checkpointing
    resumed: bool
    nested_instructions: list[str]  # re-sent in full after a compaction
    hook_context: list[str]  # SessionStart / UserPromptSubmit context for the next request
    mcp_questions: list[asyncio.Task[None]]  # asking about a project's MCP servers
    plugins: LoadedPlugins  # --plugin-dir and enabledPlugins, as loaded at the start

    # -- what the session has now ---------------------------------------------------------

    @property
    def session(self) -> Session:
        return self.current.session

    @property
    def context(self) -> ContextManager:
        return self.current.context

    @property
    def model(self) -> str:
        """The model the session sends (a custom command's turn may send another)."""
        return self.models.current

    @property
    def tools(self) -> list[Tool[Any]]:
        return list(self.runner.tools.values())

    @property
    def system(self) -> list[TextBlock]:
        return self.prompt.blocks

    @property
    def memory_files(self) -> list[MemoryFile]:
        return self.prompt.memory_files

    @property
    def memory_texts(self) -> list[str]:
        return self.prompt.memory_texts

    @property
    def skills_text(self) -> str:
        return self.prompt.skills_text

    @property
    def output_style(self) -> OutputStyle:
        return self.styles.current

    @property
    def output_styles(self) -> OutputStyles:
        return self.styles.styles

    # -- running ----------------------------------------------------------------------------

    async def start(self) -> None:
        """The async part of start-up: MCP servers (connecting meanwhile), model limits from the
        Models API (meanwhile too, in a new conversation), SessionStart hooks."""
        question = start_mcp_servers(
            self.mcp,
            self.runner.ask,
            self.options.headless,
            self.gate,
            self.remember_rule,
            self.emit_notice,
        )
        if question is not None:
            self.mcp_questions.append(question)
        if self.resumed and self.limits_decide_first_request():
            await self.refresh_model_limits()
        else:
            self.models.refresh_limits_meanwhile(self.agent.client)
        await self.run_session_start("resume" if self.resumed else "startup")
        if self.options.headless:  # a -p run has one prompt: its servers must be there for it
            await self.mcp.wait()  # bounded: see agent.mcp.servers
        self.mcp_tools.turn_started()  # nothing is sent yet: a turn boundary

    def limits_decide_first_request(self) -> bool:
        """Whether the Models API's figures could change what a resumed conversation's first
        request does, so it waits for them: when the table does not know the model, or the
        conversation is past half the table's auto-compact threshold (a window the API
        reports at less than half the table's is not expected). Else they come meanwhile,
        as in a new conversation, and the request goes without a round trip first."""
        if not in_table(self.models.current):
            return True
        return self.context.count(self.agent) >= self.context.limits(self.agent).auto_compact // 2

    async def refresh_model_limits(self) -> None:
        await self.models.refresh_limits(self.agent.client)

    async def run_session_start(self, source: str) -> None:
        if not self.hooks.has("SessionStart", source):
            return
        outcome = await self.hooks.run("SessionStart", source, {"source": source})
        for message in outcome.messages:
            self.emit_notice(message)
        if text := additional_context_text("SessionStart", outcome):
            self.hook_context.append(text)

    def emit_notice(self, text: str, level: NoticeLevel = "warning") -> None:
        self.emit(Notice(text, level))

    def remember_rule(self, rule: Rule) -> None:
        """Save an "always allow" answer; if the file cannot take it, it holds for this session."""
        remember_rule(self.cwd, self.emit_notice, rule)

    async def submit_hooks(self, prompt: str) -> str | None:
        """UserPromptSubmit hooks: why the prompt may not be sent, or None (context queued)."""
        check = await self.session_hooks.prompt_submitted(prompt)
        if check.context:
            self.hook_context.append(check.context)
        return check.reason if check.blocked else None

    # -- what the user switches --------------------------------------------------------------

    def set_model(self, name: str, effort: str | None = None) -> None:
        """/model: switch the model (and the effort, when given); ThinkingError for a bad
        effort."""
        self.use_model(self.models.switch(name, effort, in_plan=self.gate.mode == "plan"))
        self.apply_thinking()

    def apply_thinking(self) -> None:
        """The model's thinking and effort in the requests (and the hooks' input), and what
        the model cannot do of them said once."""
        self.agent.config.thinking = self.models.thinking
        self.hooks.effort = self.models.thinking.effort
        for note in self.agent.request_settings().notes:
            self.emit_notice(note, "info")

    def use_model(self, model: str) -> None:
        """Send ``model`` from now on; the system prompt names it, so it is rebuilt."""
        if model == self.models.current and model == self.agent.model:
            return
        self.models.use(model)
        self.agent.model = model
        self.rebuild_system_prompt()

    @contextmanager
    def model_for_turn(self, typed: str | None) -> Iterator[None]:
        """A custom command's ``model``, for its turn only (nothing when ``typed`` is empty)."""
        if not typed:
            yield
            return
        previous = self.agent.model
        self.agent.model = self.models.parse(typed).id
        try:
            yield
        finally:
            self.agent.model = previous

    def switch_output_style(self, name: str) -> str:
        """/output-style NAME: the style from now on, saved; the words to show (ValueError
        for an unknown name)."""
        text = self.styles.switch(name)
        self.rebuild_system_prompt()
        return text

    def rebuild_system_prompt(self, reload_memory: bool = False) -> None:
        """A fresh system prompt (a new list: the context manager caches by its identity)."""
        if reload_memory:
            self.prompt.load_memory()
        self.agent.system = self.prompt.rebuild()

    def set_permission_mode(self, mode: str) -> None:
        """Every change of mode (Shift-Tab, /plan, an approved plan) passes here, and says so."""
        if not is_permission_mode(mode):
            raise ValueError(f"unknown permission mode {mode!r}")
        disabled_by = self.settings.bypass_disabled_by
        if mode == "bypassPermissions" and disabled_by is not None:
            raise ValueError(bypass_refusal(disabled_by))
        previous, self.gate.mode = self.gate.mode, mode
        if self.models.name.opusplan:  # opus while planning, sonnet for the work
            self.use_model(self.models.name.for_mode(mode == "plan"))
        if mode == "plan":
            self.plan.enter()
        else:
            self.plan.exit()
        if mode != previous:
            self.emit(ModeChanged(mode, previous))

    def clear_conversation(self) -> None:
        """/clear: a new session with an empty conversation; the old transcript stays on disk.

        (/clear runs the old session's SessionEnd hooks first, with reason "clear".)"""
        if (notes := self.context.session_memory) is not None:
            notes.cancel()  # an update of the old session's notes must not land in the new one
        self.session.detach_file_state(self.file_state)
        self.session.close()
        self.file_state.clear()
        session = Session.create(self.cwd, self.model)
        watch_transcript(session, self.file_state, self.emit_notice)
        self.agent.conversation.restart(session)
        self.tool_context.session_dir = self.jobs.folder = session.folder
        self.invoked_skills.clear()
        self.plan.path = plan_file_path(config_dir(), session.id)
        self.gate.plan_file = self.plan.path
        self.tasks.reset(task_list_path(config_dir(), session.id))
        self.hooks.session_id = session.id
        self.hooks.transcript_path = session.path
        self.current.restart(session, self.model)
        self.agent.policy = self.context
        self.nested_instructions.clear()
        self.mcp.forget_announced()
        self.mcp_tools.forget()
        self.prompt.new_session()
        self.rebuild_system_prompt(reload_memory=True)

    # -- the end -----------------------------------------------------------------------------

    def close(self) -> None:
        """Release the parts that need no event loop: jobs, shells, what hooks left running,
        the watcher, the transcript."""
        self.jobs.kill_all()
        for tool in self.tools:
            if isinstance(tool, BashTool):
                tool.kill_background()
        self.hooks.kill_lingering()
        self.watcher.stop()
        self.session.close()

    async def aclose(self) -> None:
        """A notes update in flight stopped, ``close()``, then the API client's HTTP
        connections (they need the loop)."""
        if (notes := self.context.session_memory) is not None:
            await notes.aclose()
        await self.jobs.stop_all()
        self.close()
        for question in self.mcp_questions:
            question.cancel()
        await self.mcp.aclose()
        await self.models.aclose()
        await self.agent.client.aclose()
