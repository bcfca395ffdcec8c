"""``apiKeyHelper``: a command whose output is the API key, run when a key is needed.

Claude Code's setting for keys that rotate or live in a secrets manager. The
command runs through ``sh -c`` in the session's folder the first time a request
needs a key, and again once the key is older than
``CLAUDE_CODE_API_KEY_HELPER_TTL_MS`` (default five minutes) or the API refused
it (401). It must exit 0 within ``TIMEOUT_S`` and print only the key: printable
ASCII, surrounding whitespace dropped. A failure is an ``ApiKeyHelperError`` whose
message says what the command did, never the key.

Which settings may name the command is the settings' business: a project's
file counts only once its folder is trusted (agent.permissions.settings).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

TIMEOUT_S = 30.0
DEFAULT_TTL_S = 300.0
TTL_ENV = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"


class ApiKeyHelperError(Exception):
    """The helper gave no usable key; the message is for the user."""


class ApiKeyHelper:
    """Runs the command and keeps its key until it expires or is refused."""

    def __init__(self, command: str, cwd: Path, timeout_s: float = TIMEOUT_S) -> None:
        self.command = command
        self.cwd = cwd
        self.timeout_s = timeout_s
        self.ttl_s, self.warning = _ttl_from_env()
        self._key: str | None = None
        self._fetched = 0.0
        self._lock = asyncio.Lock()

    def invalidate(self) -> None:
        """Forget the key (the API refused it): the next request runs the command again."""
        self._key = None

    async def key(self) -> str:
        """The current key, running the command when there is none or it expired."""
        async with self._lock:
            if self._key is not None and time.monotonic() - self._fetched < self.ttl_s:
                return self._key
            self._key = await self._run()
            self._fetched = time.monotonic()
            return self._key

    async def _run(self) -> str:
        try:
            proc = await asyncio.create_subprocess_exec(
                "/bin/sh", "-c", self.command,
                cwd=self.cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            raise ApiKeyHelperError(f"apiKeyHelper could not start: {exc}") from exc
        try:
            out, err = await asyncio.wait_for(proc.communicate(), self.timeout_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            await proc.wait()
            raise ApiKeyHelperError(
                f"apiKeyHelper gave no key within {self.timeout_s:g} s; it was stopped"
            ) from None
        if proc.returncode != 0:
            detail = err.decode(errors="replace").strip().splitlines()
            said = f": {detail[-1][:200]}" if detail else ""
            raise ApiKeyHelperError(f"apiKeyHelper exited with status {proc.returncode}{said}")
        key = out.decode(errors="replace").strip()
        if not key:
            raise ApiKeyHelperError("apiKeyHelper printed nothing; it must print the API key")
        if not all(" " < ch <= "~" for ch in key):
            raise ApiKeyHelperError(
                "apiKeyHelper printed something that is not an API key (only the key, "
                "in printable ASCII, may go to its standard output)"
            )
        return key


def _ttl_from_env() -> tuple[float, str | None]:
    value = os.environ.get(TTL_ENV, "").strip()
    if not value:
        return DEFAULT_TTL_S, None
    try:
        ms = float(value)
    except ValueError:
        return DEFAULT_TTL_S, f"Ignoring {TTL_ENV}={value!r}: not a number of milliseconds"
    if ms != ms or ms < 0:
        return DEFAULT_TTL_S, f"Ignoring {TTL_ENV}={value!r}: not a number of milliseconds"
    return ms / 1000, None
