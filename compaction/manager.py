"""The context manager: the loop's ContextPolicy, deciding every turn what to clear or compact.

Before each request (tool rounds included) it clears old tool results when
that pays (microcompact), counts the context, and compacts when the count
reaches the auto-compact threshold; after each response it anchors the count
on the API's usage; on prompt-too-long it compacts reactively, then drops the
oldest rounds. `compact()` is also what `/compact` calls, and `undo()` brings
back the conversation from before the last compaction.

The decisions live in pure modules (microcompact, thresholds, grouping,
restore); this class does the IO around them and keeps the session's state:
the token counter, the failure count behind the circuit breaker, and the
snapshots that make undo possible.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from agent.api import ApiError, ModelClient, PromptTooLongError, StreamedResponse
from agent.events import (
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    ContextUpdate,
    EventSink,
    Microcompacted,
    Notice,
)
from agent.messages import Message
from compaction.full import CompactionError, SummaryResult, summarize
from compaction.grouping import adjust_start_index, drop_oldest_groups, group_by_api_round
from compaction.microcompact import (
    COMPACTABLE_TOOLS,
    ClearPlan,
    MicrocompactConfig,
    ResultIndex,
    apply_clearing,
    marker_for,
    plan_clearing,
)
from compaction.restore import FILE_TOKENS, FILES_BUDGET, SKILL_TOKENS, SKILLS_BUDGET, Restoration
from compaction.session_memory import SessionMemory
from compaction.summary import PartialMode, latest_user_request, summary_message_text
from compaction.thresholds import ContextLimits, ContextState, WindowConfig, context_state
from compaction.tokens import (
    TokenCounter,
    estimate_block,
    estimate_message,
    estimate_system,
    estimate_tools,
)
from tools.file_state import FileStateCache

MAX_CONSECUTIVE_FAILURES = 3


class ContextFullError(ApiError):
    """The context is past the blocking limit and nothing may compact it automatically."""


class ConversationHost(Protocol):
    """What the manager needs of the agent it serves."""

    messages: list[Message]
    system: list[dict[str, Any]]
    tools_api: list[dict[str, Any]]
    client: ModelClient
    model: str
    costs: Any


HookRun = Callable[[str, "str | None", dict[str, Any]], Awaitable[Any]]


@dataclass
class CompactionServices:
    """The session's parts that compaction reads or restores; supplied by the runtime."""

    file_state: FileStateCache
    session: Any = None  # append_record / append_message / path / folder
    invoked_skills: Callable[[], list[tuple[str, str, str]]] = list
    plan: Callable[[], tuple[str, str] | None] = lambda: None
    plan_reminder: Callable[[], str | None] = lambda: None
    excluded_paths: Callable[[], set[str]] = set
    background_tasks: Callable[[], list[str]] = list
    announcements: Callable[[], list[str]] = list
    run_hook: HookRun | None = None
    on_compacted: Callable[[], None] = lambda: None

    @property
    def transcript_path(self) -> Path | None:
        return getattr(self.session, "path", None)

    @property
    def folder(self) -> Path | None:
        return getattr(self.session, "folder", None)


@dataclass
class Snapshot:
    """The conversation just before a compaction, for /undo-compact."""

    messages: list[Message]
    replaced_count: int  # how many messages the compaction put in their place


@dataclass
class ContextManager:
    limits_for: Callable[[str], ContextLimits]
    window: WindowConfig
    services: CompactionServices
    emit: EventSink
    session_memory: SessionMemory | None = None
    config: MicrocompactConfig = field(default_factory=MicrocompactConfig)
    clock: Callable[[], float] = time.time
    counter: TokenCounter = field(default_factory=TokenCounter)
    failures: int = 0
    last_response_at: float | None = None
    growth: float = 2_000.0
    _growth_samples: int = 0
    history: list[Snapshot] = field(default_factory=list)
    _compacting: bool = False
    _counted_results: set[str] = field(default_factory=set)
    _overhead: tuple[int, int, float] = (0, 0, 0.0)
    _index: ResultIndex = field(
        default_factory=lambda: ResultIndex(estimate_message, estimate_block)
    )

    # -- ContextPolicy --------------------------------------------------------------------

    async def before_request(self, agent: ConversationHost) -> None:
        if self._compacting:
            return  # the summarizer's own call never compacts (no recursion)
        self._learn_growth(agent.messages)
        self.microcompact(agent)
        state = self.state(agent)
        if (
            state.used >= state.limits.auto_compact
            and state.auto_compact_enabled
            and not self.circuit_open
        ):
            await self._auto_compact(agent)
            state = self.state(agent)
        self.emit(ContextUpdate(state.to_json()))
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
        position = len(agent.messages) - 1
        self.counter.observe_response(
            agent.messages[:position],
            response.usage,
            message,
            self._overhead_estimate(agent),
            position=position,
        )
        self.last_response_at = self.clock()

    async def on_prompt_too_long(self, agent: ConversationHost, error: PromptTooLongError) -> bool:
        if self.window.compact_enabled:
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
        trimmed = drop_oldest_groups(agent.messages, error.gap)
        if trimmed is None:
            return False
        self._remember_before(agent, len(trimmed))
        agent.messages[:] = trimmed
        self.counter.invalidate()
        self._record_event({"type": "dropped_oldest", "kept": len(trimmed), "gap": error.gap})
        return True

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
        return self.counter.count(agent.messages, self._overhead_estimate(agent))

    def state(self, agent: ConversationHost) -> ContextState:
        used = self.count(agent)
        return context_state(
            used,
            self.limits(agent),
            auto_enabled=self.window.auto_enabled,
            compact_enabled=self.window.compact_enabled,
            failures=self.failures,
            circuit_open=self.circuit_open,
            source=self.counter.source,
        )

    def _overhead_estimate(self, agent: ConversationHost) -> float:
        key = (id(agent.system), id(agent.tools_api))
        if self._overhead[:2] != key:
            self._overhead = (*key, estimate_system(agent.system) + estimate_tools(agent.tools_api))
        return self._overhead[2]

    def _learn_growth(self, messages: list[Message]) -> None:
        """Clearable tokens added per request, averaged over the session: the g of the batching rule.

        A long-run mean rather than a quick moving average: a couple of small
        results must not make a big rewrite look cheap.
        """
        if not messages or not messages[-1].tool_results():
            return
        names = {u["id"]: u["name"] for u in messages[-2].tool_uses()} if len(messages) > 1 else {}
        added = 0.0
        for block in messages[-1].tool_results():
            if block["tool_use_id"] in self._counted_results:
                continue
            self._counted_results.add(block["tool_use_id"])
            if names.get(block["tool_use_id"]) in COMPACTABLE_TOOLS:
                added += estimate_block(block)
        self._growth_samples += 1
        self.growth += (added - self.growth) / self._growth_samples

    # -- microcompact ---------------------------------------------------------------------

    def microcompact(self, agent: ConversationHost) -> ClearPlan:
        state_used = self.count(agent)
        limits = self.limits(agent)
        auto_at = (
            limits.auto_compact
            if self.window.auto_enabled and self.window.compact_enabled
            else None
        )
        plan = plan_clearing(
            agent.messages,
            now=self.clock(),
            last_response_at=self.last_response_at,
            used_tokens=state_used,
            auto_threshold=auto_at,
            growth_per_request=self.growth,
            message_tokens=estimate_message,
            estimate_block=estimate_block,
            config=self.config,
            index=self._index,
        )
        if not plan.clear:
            return plan
        markers, saved = self._markers(agent.messages, plan)
        before = sum(
            estimate_message(agent.messages[i]) for i in {c.message_index for c in plan.clear}
        )
        agent.messages[:] = apply_clearing(agent.messages, markers)
        after = sum(
            estimate_message(agent.messages[i]) for i in {c.message_index for c in plan.clear}
        )
        self.counter.adjust(-round((before - after) * self.counter.calibration))
        freed = round(before - after)
        self.emit(Microcompacted(plan.reason, len(plan.clear), freed, saved))
        self._record_event(
            {
                "type": "microcompact",
                "reason": plan.reason,
                "cleared": len(plan.clear),
                "tokens_freed": freed,
            }
        )
        return plan

    def _markers(
        self, messages: list[Message], plan: ClearPlan
    ) -> tuple[dict[str, str], list[str]]:
        markers: dict[str, str] = {}
        saved: list[str] = []
        results = {
            b["tool_use_id"]: b
            for index in {c.message_index for c in plan.clear}
            for b in messages[index].tool_results()
        }
        for candidate in plan.clear:
            text = _result_text(results.get(candidate.tool_use_id, {}))
            lines = text.count("\n") + 1 if text else None
            if candidate.tool_name == "Read":
                unchanged = self._forget_read(candidate.tool_input.get("file_path"))
                markers[candidate.tool_use_id] = marker_for(
                    candidate, file_unchanged=unchanged, line_count=lines
                )
                continue
            path = None
            if candidate.tokens > self.config.save_over_tokens:
                path = self._save_output(candidate.tool_use_id, text)
                if path:
                    saved.append(path)
            markers[candidate.tool_use_id] = marker_for(
                candidate, saved_path=path, line_count=lines
            )
        return markers, saved

    def _forget_read(self, path: Any) -> bool:
        """The read's text leaves the context: a re-read must return it. True if the file is unchanged."""
        if not isinstance(path, str):
            return False
        cache = self.services.file_state
        state = cache.peek(path)
        if state is None:
            return False
        cache.set(path, replace(state, in_context=False))
        try:
            return Path(path).stat().st_mtime == state.mtime and not state.stale
        except OSError:
            return False

    def _save_output(self, tool_use_id: str, text: str) -> str | None:
        folder = self.services.folder
        if folder is None or not text:
            return None
        target = Path(folder) / "cleared" / f"{tool_use_id}.txt"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError:
            return None
        return str(target)

    # -- compaction -----------------------------------------------------------------------

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
            self._record_event(
                {"type": "compaction_failed", "trigger": "auto", "reason": str(error)}
            )
            if self.circuit_open:
                self.emit(
                    Notice(
                        f"Auto-compact failed {self.failures} times in a row and is off for this "
                        "session; run /compact yourself.",
                        "error",
                    )
                )

    async def _session_memory_compact(self, agent: ConversationHost) -> bool:
        """The slot for session-memory compaction (SPEC 3.6): notes instead of a model call."""
        assert self.session_memory is not None
        result = await self.session_memory.try_compact(agent.messages)
        if result is None:
            return False
        start = adjust_start_index(agent.messages, result.keep_from)
        kept = agent.messages[start:]
        tokens_before = self.count(agent)
        await self._replace(
            agent,
            result.summary,
            kept_before=[],
            kept_after=kept,
            trigger="auto",
            kind="session_memory",
            tokens_before=tokens_before,
            started=self.clock(),
            summary_result=None,
            instructions=None,
        )
        if self.count(agent) >= self.limits(agent).auto_compact:
            self.undo(agent)  # not enough: fall back to a full compaction
            return False
        return True

    async def compact(
        self,
        agent: ConversationHost,
        *,
        trigger: str = "manual",
        instructions: str | None = None,
        partial: PartialMode | None = None,
        keep_rounds: int | None = None,
    ) -> dict[str, Any]:
        """Summarize the conversation (or part of it) and put the summary in its place.

        ``partial="up_to"`` keeps the last ``keep_rounds`` API rounds verbatim and
        summarizes the rest; ``partial="from"`` keeps the first ``keep_rounds`` and
        summarizes the rest. Raises CompactionError, leaving the conversation as it was.
        """
        if not self.window.compact_enabled:
            raise CompactionError("compaction is disabled (DISABLE_COMPACT)")
        if self._compacting:
            raise CompactionError("a compaction is already running")
        messages = list(agent.messages)
        if not any(m.role == "assistant" for m in messages):
            raise CompactionError("there is nothing to compact yet")
        pivot = self._pivot(messages, partial, keep_rounds)
        started = self.clock()
        tokens_before = self.count(agent)
        detail = _detail(messages, partial, pivot)
        self.emit(CompactionStarted(trigger, tokens_before, detail))
        self._compacting = True
        try:
            await self._pre_compact_hook(trigger, instructions)
            result = await summarize(
                agent.client,
                model=agent.model,
                system=agent.system,
                tools=agent.tools_api,
                messages=messages,
                instructions=instructions,
                partial=partial,
                pivot=pivot,
                request_extra=getattr(getattr(agent, "config", None), "request_extra", None),
            )
        except CompactionError as error:
            self._record_event(
                {"type": "compaction_failed", "trigger": trigger, "reason": str(error)}
            )
            if trigger != "auto":
                self.emit(CompactionFailed(trigger, str(error), self.failures))
            raise
        finally:
            self._compacting = False
        agent.costs.add(result.model or agent.model, result.usage, result.duration_s)
        kept_before = messages[:pivot] if partial == "from" and pivot is not None else []
        kept_after = messages[pivot:] if partial == "up_to" and pivot is not None else []
        if messages != agent.messages[: len(messages)]:
            raise CompactionError("the conversation changed while it was being summarized")
        kept_after += agent.messages[len(messages) :]  # anything added meanwhile stays
        record = await self._replace(
            agent,
            result.summary,
            kept_before=kept_before,
            kept_after=kept_after,
            trigger=trigger,
            kind=f"partial_{partial}" if partial else "full",
            tokens_before=tokens_before,
            started=started,
            summary_result=result,
            instructions=instructions,
        )
        self.failures = 0
        return record

    def _pivot(
        self, messages: list[Message], partial: PartialMode | None, keep_rounds: int | None
    ) -> int | None:
        if partial is None:
            return None
        groups = group_by_api_round(messages)
        rounds = max(1, keep_rounds or 1)
        if len(groups) < 2:
            raise CompactionError("there are too few turns for a partial compaction")
        rounds = min(rounds, len(groups) - 1)
        if partial == "up_to":
            start = sum(len(g) for g in groups[: len(groups) - rounds])
        else:
            start = sum(len(g) for g in groups[:rounds])
        pivot = adjust_start_index(messages, start)
        if pivot <= 0 or pivot >= len(messages):
            raise CompactionError("no safe point to split the conversation there")
        return pivot

    async def _pre_compact_hook(self, trigger: str, instructions: str | None) -> None:
        if self.services.run_hook is None:
            return
        outcome = await self.services.run_hook(
            "PreCompact", trigger, {"trigger": trigger, "custom_instructions": instructions or ""}
        )
        for message in getattr(outcome, "messages", []):
            self.emit(Notice(message, "warning"))
        if getattr(outcome, "blocked", False):
            raise CompactionError(
                f"a PreCompact hook blocked it: {outcome.block_reason or 'no reason given'}"
            )

    async def _replace(
        self,
        agent: ConversationHost,
        summary: str,
        *,
        kept_before: list[Message],
        kept_after: list[Message],
        trigger: str,
        kind: str,
        tokens_before: int,
        started: float,
        summary_result: SummaryResult | None,
        instructions: str | None,
    ) -> dict[str, Any]:
        """Put the summary, the kept messages and the restored context in place of the conversation."""
        previous = list(agent.messages)
        partial = "from" if kind == "partial_from" else "up_to" if kind == "partial_up_to" else None
        summary_message = Message(
            role="user",
            content=[
                {
                    "type": "text",
                    "text": summary_message_text(
                        summary,
                        transcript_path=self.services.transcript_path,
                        latest_request=_latest_request(previous),
                        auto=trigger != "manual",
                        partial=partial,
                    ),
                }
            ],
            kind="summary",
        )
        restoration = await self._restore(kept_before + kept_after, self.limits(agent))
        attachment = restoration.message()
        new = [*kept_before, summary_message, *kept_after]
        if attachment is not None:
            new.append(attachment)
        self.history.append(Snapshot(previous, len(new)))
        agent.messages[:] = new
        self.counter.invalidate()
        self.services.on_compacted()
        tokens_after = self.count(agent)
        record = {
            "trigger": trigger,
            "kind": kind,
            "tokens_before": tokens_before,
            "tokens_after": tokens_after,
            "duration_s": round(self.clock() - started, 3),
            "messages_summarized": len(previous) - len(kept_before) - len(kept_after),
            "messages_kept": len(kept_before) + len(kept_after),
            "restored": restoration.summary(),
            "restored_tokens": restoration.tokens,
            "summary_tokens": round(estimate_message(summary_message)),
            "summary": summary,
            "instructions": instructions,
            "attempts": summary_result.attempts if summary_result else 0,
            "dropped_messages": summary_result.dropped_messages if summary_result else 0,
            "usage": summary_result.usage if summary_result else {},
            "replaced_count": len(new),
            "at": time.time(),
        }
        self._persist(record, new)
        await self._post_compact_hook(trigger, summary)
        self.emit(CompactionFinished(record))
        return record

    async def _restore(self, kept: list[Message], limits: ContextLimits) -> Restoration:
        from compaction.restore import (
            choose_files,
            read_file_now,
            restore_files,
            restore_skills,
            text_item,
            visible_read_paths,
        )
        from tools.file_state import FileState, normalize_path

        services = self.services
        snapshot = services.file_state.snapshot()
        services.file_state.clear()
        excluded = {normalize_path(p) for p in services.excluded_paths()}
        paths = choose_files(snapshot, visible=visible_read_paths(kept), excluded=excluded)
        # Budgets shrink with small windows, so what is restored can never refill the context.
        files_budget = min(FILES_BUDGET, limits.effective // 3)
        items = restore_files(
            paths, read_file_now, per_file=min(FILE_TOKENS, files_budget), budget=files_budget
        )
        for item in reversed(items):  # oldest first, so the newest ends most recent in the LRU
            self._remember_restored(item.label, item.cut, FileState, snapshot)
        restoration = Restoration(items)
        skills_budget = min(SKILLS_BUDGET, limits.effective // 8)
        restoration.items += restore_skills(
            services.invoked_skills(),
            per_skill=min(SKILL_TOKENS, skills_budget),
            budget=skills_budget,
        )
        if plan := services.plan():
            path, content = plan
            restoration.items.append(
                text_item("plan", path, f"The current plan, from {path}:\n{content}")
            )
        if reminder := services.plan_reminder():
            restoration.items.append(text_item("plan_mode", "plan mode", reminder))
        for announcement in services.announcements():
            restoration.items.append(text_item("announcement", "announcement", announcement))
        if tasks := services.background_tasks():
            text = "Background tasks still running:\n" + "\n".join(f"- {t}" for t in tasks)
            restoration.items.append(text_item("tasks", "background tasks", text))
        if services.run_hook is not None:
            outcome = await services.run_hook("SessionStart", "compact", {"source": "compact"})
            context = getattr(outcome, "additional_context", [])
            if context:
                restoration.items.append(text_item("hook", "SessionStart", "\n".join(context)))
        return restoration

    def _remember_restored(
        self, path: str, cut: bool, state_type: Any, snapshot: dict[str, Any]
    ) -> None:
        try:
            stat = Path(path).stat()
        except OSError:
            return
        from compaction.restore import read_file_now

        text = read_file_now(path)
        if text is None:
            return
        old = snapshot.get(path)
        self.services.file_state.set(
            path,
            state_type(
                content=text,
                mtime=stat.st_mtime,
                read_at=old.read_at if old else time.time(),
                is_partial_view=cut,
                in_context=True,
            ),
        )

    async def _post_compact_hook(self, trigger: str, summary: str) -> None:
        if self.services.run_hook is None:
            return
        outcome = await self.services.run_hook(
            "PostCompact", trigger, {"trigger": trigger, "compact_summary": summary}
        )
        for message in getattr(outcome, "messages", []):
            self.emit(Notice(message, "warning"))

    # -- undo -----------------------------------------------------------------------------

    def undo(self, agent: ConversationHost) -> bool:
        """Bring back the conversation from before the last compaction; later turns stay after it."""
        if not self.history:
            return False
        snapshot = self.history.pop()
        later = agent.messages[snapshot.replaced_count :]
        agent.messages[:] = [*snapshot.messages, *later]
        self.counter.invalidate()
        session = self.services.session
        if session is not None:
            session.append_record({"type": "compact_undo", "at": time.time()})
            for message in later:
                session.append_message(message)
        return True

    def restore_history(
        self, segments: list[list[Message]], boundaries: list[dict[str, Any]]
    ) -> None:
        """Undo snapshots for a resumed session, from the transcript's segments and boundaries."""
        self.history = [
            Snapshot(list(segment), int(boundary.get("replaced_count", 0)))
            for segment, boundary in zip(segments, boundaries, strict=False)
            if boundary.get("replaced_count")
        ]

    def _remember_before(self, agent: ConversationHost, replaced_count: int) -> None:
        self.history.append(Snapshot(list(agent.messages), replaced_count))

    # -- transcript -----------------------------------------------------------------------

    def _persist(self, record: dict[str, Any], messages: list[Message]) -> None:
        session = self.services.session
        if session is None:
            return
        session.append_record({"type": "compact_boundary", **record})
        for message in messages:
            session.append_message(message)

    def _record_event(self, event: dict[str, Any]) -> None:
        session = self.services.session
        if session is not None:
            session.append_record({"type": "event", "event": {**event, "at": time.time()}})


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
    return ""


def _latest_request(messages: list[Message]) -> str | None:
    """The user's latest typed request; after an earlier compaction, the one its summary carried."""
    request = latest_user_request(messages)
    if request:
        return request
    for message in reversed(messages):
        if message.kind == "summary":
            text = message.text()
            start, end = text.find("<user-request>\n"), text.find("\n</user-request>")
            if start >= 0 and end > start:
                return text[start + len("<user-request>\n") : end]
    return None


def _detail(messages: list[Message], partial: PartialMode | None, pivot: int | None) -> str:
    if partial == "up_to" and pivot is not None:
        return f"summarizing {pivot} older messages, keeping {len(messages) - pivot}"
    if partial == "from" and pivot is not None:
        return f"summarizing {len(messages) - pivot} recent messages, keeping the first {pivot}"
    return f"summarizing {len(messages)} messages"
