"""The API key ``/login`` stores, and the key provider that reads it for each request.

ccx signs in with Anthropic API keys only (no claude.ai account, no browser):
``/login`` checks the key's shape and keeps it in ``credentials.json`` of
ccx's user config folder, written whole (a temp file renamed over) and
readable by its owner only (0600, from the temp file's creation on).
``/logout`` deletes it. A key in the environment (ANTHROPIC_API_KEY,
ANTHROPIC_AUTH_TOKEN) or an ``apiKeyHelper`` wins over a stored one; which
one a session uses is decided in one place, tui.session.credentials.
``StoredKey`` reads the file when a request needs a key, so a ``/login``
takes effect from the next request on, in every running session.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

from agent.core.locations import config_dir
from agent.model.api_key_helper import ApiKeyHelperError
from tools.atomic_file import atomic_write

FILE_NAME = "credentials.json"
FIELD = "apiKey"
KEY_SHAPE = re.compile(r"sk-ant-[A-Za-z0-9_-]{20,300}")


def stored_key_path() -> Path:
    return config_dir() / FILE_NAME


def key_shape_problem(key: str) -> str | None:
    """Why ``key`` cannot be an Anthropic API key; None when it looks like one."""
    if not key:
        return "No key was given."
    if any(c.isspace() for c in key):
        return "An API key has no spaces or line breaks in it."
    if not key.startswith("sk-ant-"):
        return "That is not an Anthropic API key: those begin with sk-ant- (console.anthropic.com)."
    if not KEY_SHAPE.fullmatch(key):
        return "That key is cut short or holds characters an Anthropic API key never has."
    return None


def read_stored_key(path: Path | None = None) -> str | None:
    """The stored key; None when there is none or the file is not one ccx wrote."""
    try:
        data = json.loads((path or stored_key_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    key = data.get(FIELD) if isinstance(data, dict) else None
    return key if isinstance(key, str) and key_shape_problem(key) is None else None


def store_key(key: str, path: Path | None = None) -> Path:
    """Keep ``key`` (checked by the caller) for later sessions; where it went. OSError when the
    folder cannot be written."""
    path = path or stored_key_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = json.dumps({FIELD: key}, indent=2) + "\n"
    atomic_write(path, data.encode("utf-8"), durable=True, mode=0o600)
    return path


def remove_stored_key(path: Path | None = None) -> bool:
    """Delete the stored key; False when there was none."""
    path = path or stored_key_path()
    existed = path.exists()
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return existed


class StoredKey:
    """The key provider of a session whose environment names no key: the stored key, read
    for each request; else a local endpoint's placeholder in the environment; else an error
    that says how to give one."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or stored_key_path()

    def invalidate(self) -> None:
        """Nothing cached: the next request reads the file again."""

    async def key(self) -> str:
        key = read_stored_key(self.path)
        if key is not None:
            return key
        placeholder = os.environ.get("ANTHROPIC_API_KEY", "").strip()
        if placeholder:
            return placeholder
        raise ApiKeyHelperError(
            "No API key: type /login to store one, or set ANTHROPIC_API_KEY and restart ccx."
        )
