"""How a turn of the loop ends: its outcome, or the limits that stop it (``agent.loop.agent``).

Control leaves the loop through these exceptions, which carry their message: the turn
limit (``--max-turns``) and the spending limit (``--max-budget-usd``); a model the
API does not serve, refused before its first request; and a model that keeps replying
with nothing (``EmptyReplyError``: a turn that got no answer has failed, it has not
succeeded).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent.core.sendable import BLANK_PROMPT
from agent.model.client import ApiError


@dataclass
class TurnOutcome:
    result: str
    stop_reason: str | None
    num_turns: int


class MaxTurnsReached(Exception):
    def __init__(self, turns: int):
        super().__init__(f"Reached the maximum of {turns} turns")
        self.turns = turns


class BudgetExceeded(Exception):
    """--max-budget-usd: the session spent its budget; no more requests are sent."""

    def __init__(self, budget: float, spent: float):
        super().__init__(f"Reached the maximum budget of ${budget:g} (spent ${spent:.4f})")


class NothingToSend(Exception):
    """The prompt holds no words (nothing, or only whitespace): nothing was sent, nothing kept."""

    def __init__(self, message: str = BLANK_PROMPT):
        super().__init__(message)


class UnknownModelError(ApiError):
    """The model named is not one the API serves; nothing was sent (an API failure to the
    front ends, as the API's own 404 would be)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=404, error_type="not_found_error")


# An empty reply is asked again this many times before the turn fails. The API sometimes
# ends a turn with no content at all (stop_reason end_turn); asked again, the model goes on.
MAX_EMPTY_RETRIES = 2


def is_empty_reply(content: list[Any]) -> bool:
    """Whether a reply holds nothing to show or act on: no tool call, no server block, no
    text with a word in it (thinking alone is not an answer). Blank text and blocks of types
    ccx does not know are already left out of ``content`` (agent.model.accumulator)."""
    for block in content:
        kind = block.get("type")
        if kind == "text" and str(block.get("text", "")).strip():
            return False
        if kind not in ("text", "thinking", "redacted_thinking"):
            return False
    return True


class EmptyReplyError(ApiError):
    """The model replied with nothing, again and again (or declined with nothing): the turn
    failed. Nothing of those replies is in the conversation, which stays as it was."""

    def __init__(self, replies: int, stop_reason: str | None) -> None:
        why = f"stop_reason {stop_reason}" if stop_reason else "no stop_reason"
        if stop_reason == "refusal":
            message = f"The model declined to answer and sent no content ({why})"
        else:
            times = "once" if replies == 1 else f"{replies} times in a row"
            message = f"The model sent an empty reply {times} ({why})"
        super().__init__(
            f"{message}; nothing was added to the conversation. Send the prompt again to retry.",
            error_type="empty_response",
        )
        self.replies = replies
        self.stop_reason = stop_reason
