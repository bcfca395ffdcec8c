"""What compaction needs from the rest of ccx, as plain interfaces.

The runtime fills a ``CompactionServices`` with callables over the session's
parts (file-state cache, transcript, skills, plan, hooks, background tasks);
``ConversationHost`` is the slice of the loop compaction works with, the
ContextPolicy's ``PolicyHost``: the conversation is changed only through its
own methods. Neither names a concrete class from agent/, so the loop and
compaction stay ignorant of each other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.core.context_policy import PolicyHost
from agent.core.messages import Message
from compaction.restore import choose_files, visible_read_paths
from tools.file_state import FileState, FileStateCache, normalize_path
from tools.jobs import Job

HookRun = Callable[[str, "str | None", dict[str, Any]], Awaitable[Any]]


ConversationHost = PolicyHost  # what compaction needs of the loop it serves


@dataclass
class CompactionServices:
    """The session's parts that compaction reads or restores; supplied by the runtime."""

    file_state: FileStateCache
    session: Any = None  # append_record (events) / path / folder
    invoked_skills: Callable[[], list[tuple[str, str, str]]] = list
    plan: Callable[[], tuple[str, str] | None] = lambda: None
    plan_reminder: Callable[[], str | None] = lambda: None
    task_list: Callable[[], str | None] = lambda: None  # the model's task list, as text
    excluded_paths: Callable[[], set[str]] = set
    background_tasks: Callable[[], list[str]] = list  # processes foreground commands left
    # Background jobs still running or ended and unread (tools.jobs.JobRegistry), and the
    # agents the model may start (the Agent tool's listing): both restored after a compaction.
    background_jobs: Callable[[], list[Job]] = list
    agents_listing: Callable[[], str | None] = lambda: None
    announcements: Callable[[], list[str]] = list
    run_hook: HookRun | None = None
    on_compacted: Callable[[], None] = lambda: None
    # A tool's file_path as a cache key: relative paths resolve against the session's directory.
    resolve_path: Callable[[str], str] = normalize_path

    def files_to_restore(
        self, kept: Iterable[Message], snapshot: dict[str, FileState] | None = None
    ) -> list[str]:
        """The files a compaction keeping ``kept`` would re-read, newest first."""
        excluded = {normalize_path(path) for path in self.excluded_paths()}
        return choose_files(
            self.file_state.snapshot() if snapshot is None else snapshot,
            visible=visible_read_paths(kept, self.resolve_path),
            excluded=excluded,
        )

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
