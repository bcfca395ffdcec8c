"""Whether the environment can reach a model at all, and what to tell the user when it cannot.

Checked before a session starts (``ccx`` and ``ccx -p``, never ``--version``,
``--help`` or ``ccx demo``), so a newcomer gets instructions instead of a
failed request.

What counts as configured:

- ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN (with or without a base URL);
- CLAUDE_CODE_USE_BEDROCK / CLAUDE_CODE_USE_VERTEX (the SDK finds the cloud
  credentials itself, so they are not checked here);
- ANTHROPIC_BASE_URL alone only when it points at this machine (localhost,
  127.x, ::1): a local proxy usually holds the real credentials, while a
  remote gateway almost always wants a token. The SDK refuses to send a
  request with no credential at all, so such a session is given a placeholder
  key (``check_credentials``), which a local proxy ignores or replaces.

Keys may also come from the ``env`` block of a settings file, as the runtime
applies it; ``session_env`` merges that in. A settings file's ``apiKeyHelper``
(a command that prints the key) counts as configured, and so does a key stored
by ``/login`` (agent.model.stored_key).

Which one a session uses, first found: ANTHROPIC_AUTH_TOKEN / ANTHROPIC_API_KEY
in the environment, then ``apiKeyHelper``, then the stored key, then a local
endpoint's placeholder (``key_provider_for``; ``key_source`` says it in words).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from agent.model.client import KeyProvider
    from agent.permissions.settings import Settings
    from tui.session.notify import Notify

KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
PROVIDER_VARIABLES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX")
LOCAL_HOSTS = ("localhost", "::1")
LOCAL_PLACEHOLDER_KEY = "ccx-local-endpoint"

HOW_TO = """\
Set one of these and run ccx again:
  export ANTHROPIC_API_KEY=sk-ant-...       an Anthropic API key (console.anthropic.com)
  export ANTHROPIC_AUTH_TOKEN=...           a bearer token instead of a key
  export ANTHROPIC_BASE_URL=https://...     an Anthropic-compatible gateway (with a key or token)
  export CLAUDE_CODE_USE_BEDROCK=1          Amazon Bedrock, with your AWS credentials
  export CLAUDE_CODE_USE_VERTEX=1           Google Vertex AI, with your gcloud credentials
They can also go in the "env" block of ~/.claude/settings.json, or an
"apiKeyHelper" there can name a command that prints the key.

No key yet? Run `ccx demo` for an offline tour with a scripted model."""


def _set(env: Mapping[str, str], name: str) -> bool:
    return bool(env.get(name, "").strip())


def is_local_url(url: str) -> bool:
    """True for http(s) URLs on this machine: localhost, 127.0.0.0/8, ::1."""
    try:
        host = (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return False
    return host in LOCAL_HOSTS or host.startswith("127.")


def missing_credentials_message(env: Mapping[str, str]) -> str | None:
    """None when a model can be reached with ``env``; else what to tell the user."""
    if any(_set(env, name) for name in (*KEY_VARIABLES, *PROVIDER_VARIABLES)):
        return None
    base_url = env.get("ANTHROPIC_BASE_URL", "").strip()
    if base_url and is_local_url(base_url):
        return None
    if base_url:
        return (
            f"ccx: ANTHROPIC_BASE_URL is set ({base_url}) but neither ANTHROPIC_API_KEY nor "
            "ANTHROPIC_AUTH_TOKEN is; a remote gateway needs one of them.\n\n" + HOW_TO
        )
    return "ccx: no API credentials found.\n\n" + HOW_TO


def session_env(
    cwd: Path, environ: Mapping[str, str], flag: str | None = None
) -> tuple[dict[str, str], bool]:
    """``environ`` with the settings' ``env`` block under it, as a session will see it, and
    whether the settings name an ``apiKeyHelper`` (``flag``: --settings as given)."""
    from agent.permissions.settings import load_settings, read_settings_arg

    try:
        settings = load_settings(cwd, flag=read_settings_arg(flag) if flag else None)
    except Exception:  # a settings problem is reported by the session itself, later
        return dict(environ), False
    helper = settings.get("apiKeyHelper")
    return {**settings.env, **environ}, isinstance(helper, str) and bool(helper.strip())


def check_credentials(
    cwd: Path, environ: MutableMapping[str, str], flag: str | None = None
) -> str | None:
    """What to tell the user when no model can be reached from ``cwd``; None when one can.

    A local endpoint configured without a key gets a placeholder key in
    ``environ``, since the SDK will not send a request with no credential; an
    ``apiKeyHelper`` counts as a key (the session runs it when a request needs one).
    """
    from agent.model.stored_key import read_stored_key

    env, helper = session_env(cwd, environ, flag)
    stored = read_stored_key() is not None
    message = None if helper or stored else missing_credentials_message(env)
    keyless = not any(_set(env, name) for name in (*KEY_VARIABLES, *PROVIDER_VARIABLES))
    local = is_local_url(env.get("ANTHROPIC_BASE_URL", ""))
    if message is None and keyless and not stored and local:
        environ["ANTHROPIC_API_KEY"] = LOCAL_PLACEHOLDER_KEY
    return message


def environment_key() -> bool:
    """A real key or token in the environment (a local endpoint's placeholder is none)."""
    return _set(os.environ, "ANTHROPIC_AUTH_TOKEN") or (
        _set(os.environ, "ANTHROPIC_API_KEY")
        and os.environ["ANTHROPIC_API_KEY"] != LOCAL_PLACEHOLDER_KEY
    )


def key_source(helper_origin: str | None = None) -> str:
    """Where the session's credential comes from, in a few words (never the key);
    ``helper_origin``: the settings file naming the apiKeyHelper the session runs."""
    from agent.model.stored_key import read_stored_key, stored_key_path

    if os.environ.get("CLAUDE_CODE_USE_BEDROCK") or os.environ.get("CCX_USE_BEDROCK"):
        return "Amazon Bedrock (AWS credentials)"
    if os.environ.get("CLAUDE_CODE_USE_VERTEX") or os.environ.get("CCX_USE_VERTEX"):
        return "Google Vertex AI (gcloud credentials)"
    if _set(os.environ, "ANTHROPIC_AUTH_TOKEN"):
        return "ANTHROPIC_AUTH_TOKEN (environment)"
    if environment_key():
        return "ANTHROPIC_API_KEY (environment)"
    if helper_origin is not None:
        return f"apiKeyHelper in {helper_origin}"
    if read_stored_key() is not None:
        return f"key stored by /login ({stored_key_path()})"
    if _set(os.environ, "ANTHROPIC_API_KEY"):
        return "none needed (a local endpoint)"
    return "none (type /login, or set ANTHROPIC_API_KEY)"


def api_key_source(helper: bool) -> str:
    """Where the credential comes from, as Claude Code names it (stream-json's
    ``apiKeySource``); ``helper``: the session runs an apiKeyHelper."""
    from agent.model.stored_key import read_stored_key

    if any(_set(os.environ, name) for name in PROVIDER_VARIABLES):
        return "none"
    if environment_key():
        return "ANTHROPIC_API_KEY"
    if helper:
        return "apiKeyHelper"
    if read_stored_key() is not None:
        return "/login managed key"
    return "none"


def key_provider_for(settings: Settings, cwd: Path, notify: Notify) -> KeyProvider | None:
    """Where the session's requests get their key when the environment names none: the
    apiKeyHelper, else the key /login stores (read for each request). None: a cloud
    provider, or a key in the environment (which wins, as in Claude Code)."""
    from agent.model.stored_key import StoredKey

    if any(_set(os.environ, name) for name in PROVIDER_VARIABLES):
        if settings.get("apiKeyHelper") is not None:
            notify("Ignoring apiKeyHelper: the model is reached through a cloud provider", "info")
        return None
    helper = _key_helper(settings, cwd, notify)
    if environment_key():
        if helper is not None:
            notify("Not running apiKeyHelper: a key in the environment is used instead", "info")
        return None
    return helper if helper is not None else StoredKey()


def _key_helper(settings: Settings, cwd: Path, notify: Notify) -> KeyProvider | None:
    from agent.model.api_key_helper import ApiKeyHelper

    command = settings.get("apiKeyHelper")
    if command is None:
        return None
    if not isinstance(command, str) or not command.strip():
        notify("Ignoring apiKeyHelper: it must be a command (a string)", "warning")
        return None
    helper = ApiKeyHelper(command, cwd)
    if helper.warning is not None:
        notify(helper.warning, "warning")
    return helper
