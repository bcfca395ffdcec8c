"""The structural rules every outgoing request must satisfy, checked before it leaves.

The API refuses a conversation whose first message is not the user's, that
has an empty message, or that breaks the pairing rule (``agent.core.pairing``:
every tool_use answered in the very next message, no orphan tool_result).
Compaction and interrupts are where such breaks get made, so every request is
checked: in tests a break raises (``CCX_STRICT_INVARIANTS=1``), in production
it is repaired and logged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from agent.core.messages import Message
from agent.core.pairing import pair_problems, repair_pairs

log = logging.getLogger(__name__)


class InvariantError(AssertionError):
    """A request about to be sent breaks the API's structural rules (a bug in ccx)."""


def find_violations(messages: Sequence[Message]) -> list[str]:
    if not messages:
        return ["the conversation is empty"]
    problems: list[str] = []
    if messages[0].role != "user":
        problems.append("the first message is not from the user")
    problems.extend(f"message {i} has no content" for i, m in enumerate(messages) if not m.content)
    return problems + pair_problems(messages)


def repair(messages: Sequence[Message]) -> list[Message]:
    """A copy of the conversation that satisfies the rules, losing as little as possible."""
    return repair_pairs(messages)


def enforce(messages: list[Message]) -> list[Message]:
    """The messages to send: unchanged when valid; else raise (strict) or repair and log."""
    problems = find_violations(messages)
    if not problems:
        return messages
    if os.environ.get("CCX_STRICT_INVARIANTS") == "1":
        raise InvariantError("; ".join(problems))
    log.error("repairing a conversation that breaks the API's rules: %s", "; ".join(problems))
    return repair(messages)
