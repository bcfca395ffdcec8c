"""The agent loop: prompt -> model -> tools -> model ... until the model stops asking for tools.

    submit(prompt)
      append the user's message (one too long to send whole: saved, sent as a pointer)
      repeat:
        before_request   (file-change notices, context policy: microcompact / compaction)
        call_model       (streamed, retried; prompt-too-long -> context policy; cut off -> the
                          model's whole output limit)
        append the response
        run its tool calls, append their results
      until the response calls no tool

Control leaves through exceptions (``MaxTurnsReached``, ``ApiError``,
``asyncio.CancelledError`` on an interrupt); whichever way it leaves, every
tool_use in the conversation has its tool_result and the transcript holds
every message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from agent.core.cancellation import raise_if_cancelling
from agent.core.context_policy import ContextPolicy, NoContextPolicy
from agent.core.conversation import Conversation, TranscriptLog
from agent.core.events import (
    AssistantMessage,
    EventSink,
    Notice,
    RequestStarted,
    ResponseDiscarded,
    TurnFinished,
    Usage,
)
from agent.core.messages import (
    INTERRUPTED_BY_USER,
    INTERRUPTED_TOOL_RESULT,
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserBlock,
    text_block,
    user_text,
)
from agent.core.pairing import answers_for
from agent.core.request import build_request
from agent.core.sendable import without_blank_text
from agent.core.thinking import loop_thinking_missing, thinking_on, without_thinking_config
from agent.loop.cost import CostTracker
from agent.loop.endings import (
    MAX_EMPTY_RETRIES,
    BudgetExceeded,
    EmptyReplyError,
    MaxTurnsReached,
    NothingToSend,
    TurnOutcome,
    UnknownModelError,
    is_empty_reply,
)
from agent.loop.long_prompt import PromptLimit, fit_prompt
from agent.loop.stop_hooks import StopHook, stop_hook_feedback
from agent.loop.tool_runner import ToolRunner
from agent.model.accumulator import StreamedResponse
from agent.model.catalog import ModelLimits, limits_for
from agent.model.client import ApiError, ModelClient, OverloadedError, PromptTooLongError
from agent.model.thinking import RequestSettings, ThinkingChoice, request_settings
from agent.sessions.session import TRANSCRIPT_FAILED_RESULT, Session, TranscriptWriteError
from tools.surrogates import escape_value

log = logging.getLogger(__name__)

MAX_CONTINUATIONS = 3
MAX_PROMPT_TOO_LONG_RECOVERIES = 3  # per request: reactive compaction, then dropping old rounds
CONTINUE_NUDGE = (
    "Your last response was cut off at the output limit. Continue exactly where it stopped; "
    "do not repeat or summarize what you already wrote. "
    "Split long file contents into smaller edits."
)


# A turn's last word: a text that ends it now (tool results in), or a nudge to go on.
TurnCheck = Callable[[], str | None]


@dataclass
class AgentConfig:
    model: str
    fallback_model: str | None = None
    # None: the model's own (agent.model.thinking); a number caps it.
    max_tokens: int | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    request_extra: dict[str, Any] = field(default_factory=dict)
    # A model's context window and output limit (the runtime prefers the Models API's figures).
    limits: Callable[[str], ModelLimits] = limits_for
    purpose: str = "agent"  # what the loop's requests count as in CostTracker.by_purpose
    thinking: ThinkingChoice = field(default_factory=ThinkingChoice)  # the user's switches
    long_context_models: Collection[str] = ()  # named with [1m]: the 1M beta
    metadata: Callable[[], dict[str, Any]] | None = None  # each request's ``metadata``
    # Why a model cannot be used (unknown to the table and the Models API), or None;
    # asked once per model before its first request.
    model_check: Callable[[str], Awaitable[str | None]] | None = None


class Agent:
    def __init__(
        self,
        *,
        config: AgentConfig,
        client: ModelClient,
        runner: ToolRunner,
        system: list[TextBlock],
        emit: EventSink,
        session: TranscriptLog | None = None,
        policy: ContextPolicy | None = None,
        messages: list[Message] | None = None,
        reminder_sources: list[Callable[[], list[str]]] | None = None,
        on_tool_results: Callable[[list[ToolUseBlock], Message], list[str]] | None = None,
        stop_hook: StopHook | None = None,
        costs: CostTracker | None = None,
        prompt_folder: Callable[[], Path] | None = None,
    ) -> None:
        """``costs``: the tracker to count in (a subagent counts in its parent's);
        ``prompt_folder``: where a prompt too long to send whole is saved (the session's
        folder, ``agent.loop.long_prompt``; without it a prompt is sent as it is)."""
        self.config = config
        self.model = config.model
        self.client = client
        self.runner = runner
        self.system = system
        self._tools_api: list[dict[str, Any]] | None = None  # made when first read
        self.emit = emit
        self.policy: ContextPolicy = policy or NoContextPolicy()
        self.conversation = Conversation(messages or (), session)
        self.reminder_sources = reminder_sources or []
        self.on_tool_results = on_tool_results
        self.stop_hook = stop_hook
        self.prompt_folder = prompt_folder
        self.costs = costs if costs is not None else CostTracker()
        self.turns_total = 0
        self._pending_reminders: list[str] = []
        self._checked_system: list[TextBlock] | None = None
        self._checked_tools: list[dict[str, Any]] | None = None
        self._usable_models: set[str] = set()
        self.finish_after_tools: TurnCheck | None = None  # e.g. the structured output given
        self.nudge_before_end: TurnCheck | None = None  # e.g. the structured output missing
        # Called as each turn starts, before its prompt is appended: the one point where the
        # tool list may change (e.g. MCP servers that connected meanwhile), never mid-loop.
        self.before_turn: Callable[[], None] | None = None

    @property
    def tools_api(self) -> list[dict[str, Any]]:
        """The tool definitions each request sends: the runner's tools, unless set (a
        session's tool list sets them, leaving out the tools behind ToolSearch). Made when
        first read: a definition's JSON schema costs ~0.4 ms, and a session sets its list
        before its first request."""
        if self._tools_api is None:
            self._tools_api = self.runner.api_tools()
        return self._tools_api

    @tools_api.setter
    def tools_api(self, definitions: list[dict[str, Any]]) -> None:
        self._tools_api = definitions

    @property
    def messages(self) -> Sequence[Message]:
        """The conversation, read-only: it changes only through ``conversation``'s methods."""
        return self.conversation.messages

    @property
    def session(self) -> TranscriptLog | None:
        """The transcript the conversation is recorded in."""
        return self.conversation.transcript

    @property
    def request_extra(self) -> dict[str, Any]:
        """What the next request sends beyond the messages: the configured extra, the
        policy's, and the model's thinking, effort and betas (side calls send them too)."""
        extra = self.request_settings().extra(self.policy.request_extra(self.config.request_extra))
        if self.config.metadata is not None:
            extra["metadata"] = self.config.metadata()
        return extra

    def request_settings(self) -> RequestSettings:
        """Thinking, effort, ``max_tokens`` and betas for the current model."""
        model, choice = self.model, self.config.thinking
        if self.config.max_tokens:
            choice = replace(choice, max_output=self.config.max_tokens)
        return request_settings(
            model,
            choice,
            output_limit=self.config.limits(model).max_output,
            long_context=model in self.config.long_context_models,
        )

    # -- the turn ------------------------------------------------------------------------

    async def submit(
        self,
        prompt: str | list[UserBlock],
        uuid: str | None = None,
        kind: Literal["prompt", "meta"] = "prompt",
    ) -> TurnOutcome:
        """Run the user's prompt (its message's ``uuid`` given, or a new one) to the end of
        the model's work (``kind`` "meta": a turn ccx starts itself, e.g. to tell the model a
        background job ended). NothingToSend when it holds no words: nothing is appended."""
        blocks = [text_block(prompt)] if isinstance(prompt, str) else prompt
        # The API refuses a text block without words.
        content: list[ContentBlock] = without_blank_text(blocks)
        if not content:
            raise NothingToSend()
        if self.before_turn is not None:
            self.before_turn()
        message = Message(role="user", content=content, kind=kind)
        if uuid:
            message.uuid = uuid
        if self.prompt_folder is not None:  # PromptNotSaved: nothing is appended or sent
            window = self.policy.context_window(self)
            limit = PromptLimit.for_model(self.config.limits(self.model), window)
            message.content = fit_prompt(content, limit, self.prompt_folder(), message.uuid)
        self.append(message)
        turns = 0
        max_tokens: int | None = None  # the model's own, until a response is cut off
        continuations = stop_continues = empty_replies = 0
        try:
            while True:
                raise_if_cancelling()  # an interrupt caught on its way ends the turn here
                self._check_budget()
                await self.policy.before_request(self)
                response = await self.call_model(max_tokens)
                if response.stop_reason != "max_tokens" and is_empty_reply(response.content):
                    empty_replies += 1
                    self._empty_reply(response, empty_replies)
                    continue  # the same request again; nothing of the reply is kept
                empty_replies = 0
                turns += 1
                self.turns_total += 1
                if (
                    response.stop_reason == "max_tokens"
                    and max_tokens is None
                    and (self._output_limit() > self._max_tokens(None))
                ):
                    # Retried whole with the model's whole output limit; the cut response
                    # is not kept.
                    max_tokens = self._output_limit()
                    if _shows_text(response):
                        self.emit(ResponseDiscarded("retrying with a higher output limit"))
                    self.emit(Notice(f"Output limit hit; retrying with max_tokens={max_tokens}"))
                    continue
                message = self.append_response(response)
                if message.tool_uses():
                    await self.run_tools(message, response.invalid_inputs)
                    if (stopped := self._hook_stop()) is not None:
                        return self._finish(stopped, "stop_hook", turns)
                    if (text := self._check(self.finish_after_tools)) is not None:
                        return self._finish(text, response.stop_reason, turns)
                    if self.config.max_turns is not None and turns >= self.config.max_turns:
                        raise MaxTurnsReached(turns)
                    continue
                if response.stop_reason == "max_tokens" and continuations < MAX_CONTINUATIONS:
                    continuations += 1
                    self.append(user_text(CONTINUE_NUDGE, kind="meta"))
                    continue
                if (nudge := self._check(self.nudge_before_end)) is not None:
                    self.append(user_text(nudge, kind="meta"))
                    continue
                if await self._stop_hook_continues(message, stop_continues):
                    stop_continues += 1
                    continue
                return self._finish(message.text(), response.stop_reason, turns)
        except asyncio.CancelledError:
            self.close_interrupted()
            self.emit(TurnFinished("", None, turns, interrupted=True))
            raise
        except TranscriptWriteError:
            # Stopped before its tool calls ran: answer them, so the conversation in memory
            # stays valid for a later turn (the transcript gets them if it can be written).
            self.conversation.close_dangling(TRANSCRIPT_FAILED_RESULT)
            raise

    def _empty_reply(self, response: StreamedResponse, replies: int) -> None:
        """An empty reply: said, and asked again, up to MAX_EMPTY_RETRIES times in a row;
        past that (or at once for a refusal) EmptyReplyError fails the turn."""
        if _shows_text(response):  # thinking a front end showed
            self.emit(ResponseDiscarded("the reply was empty"))
        if response.stop_reason == "refusal" or replies > MAX_EMPTY_RETRIES:
            raise EmptyReplyError(replies, response.stop_reason)
        self.emit(
            Notice(
                f"The model sent an empty reply; asking again ({replies} of {MAX_EMPTY_RETRIES})",
                "warning",
            )
        )

    def _finish(self, result: str, stop_reason: str | None, turns: int) -> TurnOutcome:
        outcome = TurnOutcome(result, stop_reason, turns)
        self.emit(TurnFinished(outcome.result, outcome.stop_reason, turns))
        return outcome

    def _check_budget(self) -> None:
        budget = self.config.max_budget_usd
        if budget is not None and self.costs.total_cost_usd >= budget:
            raise BudgetExceeded(budget, self.costs.total_cost_usd)

    @staticmethod
    def _check(check: TurnCheck | None) -> str | None:
        return check() if check is not None else None

    def _hook_stop(self) -> str | None:
        """A tool hook's ``continue: false`` or a denial that ends the turn: why, for the user."""
        if (denied := self.runner.take_stop()) is not None:
            return denied
        hooks = self.runner.hooks
        reason = hooks.take_stop() if hooks is not None else None
        if reason is not None:
            self.emit(Notice(f"A hook stopped the turn: {reason}", "warning"))
        return reason

    async def _stop_hook_continues(self, message: Message, continues: int) -> bool:
        """Whether a Stop hook sent the agent on (its reason is appended for the model)."""
        if self.stop_hook is None:
            return False
        reason = await stop_hook_feedback(self.stop_hook, message.text(), continues, self.emit)
        if reason is not None:
            self.append(user_text(reason, kind="meta"))
        return reason is not None

    # -- steps ---------------------------------------------------------------------------

    async def call_model(self, max_tokens: int | None = None) -> StreamedResponse:
        recoveries = 0
        tried_fallback = False
        while True:
            await self._check_model()
            request = self.build_request(max_tokens)
            self.emit(RequestStarted(self.model))
            try:
                response = await self.client.stream(request)
            except PromptTooLongError as error:
                # The policy compacts on its first call and drops the oldest rounds after that.
                if recoveries < MAX_PROMPT_TOO_LONG_RECOVERIES and (
                    await self.policy.on_prompt_too_long(self, error)
                ):
                    recoveries += 1
                    continue
                raise
            except OverloadedError:
                fallback = self.config.fallback_model
                if fallback and not tried_fallback and fallback != self.model:
                    tried_fallback = True
                    self.emit(
                        Notice(f"{self.model} is overloaded; switching to {fallback}", "warning")
                    )
                    self.model = fallback
                    continue
                raise
            if response.request_escaped:
                self._escape_conversation()
            self._record_usage(response)
            return response

    async def _check_model(self) -> None:
        if self.config.model_check is None or self.model in self._usable_models:
            return
        if (problem := await self.config.model_check(self.model)) is not None:
            raise UnknownModelError(problem)
        self._usable_models.add(self.model)

    def build_request(self, max_tokens: int | None = None) -> dict[str, Any]:
        """The next request; ``max_tokens`` None: the model's default (see ``_max_tokens``)."""
        messages = self.conversation.for_prompt()
        # Checked once per new system prompt or tool list (a directory or memory file whose
        # name is not UTF-8 lands in the system prompt); messages are escaped as appended.
        if self.system is not self._checked_system:
            self.system = self._checked_system = escape_value(self.system)
        if self.tools_api is not self._checked_tools:
            self.tools_api = self._checked_tools = escape_value(self.tools_api)
        extra = self.request_extra
        budgeted = (extra.get("thinking") or {}).get("type") == "enabled"
        if budgeted and thinking_on(extra) and loop_thinking_missing(messages):
            # The response this tool loop continues has no thinking to send back (made with
            # thinking off, say): with budgeted thinking the API would refuse the request.
            # Adaptive thinking may skip thinking, so a loop without it is accepted there
            # (and adaptive-only models refuse thinking turned off).
            extra = without_thinking_config(extra)
        return build_request(
            model=self.model,
            system=self.system,
            tools=self.tools_api,
            messages=messages,
            max_tokens=self._max_tokens(max_tokens),
            extra=extra,
            anchors=self.conversation.cache_anchors,
        )

    def _escape_conversation(self) -> None:
        """After a request had to be escaped to be sent: escape the messages it came from.

        Only reached when text got into the conversation without passing ``append``
        (compaction's attachments, say); a resumed transcript is repaired when it is loaded.
        """
        healed = self.conversation.escape_text()
        log.info("escaped text that is not valid UTF-8 in %d message(s)", healed)

    async def run_tools(self, message: Message, invalid_inputs: dict[str, str]) -> None:
        uses = message.tool_uses()
        results: dict[str, ToolResultBlock] = {}
        try:
            raise_if_cancelling()  # none runs after an interrupt caught on its way
            await self.runner.run(uses, invalid_inputs, results)
        except BaseException as exc:
            # Whatever escapes (an interrupt, a bug around a tool), every call gets its result.
            interrupted = isinstance(exc, asyncio.CancelledError)
            if not interrupted:
                log.exception("running tools failed")
            self._append_results(uses, results, interrupted=interrupted, failure=exc)
            raise
        self._append_results(uses, results, interrupted=False)

    def _append_results(
        self,
        uses: list[ToolUseBlock],
        results: dict[str, ToolResultBlock],
        interrupted: bool,
        failure: BaseException | None = None,
    ) -> None:
        if interrupted or failure is None:
            missing = INTERRUPTED_TOOL_RESULT
        else:
            missing = (
                "The tool failed with an internal error before it could finish "
                f"({type(failure).__name__}: {failure}). It may not have run."
            )
        blocks = answers_for(uses, results, missing)
        message = Message(role="user", content=[*blocks], kind="tool_result")
        if interrupted:
            message.content.append(text_block(INTERRUPTED_BY_USER))
        elif self.on_tool_results is not None:
            self._pending_reminders.extend(self.on_tool_results(uses, message))
        # On the way out of an interrupt or a crash, the error already leaving wins.
        self.append(message, check_transcript=not interrupted and failure is None)

    def close_interrupted(self) -> None:
        """After an interrupt: answer dangling tool calls and note the interruption."""
        self.conversation.close_dangling(INTERRUPTED_TOOL_RESULT)
        last = self.messages[-1] if self.messages else None
        if last is not None and INTERRUPTED_BY_USER not in last.text():
            self.append(user_text(INTERRUPTED_BY_USER, kind="meta"), check_transcript=False)

    # -- bookkeeping ---------------------------------------------------------------------

    def append(self, message: Message, check_transcript: bool = True) -> None:
        """Add a message to the conversation (which escapes and records it), with any
        pending reminders.

        Raises TranscriptWriteError when the transcript cannot be written (the
        message is kept, and written later if the transcript recovers).
        """
        if message.role == "user":
            for source in self.reminder_sources:
                self._pending_reminders.extend(source())
            if self._pending_reminders:
                message.content.append(text_block(reminder_text(self._pending_reminders)))
                self._pending_reminders.clear()
        self.conversation.append(message)
        if check_transcript:
            self._check_transcript()

    def _check_transcript(self) -> None:
        session = self.session
        if isinstance(session, Session) and session.write_error is not None:
            raise TranscriptWriteError.of(session)

    def append_response(self, response: StreamedResponse) -> Message:
        content: list[ContentBlock] = list(response.content) or [text_block("(no content)")]
        message = Message(
            role="assistant",
            content=content,
            kind="response",
            api_id=response.api_id,
            usage=response.usage,
            model=response.model or self.model,
            stop_reason=response.stop_reason,
        )
        self.append(message, check_transcript=False)
        self.policy.after_response(self, response, message)
        self.emit(
            AssistantMessage(
                message.to_api(),
                response.api_id,
                response.stop_reason,
                response.usage,
                message.model or self.model,
                message.uuid,
            )
        )
        self._check_transcript()
        return message

    def _record_usage(self, response: StreamedResponse) -> None:
        usage = response.usage
        model = response.model or self.model
        cost = self.costs.add(model, usage, response.duration_s, purpose=self.config.purpose)
        self.emit(
            Usage(
                input_tokens=usage.get("input_tokens", 0),
                output_tokens=usage.get("output_tokens", 0),
                cache_read_input_tokens=usage.get("cache_read_input_tokens", 0),
                cache_creation_input_tokens=usage.get("cache_creation_input_tokens", 0),
                cost_usd=cost,
                total_cost_usd=self.costs.total_cost_usd,
            )
        )

    def _output_limit(self) -> int:
        return self.config.limits(self.model).max_output

    def _max_tokens(self, asked: int | None) -> int:
        """``asked``, else the configured cap, else the model's default; never above its limit."""
        chosen = asked or self.request_settings().max_tokens
        return min(chosen, self._output_limit())


def _shows_text(response: StreamedResponse) -> bool:
    """Whether the response streamed text or thinking that a front end has shown."""
    return any(block.get("type") in ("text", "thinking") for block in response.content)


def reminder_text(reminders: list[str]) -> str:
    return "<system-reminder>\n" + "\n".join(reminders) + "\n</system-reminder>"


__all__ = [
    "Agent",
    "AgentConfig",
    "ApiError",
    "BudgetExceeded",
    "MaxTurnsReached",
    "NothingToSend",
    "TranscriptWriteError",
    "TurnOutcome",
    "UnknownModelError",
]
