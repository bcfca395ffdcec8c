"""``/login`` and ``/logout``: storing and removing the API key, with what to tell the user.

Every front end asks for the key its own way (masked) and hands it here; the
words say where the key went and, when the environment or an apiKeyHelper
wins over a stored key, that too (tui.session.credentials decides). The key
itself is never in a message.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent.model.stored_key import key_shape_problem, remove_stored_key, store_key
from tui.session.credentials import environment_key, session_env

LOGIN_PROMPT = "Paste an Anthropic API key (sk-ant-…); it is not shown. Empty: cancel."
NOT_HERE = (
    "/login asks for the key where nobody sees it: type /login alone in an interactive ccx "
    "(never the key on the command line, where it would stay in history), or set "
    "ANTHROPIC_API_KEY."
)


def login(key: str, cwd: Path) -> str:
    """Store ``key`` for this and later sessions (the next request uses it); what to show.
    ValueError says why the key was refused; OSError when it could not be written."""
    key = key.strip()
    if problem := key_shape_problem(key):
        raise ValueError(problem)
    path = store_key(key)
    return f"API key stored in {path} (only you can read it); ccx uses it from the next request.{_overridden(cwd)}"


def logout(cwd: Path) -> str:
    if not remove_stored_key():
        return "No key was stored by /login: nothing to remove." + _overridden(cwd)
    return "Removed the API key /login stored." + _overridden(cwd)


def _overridden(cwd: Path) -> str:
    """What the session uses instead of a stored key, when something wins over it."""
    if environment_key():
        return " Note: ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN in the environment is used first."
    _env, helper = session_env(cwd, os.environ)
    if helper:
        return " Note: the apiKeyHelper of your settings is used first."
    return ""
