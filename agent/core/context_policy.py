"""The small interface through which the loop lets context management act.

The loop calls it before every model request (tool rounds included), after
every response, and when the API says the prompt is too long. ``compaction/``
implements it; the loop does not know how. ``NoContextPolicy`` does nothing,
for callers (tests, the summarizer itself) that must not compact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agent.core.messages import Message
    from agent.loop.agent import Agent
    from agent.model.client import PromptTooLongError, StreamedResponse


class ContextPolicy(Protocol):
    async def before_request(self, agent: Agent) -> None:
        """May rewrite ``agent.messages`` (microcompact, compaction) before a request."""

    def after_response(self, agent: Agent, response: StreamedResponse, message: Message) -> None:
        """Learn from the API's reported usage; ``message`` is the response, just appended."""

    async def on_prompt_too_long(self, agent: Agent, error: PromptTooLongError) -> bool:
        """Shrink the context after the API refused it; True when a retry may now fit."""


class NoContextPolicy:
    async def before_request(self, agent: Agent) -> None:
        return None

    def after_response(self, agent: Agent, response: StreamedResponse, message: Message) -> None:
        return None

    async def on_prompt_too_long(self, agent: Agent, error: PromptTooLongError) -> bool:
        return False
