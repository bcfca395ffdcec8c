"""Where transcripts live: the project folders under the config root, finding and listing them.

A session is ``<config>/projects/<cwd, non-alphanumerics as '-'>/<id>.jsonl``
plus a folder ``<id>/`` beside it for tool outputs saved out of the context.
Listing reads only each file's head, so a folder of long sessions lists fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.core.locations import config_dir
from agent.sessions.foreign import claude_code_refusal, claude_code_transcript

_MAX_DIR_NAME = 200  # file systems refuse names over 255 bytes


class SessionError(Exception):
    """A session file that is missing or cannot be read."""


# -- locations ---------------------------------------------------------------------------


def _config_root(override: Path | None) -> Path:
    return Path(override) if override is not None else config_dir()


def project_dir(cwd: str | os.PathLike[str], config_dir: Path | None = None) -> Path:
    absolute = os.path.abspath(os.fspath(cwd))
    name = re.sub(r"[^A-Za-z0-9]", "-", absolute)
    if len(name) > _MAX_DIR_NAME:
        digest = hashlib.sha256(absolute.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        name = f"{name[:_MAX_DIR_NAME]}-{digest}"
    return _config_root(config_dir) / "projects" / name


def _valid_id(session_id: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", session_id))


def _session_files(directory: Path) -> list[Path]:
    try:
        return [p for p in directory.glob("*.jsonl") if p.is_file()]
    except OSError:
        return []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def latest_session_path(cwd: str | os.PathLike[str], config_dir: Path | None = None) -> Path | None:
    files = _session_files(project_dir(cwd, config_dir))
    return max(files, key=_mtime) if files else None


def find_session(
    session_id: str, cwd: str | os.PathLike[str], config_dir: Path | None = None
) -> Path | None:
    """The session's file: the cwd's project first, then every project; else a unique prefix."""
    session_id = session_id.strip()
    if not _valid_id(session_id):
        return None
    here = project_dir(cwd, config_dir)
    candidate = here / f"{session_id}.jsonl"
    if candidate.is_file():
        return candidate
    projects = _config_root(config_dir) / "projects"
    try:
        directories = sorted(p for p in projects.iterdir() if p.is_dir())
    except OSError:
        directories = []
    for directory in directories:
        candidate = directory / f"{session_id}.jsonl"
        if candidate.is_file():
            return candidate
    if len(session_id) >= 4:
        matches = [p for p in _session_files(here) if p.stem.startswith(session_id)]
        if len(matches) == 1:
            return matches[0]
    return None


def session_path_for(
    resume: str | None, continue_session: bool, cwd: str | os.PathLike[str]
) -> Path | None:
    """The transcript ``-r ID`` or ``-c`` names; None for a new session.

    SessionError when ``resume`` names no session; ``-c`` with no earlier
    session in ``cwd`` is None.
    """
    if resume and os.sep in resume and Path(resume).expanduser().is_file():
        return Path(resume).expanduser()  # a transcript's path (the loader checks it is ccx's)
    if resume:
        path = find_session(resume, cwd)
        if path is None and (foreign := claude_code_transcript(resume.strip())) is not None:
            raise SessionError(claude_code_refusal(foreign))
        if path is None:
            raise SessionError(f"No session with id {resume!r} was found")
        return path
    return latest_session_path(cwd) if continue_session else None


# -- listing -----------------------------------------------------------------------------

_HEAD_BYTES = 256 * 1024
_HEAD_LINES = 64
_EXACT_COUNT_BYTES = 1024 * 1024
_MESSAGE_MARK = b'{"type":"message"'
_PROMPT_WIDTH = 80


@dataclass
class SessionInfo:
    id: str
    path: Path
    modified: float
    size: int
    message_count: int  # message records written (an estimate for very large files)
    first_prompt: str
    count_estimated: bool = False


def list_sessions(cwd: str | os.PathLike[str], config_dir: Path | None = None) -> list[SessionInfo]:
    """The cwd's sessions, newest first, from each file's head only."""
    infos = []
    for path in _session_files(project_dir(cwd, config_dir)):
        info = _session_info(path)
        if info is not None:
            infos.append(info)
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def _session_info(path: Path) -> SessionInfo | None:
    try:
        stat = path.stat()
        with open(path, "rb") as handle:
            if stat.st_size <= _EXACT_COUNT_BYTES:
                data = handle.read()
                count, estimated = data.count(_MESSAGE_MARK), False
            else:
                data = handle.read(_HEAD_BYTES)
                head_count = data.count(_MESSAGE_MARK)
                count, estimated = round(head_count * stat.st_size / max(1, len(data))), True
    except OSError:
        return None
    session_id, prompt = path.stem, ""
    for line in data[:_HEAD_BYTES].split(b"\n")[:_HEAD_LINES]:
        record = _parse_head_line(line)
        if record is None:
            continue
        if record.get("type") == "session" and isinstance(record.get("session_id"), str):
            session_id = record["session_id"]
        elif record.get("type") == "message" and not prompt:
            prompt = _prompt_text(record)
        if prompt:
            break
    return SessionInfo(session_id, path, stat.st_mtime, stat.st_size, count, prompt, estimated)


_TEXT_START = re.compile(rb'"text":"((?:[^"\\]|\\.){0,400})')


def _parse_head_line(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        # A line longer than the head (a huge pasted prompt): take its text's beginning.
        if not line.startswith(_MESSAGE_MARK) or b'"kind":"prompt"' not in line:
            return None
        match = _TEXT_START.search(line)
        if match is None:
            return None
        try:
            text = json.loads(b'"' + match.group(1) + b'"')
        except ValueError:
            return None
        return {"type": "message", "kind": "prompt", "message": {"role": "user", "content": text}}
    return record if isinstance(record, dict) else None


def _prompt_text(record: dict[str, Any]) -> str:
    body = record.get("message")
    if not isinstance(body, dict) or body.get("role") != "user":
        return ""
    if record.get("kind", "prompt") != "prompt":
        return ""
    content = body.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    else:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= _PROMPT_WIDTH else text[: _PROMPT_WIDTH - 1] + "…"
