"""The line the model sees in place of a cleared tool result: what it was, and how to get it back.

A cleared Read says whether the file has changed since (so the model knows a
re-read returns the text); a cleared large output names the file it was saved
in; a cleared Edit or Write says whether it succeeded.
"""

from __future__ import annotations

from typing import Protocol

CLEARED_PREFIX = "[Cleared to save context"
SAVED_MARK = "Saved in full at"  # a marker with it points at the saved output


class ClearedCall(Protocol):
    """What a marker says of the call whose result it replaces (``result_index.Candidate``)."""

    @property
    def tool_name(self) -> str | None: ...

    @property
    def is_error(self) -> bool: ...


def marker_for(
    candidate: ClearedCall,
    *,
    saved_path: str | None = None,
    file_unchanged: bool | None = None,
    line_count: int | None = None,
) -> str:
    """The line the model sees instead of a cleared result: what it was and how to get it back.

    The tool call stays beside it, with the file or command it ran, so the marker does not
    repeat them: a marker is read on every request after, dozens of them on a long session.
    """
    tool = candidate.tool_name
    if tool == "Read":
        lines = f" ({line_count} lines)" if line_count else ""
        state = (
            "the file is unchanged since: Read it again for the text"
            if file_unchanged
            else "Read the file again for its current text"
        )
        return f"{CLEARED_PREFIX}: this Read{lines}; {state}.]"
    if saved_path:
        lines = f" ({line_count} lines)" if line_count else ""
        return f"{CLEARED_PREFIX}: output{lines}. {SAVED_MARK} {saved_path}; Read or Grep it if needed.]"
    if tool in ("Edit", "Write", "NotebookEdit"):
        return f"{CLEARED_PREFIX}: {'failed' if candidate.is_error else 'succeeded'}.]"
    return f"{CLEARED_PREFIX}: old output.]"
