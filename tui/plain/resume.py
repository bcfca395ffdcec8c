"""/resume in the plain REPL: the folder's other sessions as a numbered list, and the choice."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from tui.words import session_line

if TYPE_CHECKING:
    from agent.sessions.session import SessionInfo

MAX_LISTED = 20


def listing(sessions: list[SessionInfo], now: float | None = None) -> list[str]:
    """``1.  5 min ago  12 messages  fix the parser``: newest first, at most MAX_LISTED."""
    now = time.time() if now is None else now
    return [
        f"{index:>2}. {session_line(info, now).strip()}"
        for index, info in enumerate(sessions[:MAX_LISTED], start=1)
    ]


def pick(answer: str, sessions: list[SessionInfo]) -> str | None:
    """The session ``answer`` names (its number in the listing, its id, or an id's start)."""
    answer = answer.strip()
    if not answer:
        return None
    if answer.isdigit() and 1 <= int(answer) <= min(len(sessions), MAX_LISTED):
        return sessions[int(answer) - 1].id
    matches = [info.id for info in sessions if info.id.startswith(answer)]
    return matches[0] if len(matches) == 1 else None
