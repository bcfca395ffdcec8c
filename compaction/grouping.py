"""API rounds and the places a conversation may be cut without breaking the API's rules.

A cut must never separate a tool_use from its tool_result, nor split the
messages of one streamed assistant response (those sharing one API message
id). Cutting at the start of an API round satisfies both, which is why
dropping context for a retry works on rounds.
"""

from __future__ import annotations

from collections.abc import Callable

from agent.core.messages import Message, user_text
from agent.core.pairing import result_ids, use_ids
from compaction.tokens import PADDING, estimate_message

DROPPED_MARKER = "[Earlier parts of this conversation were dropped to fit the context window.]"
DROP_SHARE = 0.2  # without a reported gap, drop this share of the rounds


def group_by_api_round(messages: list[Message]) -> list[list[Message]]:
    """Split into rounds: one starts at each assistant message with a new API message id.

    An assistant message without an id always starts a round; user messages
    join the current round, so a leading user prompt is a round of its own.
    """
    groups: list[list[Message]] = []
    previous_id: str | None = None
    for message in messages:
        if message.role == "assistant":
            if not groups or message.api_id is None or message.api_id != previous_id:
                groups.append([])
            previous_id = message.api_id
        elif not groups:
            groups.append([])
        groups[-1].append(message)
    return groups


def _splits_response(messages: list[Message], index: int) -> bool:
    """True when messages[index] continues the assistant response of messages[index - 1]."""
    if index <= 0 or index >= len(messages):
        return False
    current, previous = messages[index], messages[index - 1]
    return (
        current.role == "assistant"
        and previous.role == "assistant"
        and current.api_id is not None
        and current.api_id == previous.api_id
    )


def adjust_start_index(messages: list[Message], start: int) -> int:
    """The largest index <= start where keeping messages[index:] breaks no pair and no response.

    Walks back while the tail holds a tool_result whose tool_use is before it
    (the pairing rule, ``agent.core.pairing``), or begins inside a
    multi-message assistant response. Returns 0 if it must.
    """
    index = max(0, min(start, len(messages)))
    tail = messages[index:]
    needed: set[str] = set().union(*map(result_ids, tail)) if tail else set()
    needed -= set().union(*map(use_ids, tail)) if tail else set()
    while index > 0 and (needed or _splits_response(messages, index)):
        index -= 1
        message = messages[index]
        needed -= use_ids(message)
        needed |= result_ids(message)  # a result answers an earlier message, never its own
    return index


def messages_tokens_from(
    messages: list[Message], start: int, *, estimate: Callable[[Message], float] = estimate_message
) -> float:
    """Raw estimated tokens of messages[start:]."""
    return sum(estimate(message) for message in messages[start:])


def drop_oldest_groups(
    messages: list[Message],
    token_gap: int | None,
    *,
    estimate: Callable[[Message], float] = estimate_message,
) -> list[Message] | None:
    """The conversation without its oldest API rounds, for a prompt-too-long retry.

    Drops rounds until their tokens cover ``token_gap`` (as the API counts:
    the raw ``estimate`` padded by 4/3), or without a gap 20% of the rounds
    (at least one); always keeps one round. A marker user message opens the
    result when the first kept message is the assistant's. None when there
    are fewer than two rounds, so nothing can be dropped.
    """
    groups = group_by_api_round(messages)
    if len(groups) < 2:
        return None
    if token_gap is not None and token_gap > 0:
        dropped, covered = 0, 0.0
        while dropped < len(groups) - 1 and covered < token_gap:
            covered += sum(estimate(m) for m in groups[dropped]) * PADDING
            dropped += 1
    else:
        dropped = max(1, int(len(groups) * DROP_SHARE))
    dropped = min(dropped, len(groups) - 1)
    cut = sum(len(group) for group in groups[:dropped])
    # Round boundaries never orphan a result in a valid conversation; this guards odd histories.
    cut = adjust_start_index(messages, cut)
    if cut == 0:
        return None
    kept = messages[cut:]
    if kept[0].role == "assistant":
        kept.insert(0, user_text(DROPPED_MARKER, kind="meta"))
    return kept
