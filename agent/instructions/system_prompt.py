"""The system prompt: fixed instructions, then this session's environment and memory files.

Two blocks in the Messages API's shape. The first is the same text for every
session, turn and directory (no dates, no paths), so its prompt-cache entry is
shared; everything that varies goes in the second. Callers place the
cache_control breakpoints.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from datetime import datetime
from functools import lru_cache
from importlib import resources

from agent.core.messages import TextBlock, text_block
from agent.instructions.memory import MemoryFile
from agent.permissions.safe_git import safe_git_env

GIT_TIMEOUT_S = 2.0
GIT_STATUS_LINES = 40
GIT_LOG_COMMITS = 5

MEMORY_KIND_NOTES = {
    "user": "the user's own instructions, for all projects",
    "project": "project instructions, checked into the codebase",
    "local": "the user's private instructions for this project",
    "agents": "project instructions for coding agents",
    "nested": "instructions for this part of the codebase",
    "import": "imported by another instruction file",
}


@lru_cache(maxsize=1)
def static_instructions() -> str:
    return (
        resources.files("agent.instructions")
        .joinpath("prompts/system.md")
        .read_text(encoding="utf-8")
    )


def build_system_prompt(
    cwd: str | os.PathLike[str],
    model: str,
    memory_files: Sequence[MemoryFile],
    now: datetime | None = None,
    git: bool = True,
    commit_trailer: str | None = None,
) -> list[TextBlock]:
    """``commit_trailer``: the line a commit message ends with (None: no such line)."""
    environment = environment_text(cwd, model, now=now, git=git, commit_trailer=commit_trailer)
    memory = memory_text(memory_files)
    dynamic = environment if not memory else f"{environment}\n\n{memory}"
    return [text_block(static_instructions().strip()), text_block(dynamic)]


def environment_text(
    cwd: str | os.PathLike[str],
    model: str,
    now: datetime | None = None,
    git: bool = True,
    commit_trailer: str | None = None,
) -> str:
    cwd = os.path.abspath(os.fspath(cwd))
    now = now or datetime.now().astimezone()
    info = git_info(cwd) if git else None
    lines = [
        "# Environment",
        f"Working directory: {cwd}",
        f"Platform: {platform.system()} {platform.release()}",
        f"Shell: {os.path.basename(os.environ.get('SHELL', '')) or 'unknown'}",
        f"Git repository: {'yes' if info else 'no'}",
    ]
    if info:
        lines.append(f"Branch: {info.get('branch') or '(detached or unborn)'}")
    lines += [f"Today's date: {now.date().isoformat()}", f"Model: {model}"]
    if info:
        status = info.get("status") or "(clean)"
        lines += ["", "Git status at the start of the session (it will not update):", status]
        if info.get("log"):
            lines += ["", "Recent commits:", info["log"]]
        if commit_trailer:
            lines += ["", f"A commit you make ends its message with this line: {commit_trailer}"]
    return "\n".join(lines)


def memory_text(memory_files: Sequence[MemoryFile]) -> str:
    files = [f for f in memory_files if f.content.strip()]
    if not files:
        return ""
    parts = [
        "# Instructions from memory files",
        "The files below were written by the user and the project's maintainers. "
        "They take precedence over your default instructions: follow them exactly.",
    ]
    for memory in files:
        note = MEMORY_KIND_NOTES.get(memory.kind, memory.kind)
        parts.append(f"Contents of {memory.path} ({note}):\n\n{memory.content.strip()}")
    return "\n\n".join(parts)


# -- git -----------------------------------------------------------------------------------


_started_early: dict[str, Future[dict[str, str] | None]] = {}


def start_git_info(cwd: str) -> None:
    """Take the git snapshot of ``cwd`` in a thread from now on; the first ``git_info(cwd)``
    gets its answer.

    A headless run calls this first thing: git (a few hundred ms in a large repository)
    then runs on another core while Python imports the rest, instead of after it.
    """
    cwd = os.path.abspath(cwd)
    if cwd in _started_early:
        return
    future: Future[dict[str, str] | None] = Future()

    def snapshot() -> None:
        try:
            future.set_result(_read_git_info(cwd))
        except BaseException as exc:  # handed to whoever asks for the answer
            future.set_exception(exc)

    _started_early[cwd] = future
    threading.Thread(target=snapshot, name="ccx-git-snapshot", daemon=True).start()


def git_info(cwd: str) -> dict[str, str] | None:
    """Branch, short status and recent commits, or None outside a work tree or without git."""
    early = _started_early.pop(os.path.abspath(cwd), None)
    if early is not None:
        return early.result()
    return _read_git_info(cwd)


def _read_git_info(cwd: str) -> dict[str, str] | None:
    executable = shutil.which("git")
    if executable is None:
        return None
    base = [executable, "--no-optional-locks", "-C", cwd]
    # Nothing the repository configures may run before the user has even typed a word.
    env = safe_git_env([cwd])
    # Both commands start at once; together they take about as long as one.
    status = _start([*base, "status", "--short", "--branch", "--ignore-submodules=dirty"], env)
    log = _start([*base, "log", f"-{GIT_LOG_COMMITS}", "--oneline", "--no-decorate"], env)
    deadline = time.monotonic() + GIT_TIMEOUT_S
    status_out = _finish(status, deadline)
    log_out = _finish(log, deadline)
    if status_out is None:
        return None
    lines = status_out.splitlines()
    branch = ""
    if lines and lines[0].startswith("## "):
        branch = _branch_from_header(lines.pop(0)[3:])
    if len(lines) > GIT_STATUS_LINES:
        cut = len(lines) - GIT_STATUS_LINES
        lines = [*lines[:GIT_STATUS_LINES], f"... ({cut} more lines; run git status for all)"]
    return {"branch": branch, "status": "\n".join(lines), "log": (log_out or "").strip()}


def _branch_from_header(header: str) -> str:
    # "main...origin/main [ahead 1]", "No commits yet on main", "HEAD (no branch)"
    if header.startswith("No commits yet on "):
        return header.removeprefix("No commits yet on ").strip()
    if header.startswith("HEAD (no branch)"):
        return ""
    return header.split("...", 1)[0].split(" ", 1)[0]


def _start(command: list[str], git_env: dict[str, str]) -> subprocess.Popen[str] | None:
    try:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            errors="replace",
            env={**os.environ, **git_env, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
    except OSError:
        return None


def _finish(process: subprocess.Popen[str] | None, deadline: float) -> str | None:
    if process is None:
        return None
    try:
        out, _ = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return None
    return out if process.returncode == 0 else None
