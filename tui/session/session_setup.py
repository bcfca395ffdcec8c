"""Start-up steps of a session: its settings, its permission gate and the rules it learns, its
transcript.

``load_session_settings`` reads the settings files (and ``--settings``) and
applies their ``env``; ``permission_gate`` turns the mode and rules of the settings and the command
line into the gate; ``remember_rule`` saves an "always allow" answer;
``open_session`` finds the session to continue (or makes a new one) and loads
it, saying what it repaired or forked; ``watch_transcript`` records file reads
in a transcript and says when it cannot be written.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

from agent.core.locations import config_dir
from agent.core.messages import Message
from agent.permissions.gate import PermissionGate
from agent.permissions.rules import MODES, Rule, split_rules
from agent.permissions.settings import (
    Settings,
    add_permission_rule,
    load_settings,
    project_root,
    read_settings_arg,
)
from agent.permissions.settings_keys import key_warnings
from agent.sessions.cleanup import DEFAULT_DAYS, remove_old_sessions
from agent.sessions.session import (
    Session,
    SessionError,
    session_path_for,
    transcript_write_notice,
)
from agent.sessions.transcript import LoadedSession
from tools.file_state import FileStateCache
from tui.session.notify import Notify
from tui.session.options import RunOptions, StartupError
from tui.session.sandbox_setup import LAUNCH_ONLY_VARIABLES


def load_session_settings(
    options: RunOptions, cwd: Path, notify: Notify
) -> tuple[Settings, dict[str, str]]:
    """The merged settings (their ``env`` applied to this process where it sets nothing
    already), and the environment ccx started in, from before that (the sandbox's switches
    are read from it)."""
    flag = None
    if options.settings is not None:
        try:
            flag = read_settings_arg(options.settings)
        except ValueError as exc:
            raise StartupError(f"Bad --settings: {exc}") from exc
    settings = load_settings(
        cwd, trusted=options.project_trusted, sources=options.setting_sources, flag=flag
    )
    for warning in settings.warnings:
        notify(warning)
    for warning in key_warnings((s.label, s.written) for s in settings.sources):
        notify(warning, "warning")
    for path in settings.untrusted_ignored:
        notify(
            f"This folder is not trusted, so {path} applies only its deny and ask rules "
            "(no hooks, env, allow rules or permission mode); to trust it, start ccx here "
            "again and answer y",
            "info",
        )
    launch_env = dict(os.environ)
    managed_env = settings.managed_env
    for key, value in settings.env.items():
        if key in LAUNCH_ONLY_VARIABLES:
            notify(
                f"Ignoring env.{key} in the settings: ccx reads it only from the environment "
                "it starts in, so that no settings file can loosen the sandbox",
                "warning",
            )
            continue
        if key in managed_env:  # the machine's policy wins over the environment too
            os.environ[key] = managed_env[key]
        else:
            os.environ.setdefault(key, str(value))
    return settings, launch_env


def permission_gate(
    options: RunOptions, settings: Settings, cwd: Path, notify: Notify | None = None
) -> PermissionGate:
    """The gate for this session's mode and rules; StartupError for a bad mode or rule.
    bypassPermissions turned off by a settings file starts in default mode instead,
    said through ``notify``; ``permissions.additionalDirectories`` work as --add-dir."""
    mode = options.permission_mode or settings.permission_mode or "default"
    if mode not in MODES:
        raise StartupError(f"Unknown permission mode {mode!r}; use one of {', '.join(MODES)}")
    disabled_by = settings.bypass_disabled_by
    if mode == "bypassPermissions" and disabled_by is not None:
        if notify is not None:
            notify(bypass_refusal(disabled_by) + "; starting in default mode", "warning")
        mode = "default"
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
    work_dirs = [Path(d).resolve() for d in options.add_dirs]
    work_dirs += settings_directories(settings, cwd, notify)
    work_dirs = list(dict.fromkeys(work_dirs))
    readable += work_dirs
    return PermissionGate(
        mode,
        allow,
        deny,
        settings.ask,
        cwd=cwd,
        project_root=project_root(cwd),
        read_dirs=readable,
        config_dir=config_dir(),
        work_dirs=work_dirs,
    )


def bypass_refusal(source: str) -> str:
    """Why bypassPermissions cannot be used: ``source`` turns it off."""
    return (
        "Bypass permissions mode is turned off by permissions.disableBypassPermissionsMode "
        f"in {source}"
    )


def settings_directories(settings: Settings, cwd: Path, notify: Notify | None) -> list[Path]:
    """``permissions.additionalDirectories`` that exist (``~`` expanded, relative ones
    from ``cwd``); each missing one is said through ``notify``."""
    found = []
    for text in settings.additional_directories:
        path = (cwd / Path(text).expanduser()).resolve()
        if path.is_dir():
            found.append(path)
        elif notify is not None:
            notify(f"permissions.additionalDirectories: {text} is not a folder; ignored")
    return found


@dataclass
class OpenedSession:
    session: Session
    messages: list[Message]
    loaded: LoadedSession | None  # None for a new session


def open_session(
    options: RunOptions,
    cwd: Path,
    model: str,
    preloaded: tuple[Path, LoadedSession] | None,
    notice: Notify,
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


def watch_transcript(session: Session, files: FileStateCache, notify: Notify) -> None:
    """Record file reads in ``session``'s transcript, and say so when it cannot be written."""
    session.attach_file_state(files)

    def failed(_detail: str) -> None:
        notify(transcript_write_notice(session), "error")

    session.on_write_error = failed
    error = session.first_write_error
    if error is not None:  # failed while opening, before the hook was set
        failed(f"{session.path}: {error.strerror or error}")


def remember_rule(cwd: Path, notify: Notify, rule: Rule) -> None:
    """Save an "always allow" answer; if the file cannot take it, it holds for this session."""
    target = project_root(cwd) / ".claude" / "settings.local.json"
    try:
        add_permission_rule(target, "allow", str(rule))
    except (ValueError, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        notify(
            f"Could not save the rule {rule} to {target} ({reason}); "
            "it applies for the rest of this session only"
        )


def clean_old_transcripts(settings: Settings, keep: Path, notify: Notify) -> None:
    """``cleanupPeriodDays`` (default 30): transcripts older than that are deleted, never
    the one this session writes."""
    value = settings.get("cleanupPeriodDays")
    days = DEFAULT_DAYS
    if value is not None:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            days = value
        else:
            notify(
                f"Ignoring cleanupPeriodDays {value!r}: it must be a whole number of days, "
                f"at least 1; keeping transcripts {DEFAULT_DAYS} days",
                "warning",
            )
    remove_old_sessions(days, keep=keep)


def company_announcement(settings: Settings) -> str | None:
    """One of ``companyAnnouncements`` (chosen at random when there are several), or None."""
    value = settings.get("companyAnnouncements")
    texts = [t.strip() for t in value if isinstance(t, str) and t.strip()] if isinstance(
        value, list
    ) else []  # fmt: skip
    return random.choice(texts) if texts else None
