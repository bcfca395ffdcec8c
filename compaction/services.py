"""What compaction needs from the rest of ccx, as plain interfaces.

The runtime fills a ``CompactionServices`` with callables over the session's
parts (file-state cache, transcript, skills, plan, hooks, background tasks);
``ConversationHost`` is the slice of the agent that compaction reads and
rewrites. Neither names a concrete class from agent/, so the loop and
compaction stay ignorant of each other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agent.api import ApiError, ModelClient
from agent.messages import Message
from tools.file_state import FileStateCache

HookRun = Callable[[str, "str | None", dict[str, Any]], Awaitable[Any]]


class ContextFullError(ApiError):
    """The context is past the blocking limit and nothing may compact it automatically."""


class ConversationHost(Protocol):
    """What compaction needs of the agent it serves."""

    messages: list[Message]
    system: list[dict[str, Any]]
    tools_api: list[dict[str, Any]]
    client: ModelClient
    model: str
    costs: Any


@dataclass
class CompactionServices:
    """The session's parts that compaction reads or restores; supplied by the runtime."""

    file_state: FileStateCache
    session: Any = None  # append_record / append_message / path / folder
    invoked_skills: Callable[[], list[tuple[str, str, str]]] = list
    plan: Callable[[], tuple[str, str] | None] = lambda: None
    plan_reminder: Callable[[], str | None] = lambda: None
    excluded_paths: Callable[[], set[str]] = set
    background_tasks: Callable[[], list[str]] = list
    announcements: Callable[[], list[str]] = list
    run_hook: HookRun | None = None
    on_compacted: Callable[[], None] = lambda: None

    @property
    def transcript_path(self) -> Path | None:
        return getattr(self.session, "path", None)

    @property
    def folder(self) -> Path | None:
        return getattr(self.session, "folder", None)

    def record_event(self, event: dict[str, Any]) -> None:
        import time

        if self.session is not None:
            self.session.append_record({"type": "event", "event": {**event, "at": time.time()}})
