"""Start-up steps of a session, kept out of the runtime: its permission gate, its transcript,
the model's limits.

``permission_gate`` turns the mode and rules of the settings and the command
line into the gate; ``open_session`` finds the session to continue (or makes
a new one) and loads it, saying what it repaired or forked;
``refresh_model_limits`` asks the Models API for the model's window (cached).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.core.locations import config_dir
from agent.core.messages import Message
from agent.model import limits_cache
from agent.model.catalog import fetch_limits
from agent.permissions.gate import PermissionGate, Rule
from agent.permissions.settings import Settings, project_root
from agent.sessions.session import LoadedSession, Session, SessionError, session_path_for
from tui.session.options import PERMISSION_MODES, RunOptions, StartupError, split_rules

if TYPE_CHECKING:
    from tui.session.runtime import Runtime


def permission_gate(options: RunOptions, settings: Settings, cwd: Path) -> PermissionGate:
    """The gate for this session's mode and rules; StartupError for a bad mode or rule."""
    mode = options.permission_mode or settings.permission_mode or "default"
    if mode not in PERMISSION_MODES:
        raise StartupError(
            f"Unknown permission mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}"
        )
    try:
        allow = settings.allow + [
            Rule.parse(r, source="cli") for r in split_rules(options.allowed_tools)
        ]
        deny = settings.deny + [
            Rule.parse(r, source="cli") for r in split_rules(options.disallowed_tools)
        ]
    except ValueError as exc:
        raise StartupError(f"Bad permission rule: {exc}") from exc
    readable = [config_dir(), Path.home() / ".claude"]  # sessions, saved outputs, plans, skills
    readable += [Path(d).resolve() for d in options.add_dirs]
    return PermissionGate(
        mode,
        allow,
        deny,
        settings.ask,
        cwd=cwd,
        project_root=project_root(cwd),
        read_dirs=readable,
        config_dir=config_dir(),
        work_dirs=[Path(d).resolve() for d in options.add_dirs],
    )


@dataclass
class OpenedSession:
    session: Session
    messages: list[Message]
    loaded: LoadedSession | None  # None for a new session


def open_session(
    options: RunOptions,
    cwd: Path,
    model: str,
    preloaded: tuple[Path, Any] | None,
    notice: Callable[..., None],
) -> OpenedSession:
    """The session -c / -r / --session-id ask for; ``preloaded`` is a transcript read early."""
    try:
        path = session_path_for(options.resume, options.continue_session, cwd)
    except SessionError as exc:
        raise StartupError(str(exc)) from exc
    if path is None and options.continue_session:
        notice("No earlier session in this directory; starting a new one", "info")
    if path is None and options.resume_session_at is not None:
        raise StartupError("--resume-session-at needs -r (--resume) with the session's id")
    if path is None:
        return OpenedSession(Session.create(cwd, model, session_id=options.session_id), [], None)
    early = preloaded[1] if preloaded and preloaded[0] == path else None
    try:
        session, loaded = Session.open_existing(
            path, cwd, loaded=early, model=model, fork=options.fork_session,
            until=options.resume_session_at,
        )  # fmt: skip
    except SessionError as exc:
        raise StartupError(f"Cannot resume the session: {exc}") from exc
    if options.resume_session_at is not None and not options.fork_session:
        notice(
            f"Resumed up to message {options.resume_session_at} in a new session {session.id}, "
            "forked from it (the original keeps its later messages)",
            "info",
        )
    elif session.forked_from is not None and not options.fork_session:
        pid = f"pid {session.busy_pid}" if session.busy_pid else "pid unknown"
        notice(
            f"Session {session.forked_from} is in use by another ccx ({pid}); continuing "
            f"in a new session {session.id} forked from it"
        )
    for repair in loaded.repairs:
        notice(f"Session repaired: {repair}")
    return OpenedSession(session, list(loaded.messages), loaded)


async def refresh_model_limits(runtime: Runtime) -> None:
    """The model's limits from the Models API, once a model (and cached across sessions)."""
    model = runtime.model
    if model in runtime.model_limits or os.environ.get("CCX_SKIP_MODELS_API"):
        return
    cached = limits_cache.load(config_dir(), model)
    if cached is not None:
        runtime.model_limits[model] = cached
        return
    limits = await fetch_limits(runtime.agent.client.client, model)
    if limits is not None:
        runtime.model_limits[model] = limits
        limits_cache.store(config_dir(), model, limits)
