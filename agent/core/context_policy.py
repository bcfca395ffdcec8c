"""The small interface through which the loop lets context management act, and what it shows it.

The loop calls a ``ContextPolicy`` before every model request (tool rounds
included), after every response, and when the API says the prompt is too
long, and asks it what to add to each request (the API's context edits).
``compaction/`` implements it; the loop does not know how. What the policy
may see and use of the loop is a ``PolicyHost``: the conversation (changed
only through its own methods), the model, system prompt and tools the
requests carry, the client for side calls and the session's costs.
``NoContextPolicy`` does nothing, for callers (tests, the summarizer itself)
that must not compact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agent.core.conversation import Conversation
    from agent.core.messages import Message, TextBlock
    from agent.loop.cost import CostTracker
    from agent.model.accumulator import StreamedResponse
    from agent.model.client import ModelClient, PromptTooLongError


class PolicyHost(Protocol):
    """The slice of the loop context management works with (the loop's ``Agent`` is one)."""

    @property
    def conversation(self) -> Conversation: ...

    @property
    def model(self) -> str: ...

    @property
    def system(self) -> list[TextBlock]: ...

    @property
    def tools_api(self) -> list[dict[str, Any]]: ...

    @property
    def client(self) -> ModelClient: ...

    @property
    def costs(self) -> CostTracker | None: ...

    @property
    def request_extra(self) -> dict[str, Any]:
        """What the loop's requests send beyond the messages (headers, body fields)."""
        ...


class ContextPolicy(Protocol):
    async def before_request(self, host: PolicyHost) -> None:
        """May change the conversation (microcompact, compaction) before a request."""

    def after_response(
        self, host: PolicyHost, response: StreamedResponse, message: Message
    ) -> None:
        """Learn from the API's reported usage; ``message`` is the response, just appended."""

    async def on_prompt_too_long(self, host: PolicyHost, error: PromptTooLongError) -> bool:
        """Shrink the context after the API refused it; True when a retry may now fit."""

    def request_extra(self, extra: dict[str, Any]) -> dict[str, Any]:
        """``extra`` with what the policy adds to the next request (e.g. the API's context edits)."""
        ...

    def context_window(self, host: PolicyHost) -> int | None:
        """The window the context is kept within, when smaller than the model's (None: the
        model's): one user message may take only a share of it (``agent.loop.long_prompt``)."""
        ...


class NoContextPolicy:
    async def before_request(self, host: PolicyHost) -> None:
        return None

    def after_response(
        self, host: PolicyHost, response: StreamedResponse, message: Message
    ) -> None:
        return None

    async def on_prompt_too_long(self, host: PolicyHost, error: PromptTooLongError) -> bool:
        return False

    def request_extra(self, extra: dict[str, Any]) -> dict[str, Any]:
        return extra

    def context_window(self, host: PolicyHost) -> int | None:
        return None
