"""Where session-memory compaction (SPEC 3.6) plugs in.

A background side call keeps a notes file for the session up to date; when
compaction is due, notes that cover the conversation up to some message can
stand in for the summary, with no model call. The manager tries a
``SessionMemory`` first when one is configured and falls back to a full
compaction when it returns nothing or leaves the context over the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agent.core.messages import Message


@dataclass
class SessionMemoryResult:
    summary: str  # the notes, used as the summary
    keep_from: int  # messages from this index on are kept verbatim (adjusted for safe cuts)


class SessionMemory(Protocol):
    async def try_compact(self, messages: list[Message]) -> SessionMemoryResult | None:
        """Notes covering ``messages`` up to some point, or None when there are none usable."""
