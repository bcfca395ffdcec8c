"""Assembling a working agent from options: settings, session, tools, permissions, prompt.

This is the composition root that every front end shares (headless, the TUI,
the plain REPL): it decides which concrete parts the loop gets, so the loop
and the parts stay ignorant of each other.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agent.core.events import EventSink, ModeChanged, Notice, SessionStarted
from agent.core.locations import config_dir
from agent.core.messages import Message
from agent.instructions.custom_commands import discover_commands
from agent.instructions.hooks import HookRunner, additional_context_text
from agent.instructions.memory import MemoryFile, MemoryFiles
from agent.instructions.output_styles import style_section
from agent.instructions.plan import PlanState, plan_file_path
from agent.instructions.skills import InvokedSkills, discover_skills, skills_listing
from agent.instructions.system_prompt import build_system_prompt
from agent.loop.agent import Agent, AgentConfig
from agent.loop.tool_hooks import ToolHooks
from agent.loop.tool_runner import AskPermission, ToolRunner
from agent.model.catalog import ModelLimits, limits_for
from agent.model.client import ModelClient
from agent.permissions.gate import PermissionGate, Rule
from agent.permissions.safe_git import env_for_command
from agent.permissions.settings import (
    Settings,
    add_permission_rule,
    load_settings,
    merge_settings,
    project_root,
    read_settings_arg,
)
from agent.sessions.session import (
    LoadedSession,
    Session,
    rebuild_file_state,
    transcript_write_notice,
)
from tools.base import ToolContext
from tools.bash import BashTool
from tools.exit_plan_mode import ExitPlanModeTool
from tools.file_state import FileStateCache
from tools.registry import default_tools
from tools.sandbox import Sandbox
from tools.skill import SkillInfo, SkillTool
from tools.watching import FileWatcher
from tui.session import model_setup, sdk_setup
from tui.session.context_setup import build_context_manager
from tui.session.jobs_setup import build_jobs, mark_output_reads
from tui.session.mcp_setup import build_mcp_servers, start_mcp_servers
from tui.session.options import PERMISSION_MODES, RunOptions, StartupError
from tui.session.output_style_setup import load_output_styles
from tui.session.page_reader import connect_web_fetch
from tui.session.sandbox_setup import LAUNCH_ONLY_VARIABLES, build_sandbox
from tui.session.session_hooks import SessionHooks
from tui.session.session_setup import open_session, permission_gate, refresh_model_limits
from tui.session.subagents import Subagents

ApprovePlan = Callable[[str], Awaitable[bool]]


class Runtime:
    """One session's parts, wired; ``aclose()`` (or ``close()`` without a loop) releases them."""

    def __init__(
        self,
        options: RunOptions,
        emit: EventSink,
        ask: AskPermission | None = None,
        approve_plan: ApprovePlan | None = None,
        preloaded: tuple[Path, LoadedSession] | None = None,
    ):
        """``preloaded``: the transcript -c / -r names, read already (path, content)."""
        self.options = options
        self._preloaded = preloaded
        self.emit = emit
        self.cwd = options.cwd.resolve()
        self._load_config()
        restored = self._open_parts()
        self._build_tools(ask, approve_plan)
        sdk_setup.shape_tools(self)
        self._build_agent(restored)
        sdk_setup.configure_agent(self)
        model_setup.configure_requests(self)
        self.resumed = bool(options.continue_session or options.resume) and bool(restored)
        emit(
            SessionStarted(
                session_id=self.session.id,
                model=self.model,
                cwd=str(self.cwd),
                transcript_path=str(self.session.path),
                resumed=self.resumed,
                tools=[tool.name for tool in self.tools],
                permission_mode=self.gate.mode,
            )
        )

    # -- assembly (in this order) ---------------------------------------------------------

    def _load_config(self) -> None:
        """Settings (their env applied), the model, the permission gate."""
        self.settings: Settings = load_settings(
            self.cwd, trusted=self.options.project_trusted, sources=self.options.setting_sources
        )
        if self.options.settings is not None:
            try:
                merge_settings(
                    self.settings, read_settings_arg(self.options.settings), "--settings"
                )
            except ValueError as exc:
                raise StartupError(f"Bad --settings: {exc}") from exc
        for warning in self.settings.warnings:
            self.emit_notice(warning)
        for path in self.settings.untrusted_ignored:
            self.emit_notice(
                f"This folder is not trusted, so {path} applies only its deny and ask rules "
                "(no hooks, env, allow rules or permission mode); to trust it, start ccx here "
                "again and answer y",
                "info",
            )
        self.launch_env = dict(os.environ)  # what the sandbox's switches are read from
        for key, value in self.settings.env.items():
            if key in LAUNCH_ONLY_VARIABLES:
                self.emit_notice(
                    f"Ignoring env.{key} in the settings: ccx reads it only from the environment "
                    "it starts in, so that no settings file can loosen the sandbox",
                    "warning",
                )
                continue
            os.environ.setdefault(key, str(value))
        self.long_context_models: set[str] = set()  # named with [1m]
        self.model_name = model_setup.session_model(self)
        self.thinking = model_setup.thinking_choice(self)
        self.model_limits: dict[str, ModelLimits] = {}
        self.gate = self._permission_gate()
        self.model = self.model_name.for_mode(self.gate.mode == "plan")

    def _open_parts(self) -> list[Message]:
        """Session, memory, skills, plan, hooks and system prompt; returns the restored messages."""
        self.file_state = FileStateCache()
        self._loaded_events: list[dict[str, Any]] = []
        self._loaded: Any = None
        self.session, restored = self._open_session()
        self._watch_session()
        roots = [self.gate.project_root, *self.gate.work_dirs]  # imports stay inside these
        self.memory = MemoryFiles(self.cwd, roots=roots, read_denied=self.gate.read_denied)
        self.skills = discover_skills(self.cwd, include_project=self.options.project_trusted)
        for warning in self.skills.warnings:
            self.emit_notice(warning)
        self.invoked_skills = InvokedSkills.rebuild(self._loaded_events, self.skills)
        self.custom_commands = discover_commands(self.cwd)
        self.output_styles, self.output_style = load_output_styles(self)
        for warning in self.custom_commands.warnings:
            self.emit_notice(warning)
        self.plan = PlanState(
            plan_file_path(config_dir(), self.session.id), active=self.gate.mode == "plan"
        )
        self.gate.plan_file = self.plan.path
        self.hooks = HookRunner(
            self.settings.hooks,
            self.cwd,
            self.session.id,
            self.session.path,
            mode=lambda: self.gate.mode,
            on_output=lambda text: self.emit_notice(text, "info"),
        )
        self.session_hooks = SessionHooks(self.hooks, self.emit)
        self.tool_hooks = ToolHooks(self.hooks, self.emit)
        for warning in self.hooks.warnings:
            self.emit_notice(warning)
        self._hook_context: list[str] = []
        self.nested_instructions: list[str] = []  # re-sent in full after a compaction
        self.skills_text = skills_listing(self.skills)
        self.memory_files = self._load_memory()
        self.system = self._system_prompt()
        return restored

    def _build_tools(self, ask: AskPermission | None, approve_plan: ApprovePlan | None) -> None:
        self.tool_context = ToolContext(
            cwd=self.cwd,
            file_state=self.file_state,
            session_dir=self.session.folder,
            read_denied=self.gate.read_denied,
        )
        self.watcher = FileWatcher(self.file_state)
        if self.options.watch_files:
            self.watcher.start()
        self.sandbox = build_sandbox(
            self.options, self.settings, self.gate, self.cwd, env=self.launch_env
        )
        self.gate.sandbox_enabled = self.sandbox.policy.enabled
        if self.sandbox.policy.enabled:  # a project's hooks (and statusLine) run sandboxed
            self.hooks.sandbox = Sandbox(self.sandbox.policy)
            self.hooks.sandboxed_commands = self.settings.project_hook_commands
        for text, level in self.sandbox.notices:
            self.emit_notice(text, level)
        self.jobs = build_jobs(self.session.folder, self.emit)
        self.subagents = Subagents(self)
        self.tools = [
            *default_tools(self.sandbox.policy, env_for_command, self.jobs),
            *self.subagents.tools(),
            SkillTool(self.skills, on_invoke=self._record_skill),
            ExitPlanModeTool(
                lambda: self.plan.path,
                approve_plan,
                self._exit_plan_mode,
                in_plan_mode=lambda: self.gate.mode == "plan",
            ),
        ]
        self.builtin_tools = list(self.tools)
        self.mcp = build_mcp_servers(self)
        self._mcp_question: asyncio.Task[None] | None = None
        self.runner = ToolRunner(
            self.tools,
            self.tool_context,
            self.gate,
            self.emit,
            self.session_hooks.asking(ask),
            self.remember_rule,
            self.tool_hooks,
        )

    def _build_agent(self, restored: list[Message]) -> None:
        """The loop, and the context manager plugged into it (history restored on resume)."""
        self.agent = Agent(
            config=AgentConfig(
                model=self.model,
                fallback_model=model_setup.fallback_model(self),
                max_turns=self.options.max_turns,
                limits=self.limits_for,
            ),
            client=ModelClient(emit=self.emit),
            runner=self.runner,
            system=self.system,
            emit=self.emit,
            session=self.session,
            messages=restored,
            reminder_sources=[
                self.watcher.drain_notices,
                self.plan.reminders,
                self._drain_hook_context,
                self.mcp.instruction_reminders,
                self.mcp.mentioned,
                self.jobs.take_notifications,
            ],
            on_tool_results=self._after_tools,
            stop_hook=self.session_hooks.stop,
            prompt_folder=lambda: self.session.folder,
        )
        connect_web_fetch(self)
        self.context = build_context_manager(self)
        self.agent.policy = self.context
        if self._loaded is not None:
            self.context.restore_history(
                self._loaded.segments, self._loaded.boundaries, live=self._loaded.messages
            )

    # -- running ----------------------------------------------------------------------------

    async def start(self) -> None:
        """The async part of start-up: MCP servers (connecting meanwhile), model limits from the
        Models API, SessionStart hooks."""
        self._mcp_question = start_mcp_servers(self)
        await self.refresh_model_limits()
        await self.run_session_start("resume" if self.resumed else "startup")
        if self.options.headless:  # a -p run has one prompt: its servers must be there for it
            await self.mcp.wait()

    async def refresh_model_limits(self) -> None:
        await refresh_model_limits(self)

    async def run_session_start(self, source: str) -> None:
        if not self.hooks.has("SessionStart", source):
            return
        outcome = await self.hooks.run("SessionStart", source, {"source": source})
        for message in outcome.messages:
            self.emit_notice(message)
        if text := additional_context_text("SessionStart", outcome):
            self._hook_context.append(text)

    def emit_notice(self, text: str, level: str = "warning") -> None:
        self.emit(Notice(text, level))

    def limits_for(self, model: str) -> ModelLimits:
        """The Models API's figures when they were fetched, else the static table's (a model
        named with [1m] gets the 1M window)."""
        limits = self.model_limits.get(model) or limits_for(model)
        if model in self.long_context_models:
            return model_setup.long_context_limits(limits)
        return limits

    def set_model(self, name: str, effort: str | None = None) -> None:
        """/model: switch the model (and the effort, when given)."""
        model_setup.switch_model(self, name, effort)

    def use_model(self, model: str) -> None:
        """Send ``model`` from now on; the system prompt names it, so it is rebuilt."""
        if model == self.model and model == self.agent.model:
            return
        self.model = self.agent.model = model
        self.rebuild_system_prompt()

    def rebuild_system_prompt(self, reload_memory: bool = False) -> None:
        """A fresh system prompt (a new list: the context manager caches by its identity)."""
        if reload_memory:
            self.memory_files = self._load_memory()
        self.system = self._system_prompt()
        self.agent.system = self.system

    def set_permission_mode(self, mode: str) -> None:
        """Every change of mode (Shift-Tab, /plan, an approved plan) passes here, and says so."""
        if mode not in PERMISSION_MODES:
            raise ValueError(f"unknown permission mode {mode!r}")
        previous, self.gate.mode = self.gate.mode, mode
        if self.model_name.opusplan:  # opus while planning, sonnet for the work
            self.use_model(self.model_name.for_mode(mode == "plan"))
        if mode == "plan":
            self.plan.enter()
        else:
            self.plan.exit()
        if mode != previous:
            self.emit(ModeChanged(mode, previous))

    async def submit_hooks(self, prompt: str) -> str | None:
        """UserPromptSubmit hooks: why the prompt may not be sent, or None (context queued)."""
        check = await self.session_hooks.prompt_submitted(prompt)
        if check.context:
            self._hook_context.append(check.context)
        return check.reason if check.blocked else None

    def clear_conversation(self) -> None:
        """/clear: a new session with an empty conversation; the old transcript stays on disk.

        (/clear runs the old session's SessionEnd hooks first, with reason "clear".)"""
        if (notes := self.context.session_memory) is not None:
            notes.cancel()  # an update of the old session's notes must not land in the new one
        self.session.detach_file_state(self.file_state)
        self.session.close()
        self.file_state.clear()
        self.session = Session.create(self.cwd, self.model)
        self._watch_session()
        self.agent.conversation.restart(self.session)
        self.tool_context.session_dir = self.jobs.folder = self.session.folder
        self.invoked_skills.clear()
        self.plan.path = plan_file_path(config_dir(), self.session.id)
        self.gate.plan_file = self.plan.path
        self.hooks.session_id = self.session.id
        self.hooks.transcript_path = self.session.path
        self.context = build_context_manager(self)
        self.agent.policy = self.context
        self.nested_instructions.clear()
        self.mcp.forget_announced()
        self.rebuild_system_prompt(reload_memory=True)

    def _watch_session(self) -> None:
        """Record file reads in the transcript, and say so when it cannot be written."""
        self.session.attach_file_state(self.file_state)
        self.session.on_write_error = self._transcript_write_failed
        error = self.session.first_write_error
        if error is not None:  # failed while opening, before the hook was set
            self._transcript_write_failed(f"{self.session.path}: {error.strerror or error}")

    def _transcript_write_failed(self, _detail: str) -> None:
        self.emit_notice(transcript_write_notice(self.session), "error")

    def _load_memory(self) -> list[MemoryFile]:
        memory_files = self.memory.load()
        self._emit_memory_warnings()
        return memory_files

    def _emit_memory_warnings(self) -> None:
        """Memory files skipped or unreadable since the last call (each shown once)."""
        warnings = list(self.memory.warnings)
        self.memory.warnings.clear()
        for warning in warnings:
            self.emit_notice(warning)

    def _system_prompt(self) -> list[dict[str, Any]]:
        """The system prompt for the current model and memory files, with the skills listing."""
        system = build_system_prompt(self.cwd, self.model, self.memory_files)
        if self.options.system_prompt is not None:  # it replaces the instructions, not the context
            custom = self.options.system_prompt.strip()
            system = ([{"type": "text", "text": custom}] if custom else []) + system[1:]
        if self.options.append_system_prompt:
            text = system[-1]["text"] + "\n\n" + self.options.append_system_prompt
            system[-1] = {**system[-1], "text": text}
        self.memory_texts = [m.content for m in self.memory_files]
        if section := style_section(self.output_style):
            system[-1] = {**system[-1], "text": system[-1]["text"] + "\n\n" + section}
        if self.skills_text:
            system[-1] = {**system[-1], "text": system[-1]["text"] + "\n\n" + self.skills_text}
        return system

    def _drain_hook_context(self) -> list[str]:
        out, self._hook_context = self._hook_context, []
        return out

    def _record_skill(self, skill: SkillInfo, body: str) -> None:
        self.invoked_skills.record(skill, body)
        self.session.append_record({"type": "event", "event": InvokedSkills.event(skill)})

    def _exit_plan_mode(self) -> None:
        self.set_permission_mode("default")

    def _permission_gate(self) -> PermissionGate:
        return permission_gate(self.options, self.settings, self.cwd)

    def _open_session(self) -> tuple[Session, list[Message]]:
        opened = open_session(self.options, self.cwd, self.model, self._preloaded, self.emit_notice)
        self._preloaded = None
        if opened.loaded is not None:
            self._loaded_events = list(opened.loaded.events)
            self._loaded = opened.loaded
            rebuild_file_state(opened.loaded, self.file_state)
        return opened.session, opened.messages

    def remember_rule(self, rule: Rule) -> None:
        """Save an "always allow" answer; if the file cannot take it, it holds for this session."""
        target = project_root(self.cwd) / ".claude" / "settings.local.json"
        try:
            add_permission_rule(target, "allow", str(rule))
        except (ValueError, OSError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.emit_notice(
                f"Could not save the rule {rule} to {target} ({reason}); "
                "it applies for the rest of this session only"
            )

    def _after_tools(self, uses: list[dict[str, Any]], _message: Message) -> list[str]:
        """Keep the permission gate on the shell's directory; attach nested memory files."""
        bash = next((tool for tool in self.tools if isinstance(tool, BashTool)), None)
        if bash is not None and bash.cwd is not None:
            self.gate.shell_cwd = bash.cwd
        reminders = self.tool_hooks.drain_notes()
        mark_output_reads(self.jobs, uses, self.tool_context.resolve)
        for use in uses:
            if use.get("name") != "Read" or not isinstance(use.get("input"), dict):
                continue
            path = use["input"].get("file_path")
            if not isinstance(path, str):
                continue
            for memory_file in self.memory.nested_for(self.tool_context.resolve(path)):
                text = (
                    f"Instructions from {memory_file.path} (apply to files in that directory):\n"
                    f"{memory_file.content}"
                )
                self.nested_instructions.append(text)
                reminders.append(text)
        self._emit_memory_warnings()
        return reminders

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
        if self._mcp_question is not None:
            self._mcp_question.cancel()
        await self.mcp.aclose()
        await self.agent.client.aclose()
