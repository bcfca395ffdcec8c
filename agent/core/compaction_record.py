"""What one compaction did, typed: the payload of ``CompactionFinished`` and the transcript's boundary.

Compaction fills it in; the headless result, stream-json and the transcript's
``compact_boundary`` record serialize it with ``to_json`` (the same keys the
record always had, plus ``method``), and the front ends read its fields.

``method`` says how the new context was made, in one word: ``session_memory``
(the background notes stood in for the summary, no model call),
``summary`` (a full summary call), ``partial`` (a summary of part of the
conversation, the rest kept) or ``reactive`` (a summary forced by the API's
prompt-too-long refusal).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# What started a compaction: the user (/compact), the threshold, or the API's
# prompt-too-long refusal.
CompactionTrigger = Literal["manual", "auto", "reactive"]
# What it summarized: everything, the part before or after a pivot, or nothing (the
# session notes stood in for the summary).
CompactionKind = Literal["full", "partial_up_to", "partial_from", "session_memory"]
CompactionMethod = Literal["session_memory", "summary", "partial", "reactive"]


@dataclass(frozen=True)
class CompactionRecord:
    trigger: CompactionTrigger
    kind: CompactionKind
    tokens_before: int
    tokens_after: int
    duration_s: float
    messages_summarized: int
    messages_kept: int
    restored: dict[str, list[str]]  # "files", "skills", "plan": labels; "other": kinds
    restored_tokens: int
    summary_tokens: int
    summary: str
    instructions: str | None = None
    attempts: int = 0  # summary requests made (prompt-too-long retries included)
    dropped_messages: int = 0  # dropped from the summary request to make it fit
    truncated: bool = False  # the summary was cut at the output limit
    usage: dict[str, int] = field(default_factory=dict)  # the summary call's
    replaced_count: int = 0  # messages the compaction put in place
    last_uuid: str = ""  # the last of them, for /undo-compact after a resume
    at: float = 0.0

    @property
    def method(self) -> CompactionMethod:
        """``session_memory``, ``summary``, ``partial`` or ``reactive`` (see the module docstring)."""
        if self.kind == "session_memory":
            return "session_memory"
        if self.trigger == "reactive":
            return "reactive"
        if self.kind.startswith("partial"):
            return "partial"
        return "summary"

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "method": self.method}
