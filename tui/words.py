"""Words both front ends use for what the agent did on its own: clearing, compaction, retries."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from agent.core.events import SERVER_CLEARING, Microcompacted
from compaction.thresholds import format_tokens

if TYPE_CHECKING:
    from agent.sessions.session import SessionInfo

# Why ccx cleared old tool results, as a user would put it (compaction.microcompact's reasons).
CLEARING_REASONS = {
    "pressure": "context was near the limit",
    "time": "the prompt cache had expired, so nothing cached was lost",
    "cost": "cheaper than sending them again",
}
STATUS_CAUSES = {
    429: "rate limited",
    500: "server error",
    502: "bad gateway",
    503: "service unavailable",
    504: "gateway timeout",
    529: "the API is overloaded",
}


def clearing_words(event: Microcompacted) -> str:
    """`Cleared 3 old tool results, freed 2.5K tokens (context was near the limit)`."""
    results = f"{event.cleared} old tool result{'s' if event.cleared != 1 else ''}"
    freed = format_tokens(event.tokens_freed)
    if event.reason == SERVER_CLEARING:
        return f"The API clears {results} from what the model sees ({freed} tokens)"
    why = CLEARING_REASONS.get(event.reason, event.reason)
    return f"Cleared {results}, freed {freed} tokens ({why})"


def retry_cause(reason: str) -> str:
    """`529 overloaded_error` -> `the API is overloaded (529)`; other reasons as they are."""
    match = re.match(r"(\d{3})\b\s*(.*)", reason)
    if match is None:
        return reason
    status, kind = int(match.group(1)), match.group(2)
    words = STATUS_CAUSES.get(status) or (kind.replace("_", " ") if kind else "error")
    return f"{words} ({status})"


def retry_words(attempt: int, max_attempts: int, reason: str, seconds_left: float) -> str:
    """`The API is overloaded (529); retrying in 8s (attempt 2 of 10)`."""
    cause = retry_cause(reason)
    left = max(0, round(seconds_left))
    return f"{cause[:1].upper()}{cause[1:]}; retrying in {left}s (attempt {attempt} of {max_attempts})"


def relative(text: str, cwd: Path | None) -> str:
    """``text`` with paths inside ``cwd`` written relative to it, as the user reads them."""
    if cwd is None or not os.path.isabs(cwd):
        return text
    prefix = str(cwd).rstrip(os.sep) + os.sep
    return text.replace(prefix, "") if len(prefix) > 1 else text


def age(seconds: float) -> str:
    if seconds < 90:
        return "just now"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 86400:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} days ago"


def session_line(info: SessionInfo, now: float) -> str:
    """One stored session for a picker: age, message count, first prompt."""
    count = f"{'~' if info.count_estimated else ''}{info.message_count} messages"
    return f"{age(now - info.modified):>12}  {count:>14}  {info.first_prompt or '(no prompt)'}"
