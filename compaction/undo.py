"""What /undo-compact brings back: the conversation and file-state cache from before a compaction.

Each compaction leaves a ``Snapshot``. The messages the compaction put in
place may since have been rewritten at the head (a prompt-too-long retry drops
the oldest rounds, an invariant repair patches them), so a snapshot finds its
place again by the uuid of the last of them, not by a count; when that
message is gone there is nothing it can safely undo.

Memory holds only the last ``UNDO_IN_MEMORY`` snapshots (each is a whole
conversation from before a compaction: keeping all of them grew a long
session's memory by every message it ever had). The older ones are in the
transcript, which keeps everything, and are read back from it when
/undo-compact reaches them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.core.messages import Message
from tools.file_state import FileState

UNDO_IN_MEMORY = 2


@dataclass
class Snapshot:
    """The conversation and the file-state cache just before a compaction."""

    messages: list[Message]
    last_uuid: str | None  # the last message the compaction put in place (None: older transcripts)
    replaced_count: int  # how many messages the compaction put in place
    file_state: dict[str, FileState] = field(default_factory=dict)

    def end_in(self, messages: list[Message]) -> int | None:
        """Where what the compaction put in place ends in ``messages``; None when that is lost."""
        if self.last_uuid is None:
            return self.replaced_count if len(messages) >= self.replaced_count else None
        for index in range(len(messages) - 1, -1, -1):
            if messages[index].uuid == self.last_uuid:
                return index + 1
        return None


def snapshots_from_transcript(
    segments: list[list[Message]],
    boundaries: list[dict[str, Any]],
    live: list[Message] | None = None,
) -> list[Snapshot]:
    """Undo snapshots for a resumed session, from the transcript's segments and boundaries.

    A boundary record names the last message its compaction put in place
    (``last_uuid``); for older records, which give only ``replaced_count``, that
    message is looked up in what followed the boundary: the next segment, or
    ``live`` (the loaded conversation) after the last boundary. The file-state
    cache of those days is not in the transcript, so the snapshots carry none.
    """
    following: list[list[Message] | None] = [*segments[1:], live]
    snapshots = []
    for segment, boundary, after in zip(segments, boundaries, following, strict=False):
        count = boundary.get("replaced_count")
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            continue
        last_uuid = boundary.get("last_uuid")
        if not isinstance(last_uuid, str):
            last_uuid = after[count - 1].uuid if after and len(after) >= count else None
        snapshots.append(Snapshot(list(segment), last_uuid, count))
    return snapshots


@dataclass
class UndoHistory:
    """The compactions /undo-compact can take back, newest last: the last few in memory, the
    rest counted and read back from the transcript (``load``) when undo reaches them."""

    load: Callable[[], list[Snapshot]] = list  # the snapshots the transcript has in effect
    snapshots: list[Snapshot] = field(default_factory=list)
    spilled: int = 0  # older snapshots that are only in the transcript

    def __bool__(self) -> bool:
        return bool(self.snapshots) or self.spilled > 0

    def __len__(self) -> int:
        return len(self.snapshots) + self.spilled

    def push(self, snapshot: Snapshot) -> None:
        self.snapshots.append(snapshot)
        self._spill()

    def replace(self, snapshots: list[Snapshot], unread: int = 0) -> None:
        """All the snapshots in effect (a resumed session's, or the transcript's on demand);
        ``unread``: older ones not read yet (at least that many), left in the transcript."""
        self.snapshots, self.spilled = list(snapshots), unread
        self._spill()

    def last(self) -> Snapshot | None:
        """The newest snapshot, read back from the transcript when memory has none left."""
        if not self.snapshots and self.spilled:
            self.replace(self.load())  # what the transcript does not give back is gone
        return self.snapshots[-1] if self.snapshots else None

    def pop(self) -> None:
        self.snapshots.pop()

    def _spill(self) -> None:
        extra = len(self.snapshots) - UNDO_IN_MEMORY
        if extra > 0:
            del self.snapshots[:extra]
            self.spilled += extra
