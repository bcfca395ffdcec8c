"""Wiring context management into a session: window settings, restoration sources, hooks.

The switch between local microcompact and the API's context editing is read
here too (settings ``serverContextEditing``, env ``CCX_SERVER_CONTEXT_EDITING``),
and session memory (the background notes and session-memory compaction; on
unless ``CCX_SESSION_MEMORY=0``) gets the session folder its notes file lives in.

Part of the composition root: it builds the compaction/ ContextManager from
the session's parts (file-state cache, skills, plan, hooks, background shell
tasks), so neither the loop nor compaction knows the other's insides.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agent.core.events import EventSink, Notice
from agent.instructions.memory import MemoryFiles
from agent.instructions.plan import PlanState
from agent.instructions.skills import InvokedSkills
from agent.model.catalog import ModelLimits, limits_for
from agent.sessions.session import Session
from compaction.manager import CompactionServices, ContextManager
from compaction.notes import NotesStore
from compaction.notes_writer import SessionNotes
from compaction.server_editing import resolve_server_editing
from compaction.services import HookRun
from compaction.thresholds import ContextLimits, resolve_window
from tools.bash import BashTool
from tools.file_state import FileStateCache, normalize_path
from tools.jobs import JobRegistry
from tools.task_list import TaskList


@dataclass(frozen=True)
class WindowSettings:
    """What decides a context manager's window and whether the API edits the context."""

    autocompact: str | None  # --autocompact
    auto_compact_window: Any  # the setting autoCompactWindow, as written
    server_context_editing: Any  # the setting serverContextEditing, as written
    known_limits: Callable[[str], ModelLimits]  # the Models API's figures, else the table's
    resolve: Callable[[str], Path]  # a tool's file_path against the session's directory

    def limits(self, model: str) -> ContextLimits:
        known = self.known_limits(model)
        return ContextLimits(known.context_window, known.max_output)


@dataclass(frozen=True)
class ContextParts:
    """The session's parts its context manager reads, restores after a compaction, or runs."""

    window: WindowSettings
    emit: EventSink
    file_state: FileStateCache
    invoked_skills: InvokedSkills
    plan: PlanState
    tasks: TaskList
    memory: MemoryFiles
    jobs: JobRegistry
    bash_tools: list[BashTool]  # the session's shells, for what they left running
    agents_listing: Callable[[], str]
    announcements: Callable[[], list[str]]  # nested memory files, MCP servers' instructions
    run_hook: HookRun


def build_context_manager(parts: ContextParts, session: Session, model: str) -> ContextManager:
    """The context manager over the conversation recorded in ``session``, sized for ``model``."""
    window = parts.window
    settings = resolve_window(
        limits_for(model).context_window,
        window.autocompact,
        window.auto_compact_window,
        os.environ,
    )
    services = CompactionServices(
        file_state=parts.file_state,
        session=session,
        invoked_skills=lambda: [
            (s.name, str(s.path), body) for s, body in parts.invoked_skills.recent()
        ],
        plan=lambda: _plan(parts.plan),
        plan_reminder=parts.plan.reminder,
        task_list=lambda: parts.tasks.render() if parts.tasks.tasks() else None,
        excluded_paths=lambda: _excluded(parts.memory, parts.plan),
        background_tasks=lambda: _background(parts.bash_tools),
        background_jobs=parts.jobs.unread,
        agents_listing=parts.agents_listing,
        announcements=parts.announcements,
        run_hook=parts.run_hook,
        resolve_path=lambda path: normalize_path(window.resolve(path)),
    )
    server_editing, switch_warnings = resolve_server_editing(
        window.server_context_editing, os.environ
    )
    manager = ContextManager(
        limits_for=window.limits,
        window=settings,
        services=services,
        emit=parts.emit,
        server_editing=server_editing,
        session_memory=_session_memory(session, services),
    )
    if _turned_off("CCX_FOLD_ROUNDS"):
        manager.config = replace(manager.config, fold_rounds=False)
    for warning in [*settings.warnings, *switch_warnings]:
        parts.emit(Notice(warning, "warning"))
    return manager


def build_subagent_context(
    window: WindowSettings, model: str, file_state: FileStateCache, emit: EventSink
) -> ContextManager:
    """A subagent's own context manager: the session's window settings for its model, its
    own file reads to restore, no transcript and no session notes."""
    settings = resolve_window(
        limits_for(model).context_window,
        window.autocompact,
        window.auto_compact_window,
        os.environ,
    )
    services = CompactionServices(
        file_state=file_state,
        resolve_path=lambda path: normalize_path(window.resolve(path)),
    )
    server_editing, _warnings = resolve_server_editing(window.server_context_editing, os.environ)
    return ContextManager(
        limits_for=window.limits,
        window=settings,
        services=services,
        emit=emit,
        server_editing=server_editing,
    )


def _turned_off(variable: str) -> bool:
    return os.environ.get(variable, "").strip().lower() in ("0", "false", "no", "off")


def _session_memory(session: Session, services: CompactionServices) -> SessionNotes | None:
    if _turned_off("CCX_SESSION_MEMORY"):
        return None
    return SessionNotes(NotesStore(session.folder), services.record_event)


def _plan(plan: PlanState) -> tuple[str, str] | None:
    content = plan.content()
    return (str(plan.path), content) if content else None


def _excluded(memory: MemoryFiles, plan: PlanState) -> set[str]:
    paths: set[str] = {str(p) for p in memory.paths()}
    paths.add(str(plan.path))
    return paths


def _background(bash_tools: list[BashTool]) -> list[str]:
    tasks: list[str] = []
    for tool in bash_tools:
        tasks.extend(tool.background_tasks())
    return tasks
