"""The context manager: the loop's ContextPolicy, deciding every turn what to clear or compact.

Before each request (tool rounds included) it plans the clearing of old tool
results (microcompact); when the clear pays, the cost model may prefer a
session-memory compaction instead (clear_or_compact.py: made now on notes in
hand, or after a notes update that starts now while the clear waits a request);
otherwise it clears, counts the context, and compacts when the count reaches
the auto-compact threshold; after each response it anchors the count
on the API's usage; on prompt-too-long it compacts reactively, then drops the
oldest rounds. ``compact()`` is what `/compact` calls, and ``undo()`` brings
back the conversation from before the last compaction. With ``server_editing``
the API clears old tool results instead (server_editing.py): each request asks
for it, and each response says what it cleared.

This class keeps the session's state (the token counter, the failure count
behind the circuit breaker) and sequences the parts: ``Clearing`` carries out
microcompact, ``Compactor`` carries out compactions, and the decisions
themselves are pure functions in microcompact, thresholds, grouping, restore.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.core.compaction_record import CompactionRecord, CompactionTrigger
from agent.core.events import (
    SERVER_CLEARING,
    CompactionFailed,
    ContextUpdate,
    EventSink,
    Microcompacted,
    Notice,
)
from agent.core.messages import Message
from agent.model.accumulator import StreamedResponse
from agent.model.client import ApiError, PromptTooLongError
from compaction.clear_or_compact import memory_options, weigh
from compaction.clearing import Clearing
from compaction.compactor import Compactor
from compaction.cost_model import Situation, compaction_follows, expected_horizon
from compaction.full import CompactionError
from compaction.grouping import drop_oldest_groups
from compaction.microcompact import ClearPlan, MicrocompactConfig
from compaction.notes_compaction import compact_with_notes
from compaction.server_editing import (
    ClearToolUses,
    ServerClearing,
    cleared_read_paths,
    cleared_tool_use_ids,
    plan_server_edit,
    server_clearing,
    with_server_edit,
)
from compaction.services import CompactionServices, ConversationHost
from compaction.session_memory import SessionMemory
from compaction.summary import PartialMode
from compaction.thresholds import ContextLimits, ContextState, WindowConfig, context_state
from compaction.tokens import TokenCounter, estimate_system, estimate_tools

MAX_CONSECUTIVE_FAILURES = 3
CALIBRATION_STEP = 0.02  # a change of the learnt calibration worth a line in the transcript


class ContextFullError(ApiError):
    """The context is past the blocking limit and nothing may compact it automatically."""


__all__ = [
    "CompactionServices",
    "ContextManager",
]  # CompactionServices: still imported from here by tui/session/context_setup.py


@dataclass
class ContextManager:
    limits_for: Callable[[str], ContextLimits]
    window: WindowConfig
    services: CompactionServices
    emit: EventSink
    session_memory: SessionMemory | None = None
    # The API's context editing clears old tool results instead of microcompact (server_editing.py).
    server_editing: bool = False
    clock: Callable[[], float] = time.time
    counter: TokenCounter = field(default_factory=TokenCounter)
    failures: int = 0
    last_response_at: float | None = None
    clearing: Clearing = field(init=False)
    compactor: Compactor = field(init=False)
    _overhead: tuple[int, int, float] = (0, 0, 0.0)
    requests: int = 0  # requests this session has made (the cost model's horizon)
    early_update: bool = False  # a notes update started for a compaction instead of a clear
    _too_long_attempts: int = 0  # prompt-too-long refusals of the current request
    _server_edit: ClearToolUses | None = None  # the edit the last request asked for
    _server_cleared: ServerClearing = field(default_factory=ServerClearing)  # last reported
    _recorded_calibration: float = 0.0  # the calibration the transcript holds last
    _preview: tuple[tuple[Any, ...], int] | None = None  # (what it was made on, the count)

    def __post_init__(self) -> None:
        self.clearing = Clearing(self.services)
        self.compactor = Compactor(
            self.services,
            self.emit,
            self.count,
            self.estimate,
            self.counter.invalidate,
            self.clock,
        )

    @property
    def config(self) -> MicrocompactConfig:
        return self.clearing.config

    @config.setter
    def config(self, value: MicrocompactConfig) -> None:
        self.clearing.config = value

    # -- ContextPolicy --------------------------------------------------------------------

    async def before_request(self, agent: ConversationHost) -> None:
        self._too_long_attempts = 0  # a new request starts the prompt-too-long ladder again
        self.requests += 1
        if self.server_editing:
            self.request_server_clearing(agent)
        else:
            self.clearing.learn_growth(agent.conversation.messages)
            plan = self.plan_clearing(agent)
            if not await self.compact_instead_of_clearing(agent, plan):
                self.microcompact(agent, plan)
        state = self.state(agent, preview=False)
        self._observe_notes(agent, state)
        if (
            state.used >= state.limits.auto_compact
            and state.auto_compact_enabled
            and not self.circuit_open
        ):
            await self._auto_compact(agent)
            state = self.state(agent, preview=False)
        self.emit(ContextUpdate(state))
        if state.used >= state.limits.blocking and (
            not state.auto_compact_enabled or self.circuit_open
        ):
            raise ContextFullError(
                f"The context is full ({state.used:,} of {state.window:,} tokens). Run /compact "
                "(optionally with instructions on what to keep) or /clear to continue.",
                error_type="context_full",
            )

    def after_response(
        self, agent: ConversationHost, response: StreamedResponse, message: Message
    ) -> None:
        messages = agent.conversation.messages
        position = len(messages) - 1
        sent = list(messages[:position])
        overhead = self._overhead_estimate(agent)
        cleared = server_clearing(response.applied_edits)
        self.counter.observe_response(
            sent,
            response.usage,
            message,
            overhead,
            position=position,
            cleared_input_tokens=cleared.input_tokens,
        )
        self.last_response_at = self.clock()
        if self.server_editing:
            self._server_cleared_now(sent, cleared)
        self._record_calibration()

    def _record_calibration(self) -> None:
        """Keep the learnt calibration in the transcript when it moved, so a resumed
        session's first count (no response to anchor on yet) is as good as the last one."""
        value = self.counter.calibration
        if abs(value - self._recorded_calibration) >= CALIBRATION_STEP:
            self._recorded_calibration = value
            self.services.record_event({"type": "calibration", "value": round(value, 4)})

    def restore_calibration(self, events: list[dict[str, Any]]) -> None:
        """A resumed session: the calibration its transcript recorded last, if any."""
        for event in reversed(events):
            value = event.get("type") == "calibration" and event.get("value")
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                self.counter.seed(float(value))
                self._recorded_calibration = self.counter.calibration
                return

    async def on_prompt_too_long(self, agent: ConversationHost, error: PromptTooLongError) -> bool:
        """The recovery ladder (SPEC 3.7): compact, then drop the oldest rounds.

        The loop calls this for each refusal of one request while it returns
        True. The first refusal compacts (reactively); later ones, or a first one
        when compaction is off or fails, drop the oldest API rounds to cover the gap.
        """
        self._too_long_attempts += 1
        if self._too_long_attempts == 1 and self.window.compact_enabled:
            try:
                await self.compact(agent, trigger="reactive")
                return True
            except CompactionError as failure:
                self.emit(
                    Notice(
                        f"Reactive compaction failed ({failure}); dropping the oldest turns",
                        "warning",
                    )
                )
        trimmed = drop_oldest_groups(list(agent.conversation.messages), error.gap)
        if trimmed is None:
            return False
        agent.conversation.drop_oldest(trimmed)
        self.counter.invalidate()
        self.services.record_event(
            {"type": "dropped_oldest", "kept": len(trimmed), "gap": error.gap}
        )
        return True

    def context_window(self, agent: ConversationHost) -> int | None:
        """The window the context is kept within (ContextPolicy): one user message may take
        only a share of it, so a paste that fits the model's window but not this one is saved
        and referenced rather than sent whole (it would leave nothing compaction could do)."""
        return self.limits(agent).window

    # -- state ----------------------------------------------------------------------------

    @property
    def circuit_open(self) -> bool:
        return self.failures >= MAX_CONSECUTIVE_FAILURES

    def limits(self, agent: ConversationHost) -> ContextLimits:
        model_limits = self.limits_for(agent.model)
        if self.window.source == "model":
            return model_limits
        return ContextLimits(min(self.window.window, model_limits.window), model_limits.max_output)

    def count(self, agent: ConversationHost) -> int:
        return self.counter.count(agent.conversation.messages, self._overhead_estimate(agent))

    def estimate(self, agent: ConversationHost, messages: list[Message]) -> int:
        """What ``count`` would give with ``messages`` in place of the conversation, anchorless."""
        return self.counter.estimate(messages, self._overhead_estimate(agent))

    def state(self, agent: ConversationHost, *, preview: bool = True) -> ContextState:
        """How full the context is. With ``preview``, what the next request will carry: when
        the count is not anchored on a response (a resumed session, an undo, /clear), the
        clearing planned before that request is taken out (the transcript keeps cleared
        results whole, so a resumed conversation holds them again until then)."""
        used = self.count(agent)
        if preview and self.counter.source == "estimate" and not self.server_editing:
            used = self._after_clearing(agent, used)
        return context_state(
            used,
            self.limits(agent),
            auto_enabled=self.window.auto_enabled,
            compact_enabled=self.window.compact_enabled,
            failures=self.failures,
            circuit_open=self.circuit_open,
            source=self.counter.source,
        )

    def _after_clearing(self, agent: ConversationHost, used: int) -> int:
        """``used`` less what the clearing before the next request would free (planned, not
        carried out; remembered while the conversation and the count stay the same)."""
        messages = agent.conversation.messages
        last = messages[-1] if messages else None
        key = (len(messages), last and last.uuid, last and id(last.content), used, self.requests)
        if self._preview is not None and self._preview[0] == key:
            return self._preview[1]
        plan = self.plan_clearing(agent)
        freed = math.ceil(plan.tokens_freed * self.counter.calibration) if plan.changes else 0
        after = max(0, used - freed)
        self._preview = (key, after)
        return after

    def _overhead_estimate(self, agent: ConversationHost) -> float:
        key = (id(agent.system), id(agent.tools_api))
        if self._overhead[:2] != key:
            self._overhead = (*key, estimate_system(agent.system) + estimate_tools(agent.tools_api))
        return self._overhead[2]

    # -- microcompact ---------------------------------------------------------------------

    def plan_clearing(self, agent: ConversationHost) -> ClearPlan:
        """What microcompact would clear before this request (nothing is changed)."""
        limits = self.limits(agent)
        auto_on = self.window.auto_enabled and self.window.compact_enabled
        return self.clearing.plan(
            list(agent.conversation.messages),
            now=self.clock(),
            last_response_at=self.last_response_at,
            used_tokens=self.count(agent),
            auto_threshold=limits.auto_compact if auto_on else None,
            window=limits.window,
            anchors=agent.conversation.cache_anchors,
        )

    def microcompact(self, agent: ConversationHost, plan: ClearPlan | None = None) -> ClearPlan:
        """Clear as ``plan`` says (planned now when not given, on the same conversation)."""
        plan = self.plan_clearing(agent) if plan is None else plan
        outcome = self.clearing.apply(
            list(agent.conversation.messages), plan, self._found_by_uuid()
        )
        if outcome.plan.changes:
            agent.conversation.clear_results(outcome.messages)
            self.counter.adjust(-round(outcome.tokens_freed * self.counter.calibration))
            plan = outcome.plan
            assert plan.reason != "none"  # a plan that changes something says why
            self.emit(
                Microcompacted(
                    plan.reason,
                    len(plan.clear) + len(plan.inputs),
                    round(outcome.tokens_freed),
                    outcome.saved_paths,
                    thinking_dropped=len(plan.thinking),
                )
            )
        if not outcome.plan.changes or not agent.conversation.cache_anchors:
            # After a clear, the next request still reads the old frozen prefixes; the
            # request after it moves the anchors (its tail breakpoint reads what this wrote).
            agent.conversation.set_cache_anchors(outcome.plan.anchors)
        return outcome.plan

    def _found_by_uuid(self) -> frozenset[str]:
        """Messages that must stay where they are found by uuid: where the session notes end
        and where each compaction an undo may go back to ends."""
        found = {s.last_uuid for s in self.compactor.history.snapshots if s.last_uuid}
        covered = self.session_memory.covered_uuid() if self.session_memory else None
        return frozenset(found | ({covered} if covered else set()))

    async def compact_instead_of_clearing(self, agent: ConversationHost, plan: ClearPlan) -> bool:
        """Before ``plan`` is applied: True when a session-memory compaction was made instead,
        or its notes update started (the clear then waits a request); False to clear
        (the choice: clear_or_compact.py)."""
        memory = self.session_memory
        window = self.window
        if (
            plan.reason != "cost"
            or memory is None
            or not (window.auto_enabled and window.compact_enabled)
            or self.circuit_open
            or self.compactor.running
        ):
            self.early_update = False
            return False
        limits = self.limits(agent)
        clearing = self.clearing
        used = self.count(agent)
        situation = Situation(
            used=used,
            threshold=limits.auto_compact,
            growth=max(clearing.request_growth, clearing.growth),
            clearable_growth=clearing.growth,
            cached=self.estimate(agent, []),
            horizon=expected_horizon(self.requests),
            pressure_requests=self.config.pressure_requests,
        )
        options = memory_options(agent, memory, self.compactor, limits, self.estimate)
        choice = weigh(situation, plan, options)
        if choice.step == "update":
            started = not self.early_update and memory.start_update(agent, used, limits)
            self.early_update = started
            if started:
                self.services.record_event(
                    {
                        "type": "notes_for_compaction",
                        "used": round(situation.used),
                        "after": round(choice.after),
                        "horizon": situation.horizon,
                    }
                )
            return started
        self.early_update = False
        if choice.step == "compact":
            return await self.session_memory_compact(agent)
        return False

    # -- server-side clearing -------------------------------------------------------------

    def request_server_clearing(self, agent: ConversationHost) -> None:
        """Plan the edit that asks the API to clear old tool results by the local rule's
        parameters; ``request_extra`` puts it in every request from now on."""
        self._server_edit = plan_server_edit(
            self.limits(agent),
            auto_enabled=self.window.auto_enabled and self.window.compact_enabled,
            tool_names=[tool["name"] for tool in agent.tools_api],
            config=self.config,
        )

    def request_extra(self, extra: dict[str, Any]) -> dict[str, Any]:
        """The loop's request extra with the planned server edit (ContextPolicy).

        The summary fork sends the same, so it sees the same cleared prefix and
        reads its cache.
        """
        if not self.server_editing or self._server_edit is None:
            return extra
        return with_server_edit(extra, self._server_edit)

    def _server_cleared_now(self, sent: list[Message], cleared: ServerClearing) -> None:
        """Say when what the API clears changes, and stop counting its cleared reads as seen.

        The API clears the request's copy, so it reports clearing on every
        request once past the trigger; only a change is news.
        """
        if cleared == self._server_cleared:
            return
        self._server_cleared = cleared
        if not cleared.tool_uses or self._server_edit is None:
            return
        ids = cleared_tool_use_ids(sent, cleared.tool_uses, self._server_edit)
        for path in cleared_read_paths(sent, ids, self.services.resolve_path):
            self.clearing.forget_read(path)  # a re-read must return the text, not "unchanged"
        self.services.record_event(
            {
                "type": "microcompact",
                "reason": SERVER_CLEARING,
                "cleared": cleared.tool_uses,
                "tokens_freed": cleared.input_tokens,
            }
        )
        self.emit(Microcompacted(SERVER_CLEARING, cleared.tool_uses, cleared.input_tokens))

    # -- compaction -----------------------------------------------------------------------

    async def compact(
        self,
        agent: ConversationHost,
        *,
        trigger: CompactionTrigger = "manual",
        instructions: str | None = None,
        partial: PartialMode | None = None,
        keep_rounds: int | None = None,
    ) -> CompactionRecord:
        """Summarize the conversation (or part of it) and put the summary in its place.

        ``partial="up_to"`` keeps the last ``keep_rounds`` API rounds verbatim and
        summarizes the rest; ``partial="from"`` keeps the first ``keep_rounds`` and
        summarizes the rest. Raises CompactionError, leaving the conversation as it was.
        """
        if not self.window.compact_enabled:
            raise CompactionError("compaction is disabled (DISABLE_COMPACT)")
        record = await self.compactor.compact(
            agent,
            self.limits(agent),
            trigger=trigger,
            instructions=instructions,
            partial=partial,
            keep_rounds=keep_rounds,
        )
        self.failures = 0
        return record

    async def _auto_compact(self, agent: ConversationHost) -> None:
        if self.session_memory is not None:
            try:
                if await self._session_memory_compact(agent):
                    self.failures = 0
                    return
            except Exception as exc:  # a broken notes file must not stop the full path
                self.emit(Notice(f"Session-memory compaction failed: {exc}", "warning"))
        try:
            await self.compact(agent, trigger="auto")
            if self.count(agent) >= self.limits(agent).auto_compact:
                raise CompactionError(
                    "the context is still over the auto-compact threshold afterwards"
                )
        except CompactionError as error:
            self.failures += 1
            self.emit(CompactionFailed("auto", str(error), self.failures))
            self.services.record_event(
                {"type": "compaction_failed", "trigger": "auto", "reason": str(error)}
            )
            if self.circuit_open:
                message = (
                    f"Auto-compact failed {self.failures} times in a row and is off for this session. "
                    "/compact [instructions] tries again; /clear starts over (the transcript stays "
                    "on disk)."
                )
                self.emit(Notice(message, "error"))

    def _observe_notes(self, agent: ConversationHost, state: ContextState) -> None:
        """Let session memory start a background notes update (never from a compaction)."""
        if (
            self.session_memory is None
            or not state.auto_compact_enabled
            or self.circuit_open
            or self.compactor.running
        ):
            return
        outlook = None if self.server_editing else (lambda: self._compaction_follows(agent, state))
        self.session_memory.observe(agent, state.used, state.limits, outlook)

    def _compaction_follows(self, agent: ConversationHost, state: ContextState) -> bool:
        """cost_model.compaction_follows with this request's figures (after its clearing)."""
        messages = list(agent.conversation.messages)
        clearable = self.clearing.clearable_tokens(messages, state.limits.window)
        growth = max(self.clearing.request_growth, self.clearing.growth)  # g is part of it
        situation = Situation(
            used=state.used,
            threshold=state.limits.auto_compact,
            growth=growth,
            clearable_growth=self.clearing.growth,
            pressure_requests=self.config.pressure_requests,
        )
        return compaction_follows(situation, clearable)

    async def session_memory_compact(self, agent: ConversationHost) -> bool:
        """A session-memory compaction now, if the notes allow one (True when it was made).

        For a cost model that prices it against clearing or waiting: what it
        would keep is ``session_memory.plan(messages, limits)`` (pure, no wait).
        """
        if self.session_memory is None or not self.window.compact_enabled:
            return False
        done = await self._session_memory_compact(agent)
        if done:
            self.failures = 0
        return done

    async def _session_memory_compact(self, agent: ConversationHost) -> bool:
        assert self.session_memory is not None
        return await compact_with_notes(
            agent,
            self.session_memory,
            self.compactor,
            self.limits(agent),
            count=self.count,
            estimate=self.estimate,
            record_event=self.services.record_event,
            clock=self.clock,
        )

    def rewound(self, agent: ConversationHost) -> None:
        """The user took prompts back: count from the last response left, by the usage the
        API reported for it (an estimate of the whole would be off by the calibration's error,
        and could read more than before the rewind)."""
        self.counter.invalidate()
        self._preview = None
        messages = agent.conversation.messages
        for index in range(len(messages) - 1, -1, -1):
            if messages[index].role == "assistant" and messages[index].usage:
                self.counter.anchor_on(messages[index], index)
                return

    # -- undo -----------------------------------------------------------------------------

    @property
    def can_undo(self) -> bool:
        """Whether a compaction of this session is on record to be undone."""
        return bool(self.compactor.history)

    def undo(self, agent: ConversationHost) -> bool:
        """Bring back the conversation from before the last compaction.

        False when there is none, or when what it put in place can no longer be
        found in the conversation, so there is nothing it can undo safely.
        """
        return self.compactor.undo(agent)

    def restore_history(
        self,
        segments: list[list[Message]],
        boundaries: list[dict[str, Any]],
        live: list[Message] | None = None,
        first_unread: bool = False,
    ) -> None:
        """Undo snapshots for a resumed session; ``live`` is the loaded conversation;
        ``first_unread``: the transcript was read from its end (``Compactor.restore_history``)."""
        self.compactor.restore_history(segments, boundaries, live, first_unread)
