"""How a turn of the loop ends: its outcome, or the limits that stop it (``agent.loop.agent``).

Control leaves the loop through these exceptions, which carry their message: the turn
limit (``--max-turns``) and the spending limit (``--max-budget-usd``); and a model the
API does not serve, refused before its first request.
"""

from __future__ import annotations

from dataclasses import dataclass

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
