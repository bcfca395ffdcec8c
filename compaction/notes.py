"""Session notes: the file that holds them, and when they are worth updating.

The notes are what session-memory compaction (``session_memory``) uses as the
summary. They are written by a background side call (``notes_writer``) and
kept in ``<session folder>/notes.md``: one header line that says which
message they cover up to (its index and uuid, so a compaction can check they
still match the conversation) and the notes themselves. The file is written
whole or not at all (a temporary file renamed into place).

When to update (``NotesPolicy.due``), from what an update costs. One update
is one request that reads the cached conversation (0.1x a token) and writes
a few thousand output tokens at 5x: about as much as a full summary (a
4,000-token summary is 20,000 input-equivalent tokens). Notes are only used
when a compaction is due, so updating every turn would pay that price many
times for one use. So:

- an update starts only when the context is within ``lead`` of the
  auto-compact threshold, ``lead`` = 1.5 requests' recent growth, kept between
  3% and 10% of the effective window: so late that it starts only when the
  next request or the one after will cross the threshold, and the clearing
  of old tool results (which runs first, on the same pressure, two requests'
  growth before the threshold) has had its chance to make compaction
  unnecessary, and yet it lands (it runs alongside the next agent request)
  before compaction is due; a compaction that finds it still running waits
  for it rather than paying for a summary as well. A session that hovers
  below the threshold thanks to clearing pays nothing for notes (the
  audit's 120K run peaks 9K under it). A read so large that it jumps over
  the whole lead gets a full summary, which costs what an update would;
- notes that still match are redone only when what they do not cover is
  about to outgrow the keep ceiling: ``uncovered + 2 x growth >= ceiling``
  (and at least ``refresh_share`` of it). Session-memory compaction keeps
  that part verbatim up to the ceiling, so until then the notes in hand
  still serve, and a redo costs the full price again. When clearing holds
  the context just under the threshold for a while, this caps updates at
  about one per ceiling of growth, not one per request. Notes match while
  the message they cover up to is still there and comes after the last
  compaction's messages (older notes do not cover what that compaction
  kept);
- and only when a compaction is coming: the manager's outlook
  (``cost_model.compaction_follows``) says clearing alone cannot hold the
  context under the threshold for the next ten requests. Notes serve only a
  compaction; an update the clearing makes unnecessary costs as much as a
  summary and saves nothing.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agent.core.context_state import ContextLimits
from compaction.session_memory import KeepBounds

NOTES_FILE = "notes.md"
HEADER = "<!-- ccx session notes "
HEADER_END = " -->"


@dataclass(frozen=True)
class Notes:
    text: str
    covers_index: int  # the last message they cover
    covers_uuid: str
    used_tokens: int  # the context count when they were taken
    written_at: float = 0.0

    def covered_end(self, messages: list[Any]) -> int | None:
        """One past the message the notes cover in ``messages``, or None when it is gone."""
        index = self.covers_index
        if 0 <= index < len(messages) and messages[index].uuid == self.covers_uuid:
            return index + 1
        for position in range(len(messages) - 1, -1, -1):  # moved: rounds dropped, say
            if messages[position].uuid == self.covers_uuid:
                return position + 1
        return None


class NotesStore:
    """The notes file of one session; without a folder (tests, no session) notes stay in memory."""

    def __init__(self, folder: Path | None) -> None:
        self.path = folder / NOTES_FILE if folder is not None else None

    def load(self) -> Notes | None:
        """The saved notes, or None when there are none or the file is not ccx's notes."""
        if self.path is None:
            return None
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        header, _, body = text.partition("\n")
        if not (header.startswith(HEADER) and header.endswith(HEADER_END)):
            return None
        try:
            meta = json.loads(header[len(HEADER) : -len(HEADER_END)])
            return Notes(
                text=body.strip(),
                covers_index=int(meta["covers_index"]),
                covers_uuid=str(meta["covers_uuid"]),
                used_tokens=int(meta["used_tokens"]),
                written_at=float(meta.get("written_at", 0.0)),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def save(self, notes: Notes) -> bool:
        """Write the notes whole or not at all; False when the file could not be written."""
        if self.path is None:
            return True
        meta = {k: v for k, v in asdict(notes).items() if k != "text"}
        data = f"{HEADER}{json.dumps(meta)}{HEADER_END}\n{notes.text}\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".notes-")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(data)
            os.replace(temporary, self.path)
        except OSError:
            return False
        return True


@dataclass(frozen=True)
class NotesPolicy:
    lead_requests: float = 1.5
    min_lead_share: float = 0.03  # of the effective window
    max_lead_share: float = 0.10
    refresh_share: float = 0.5  # of the keep ceiling, at least
    refresh_requests: float = 2.0  # requests' growth before the ceiling
    # update only when a compaction is coming (cost_model.compaction_follows), not when
    # clearing alone holds the context under the threshold
    needs_compaction: bool = True

    def lead(self, limits: ContextLimits, growth: float) -> float:
        low, high = limits.effective * self.min_lead_share, limits.effective * self.max_lead_share
        return min(high, max(low, self.lead_requests * growth))

    def near(self, used: int, limits: ContextLimits, growth: float) -> bool:
        """Whether the context is within the lead of the threshold (the cheap first test)."""
        return used >= limits.auto_compact - self.lead(limits, growth)

    def due(
        self,
        *,
        used: int,
        limits: ContextLimits,
        growth: float,
        uncovered: float | None,
    ) -> bool:
        """Whether to start an update now (see the module docstring).

        ``growth``: tokens a request has recently added; ``uncovered``: the
        tokens of the messages after those the notes cover, None when there
        are no notes that still match the conversation.
        """
        if not self.near(used, limits, growth):
            return False
        if uncovered is None:
            return True
        ceiling = KeepBounds.for_threshold(limits.auto_compact).max_tokens
        refresh_at = max(self.refresh_share * ceiling, ceiling - self.refresh_requests * growth)
        return uncovered >= refresh_at
