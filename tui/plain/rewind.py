"""Rewinding in the plain REPL (Esc twice on an empty prompt, or /rewind): the prompts still
in the conversation as a numbered list, latest first, and the choice."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.session.rewind import first_line

if TYPE_CHECKING:
    from tui.session.rewind import RewindPoint

MAX_LISTED = 20
MAX_FILES_NAMED = 3


def listing(points: list[RewindPoint]) -> list[str]:
    """`` 1. fix the parser``: latest first, at most MAX_LISTED."""
    return [f"{p.number:>2}. {first_line(p.text)}" for p in points[:MAX_LISTED]]


def pick(answer: str, points: list[RewindPoint]) -> RewindPoint | None:
    """The point ``answer`` names by its number in the listing."""
    answer = answer.strip()
    if not answer.isdigit():
        return None
    return next((p for p in points[:MAX_LISTED] if p.number == int(answer)), None)


def files_words(point: RewindPoint) -> str:
    """``2 files since then: a.py, b.py``: what "conversation and files" would put back."""
    count = len(point.files)
    names = ", ".join(point.files[:MAX_FILES_NAMED])
    if count > MAX_FILES_NAMED:
        names += f" and {count - MAX_FILES_NAMED} more"
    return f"{count} file{'s' if count != 1 else ''} since then: {names}"
