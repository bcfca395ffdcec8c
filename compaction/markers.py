"""The line the model sees in place of a cleared tool result: what it was, and how to get it back.

A cleared Read says whether the file has changed since (so the model knows a
re-read returns the text); a cleared large output names the file it was saved
in; a cleared Edit or Write says whether it succeeded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compaction.microcompact import Candidate

CLEARED_PREFIX = "[Cleared to save context"


def marker_for(
    candidate: Candidate,
    *,
    saved_path: str | None = None,
    file_unchanged: bool | None = None,
    line_count: int | None = None,
) -> str:
    """The line the model sees instead of a cleared result: what it was and how to get it back."""
    tool, params = candidate.tool_name, candidate.tool_input
    if tool == "Read":
        path = params.get("file_path", "?")
        lines = f" ({line_count} lines)" if line_count else ""
        state = (
            "The file has not changed since; Read it again if you need the text."
            if file_unchanged
            else "Read the file again if you need its current text."
        )
        return f"{CLEARED_PREFIX}: earlier Read of {path}{lines}. {state}]"
    what = _describe(tool, params)
    if saved_path:
        lines = f", {line_count} lines" if line_count else ""
        return f"{CLEARED_PREFIX}: output of {what}{lines}. Saved in full at {saved_path}; Read or Grep it if needed.]"
    outcome = "failed" if candidate.is_error else "succeeded"
    if tool in ("Edit", "Write"):
        return f"{CLEARED_PREFIX}: {what} {outcome}.]"
    return f"{CLEARED_PREFIX}: old output of {what}.]"


def _describe(tool: str, params: dict[str, Any]) -> str:
    if tool == "Bash":
        command = str(params.get("command", ""))
        return f"Bash `{command[:120]}`"
    if tool in ("Grep", "Glob"):
        return f"{tool} `{params.get('pattern', '')}`"
    if tool in ("Edit", "Write"):
        return f"{tool} of {params.get('file_path', '?')}"
    if tool == "WebFetch":
        return f"WebFetch `{str(params.get('url', '?'))[:200]}`"
    if tool == "TaskOutput":  # the job's whole output stays in its output file
        return f"TaskOutput of job {params.get('task_id', '?')}"
    return tool
