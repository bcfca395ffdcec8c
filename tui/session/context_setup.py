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
from typing import TYPE_CHECKING

from agent.core.events import EventSink
from agent.model.catalog import ModelLimits, limits_for
from compaction.manager import CompactionServices, ContextManager
from compaction.notes import NotesStore
from compaction.notes_writer import SessionNotes
from compaction.server_editing import resolve_server_editing
from compaction.thresholds import ContextLimits, resolve_window
from tools.bash import BashTool
from tools.file_state import FileStateCache, normalize_path

if TYPE_CHECKING:
    from tui.session.runtime import Runtime


def build_context_manager(runtime: Runtime) -> ContextManager:
    window = resolve_window(
        limits_for(runtime.model).context_window,
        runtime.options.autocompact,
        runtime.settings.auto_compact_window,
        os.environ,
    )
    services = CompactionServices(
        file_state=runtime.file_state,
        session=runtime.session,
        invoked_skills=lambda: [
            (s.name, str(s.path), body) for s, body in runtime.invoked_skills.recent()
        ],
        plan=lambda: _plan(runtime),
        plan_reminder=runtime.plan.reminder,
        excluded_paths=lambda: _excluded(runtime),
        background_tasks=lambda: _background(runtime),
        background_jobs=runtime.jobs.unread,
        agents_listing=runtime.subagents.listing,
        announcements=lambda: [*runtime.nested_instructions, *runtime.mcp.announcements()],
        run_hook=runtime.hooks.run,
        resolve_path=lambda path: normalize_path(runtime.tool_context.resolve(path)),
    )
    server_editing, switch_warnings = resolve_server_editing(
        runtime.settings.server_context_editing, os.environ
    )
    manager = ContextManager(
        limits_for=lambda model: _limits(runtime, model),
        window=window,
        services=services,
        emit=runtime.emit,
        server_editing=server_editing,
        session_memory=_session_memory(runtime, services),
    )
    for warning in [*window.warnings, *switch_warnings]:
        runtime.emit_notice(warning)
    return manager


def build_subagent_context(
    runtime: Runtime, model: str, file_state: FileStateCache, emit: EventSink
) -> ContextManager:
    """A subagent's own context manager: the session's window settings for its model, its
    own file reads to restore, no transcript and no session notes."""
    window = resolve_window(
        limits_for(model).context_window,
        runtime.options.autocompact,
        runtime.settings.auto_compact_window,
        os.environ,
    )
    services = CompactionServices(
        file_state=file_state,
        resolve_path=lambda path: normalize_path(runtime.tool_context.resolve(path)),
    )
    server_editing, _warnings = resolve_server_editing(
        runtime.settings.server_context_editing, os.environ
    )
    return ContextManager(
        limits_for=lambda name: _limits(runtime, name),
        window=window,
        services=services,
        emit=emit,
        server_editing=server_editing,
    )


def _session_memory(runtime: Runtime, services: CompactionServices) -> SessionNotes | None:
    if os.environ.get("CCX_SESSION_MEMORY", "").strip().lower() in ("0", "false", "no", "off"):
        return None
    return SessionNotes(NotesStore(runtime.session.folder), services.record_event)


def _limits(runtime: Runtime, model: str) -> ContextLimits:
    known: ModelLimits = runtime.model_limits.get(model) or limits_for(model)
    return ContextLimits(known.context_window, known.max_output)


def _plan(runtime: Runtime) -> tuple[str, str] | None:
    content = runtime.plan.content()
    return (str(runtime.plan.path), content) if content else None


def _excluded(runtime: Runtime) -> set[str]:
    paths: set[str] = {str(p) for p in runtime.memory.paths()}
    paths.add(str(runtime.plan.path))
    return paths


def _background(runtime: Runtime) -> list[str]:
    tasks: list[str] = []
    for tool in runtime.tools:
        if isinstance(tool, BashTool):
            tasks.extend(tool.background_tasks())
    return tasks
