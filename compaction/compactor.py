"""Carrying out a compaction: hooks, the summary call, the new conversation, restoration, the record.

After a compaction the conversation is: the kept older messages (partial
"from"), the summary message (naming the transcript and carrying the user's
latest request verbatim), the kept newer messages (partial "up_to"), and one
attachment message with what was restored. The transcript gets a
``compact_boundary`` record followed by those messages, and the previous
conversation is kept as a snapshot so /undo-compact can bring it back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.events import CompactionFailed, CompactionFinished, CompactionStarted, EventSink, Notice
from agent.messages import Message
from compaction.full import CompactionError, SummaryResult, summarize
from compaction.grouping import adjust_start_index, group_by_api_round
from compaction.restore import (
    FILE_TOKENS,
    FILES_BUDGET,
    SKILL_TOKENS,
    SKILLS_BUDGET,
    Restoration,
    choose_files,
    read_file_now,
    restore_files,
    restore_skills,
    text_item,
    visible_read_paths,
)
from compaction.services import CompactionServices, ConversationHost
from compaction.summary import PartialMode, latest_user_request, summary_message_text
from compaction.thresholds import ContextLimits
from compaction.tokens import estimate_message
from tools.file_state import FileState, normalize_path


@dataclass
class Snapshot:
    """The conversation just before a compaction, for /undo-compact."""

    messages: list[Message]
    replaced_count: int  # how many messages the compaction put in their place


@dataclass
class Compactor:
    services: CompactionServices
    emit: EventSink
    count: Callable[[ConversationHost], int]  # the context size, as the manager counts it
    replaced: Callable[[], None]  # tells the manager the conversation was swapped
    clock: Callable[[], float] = time.time
    history: list[Snapshot] = field(default_factory=list)
    running: bool = False

    async def compact(
        self,
        agent: ConversationHost,
        limits: ContextLimits,
        *,
        trigger: str,
        instructions: str | None = None,
        partial: PartialMode | None = None,
        keep_rounds: int | None = None,
    ) -> dict[str, Any]:
        if self.running:
            raise CompactionError("a compaction is already running")
        messages = list(agent.messages)
        if not any(m.role == "assistant" for m in messages):
            raise CompactionError("there is nothing to compact yet")
        pivot = choose_pivot(messages, partial, keep_rounds)
        started = self.clock()
        tokens_before = self.count(agent)
        self.emit(CompactionStarted(trigger, tokens_before, _detail(messages, partial, pivot)))
        self.running = True
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
            self.services.record_event(
                {"type": "compaction_failed", "trigger": trigger, "reason": str(error)}
            )
            if trigger != "auto":
                self.emit(CompactionFailed(trigger, str(error)))
            raise
        finally:
            self.running = False
        if agent.costs is not None:
            agent.costs.add(result.model or agent.model, result.usage, result.duration_s)
        if messages != agent.messages[: len(messages)]:
            raise CompactionError("the conversation changed while it was being summarized")
        kept_before = messages[:pivot] if partial == "from" and pivot is not None else []
        kept_after = messages[pivot:] if partial == "up_to" and pivot is not None else []
        kept_after += agent.messages[len(messages) :]  # anything added meanwhile stays
        return await self.replace(
            agent,
            limits,
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

    async def replace(
        self,
        agent: ConversationHost,
        limits: ContextLimits,
        summary: str,
        *,
        kept_before: list[Message],
        kept_after: list[Message],
        trigger: str,
        kind: str,
        tokens_before: int,
        started: float,
        summary_result: SummaryResult | None = None,
        instructions: str | None = None,
    ) -> dict[str, Any]:
        """Put the summary, the kept messages and the restored context in place of the conversation."""
        previous = list(agent.messages)
        partial = {"partial_from": "from", "partial_up_to": "up_to"}.get(kind)
        summary_message = Message(
            role="user",
            content=[
                {
                    "type": "text",
                    "text": summary_message_text(
                        summary,
                        transcript_path=self.services.transcript_path,
                        latest_request=latest_request(previous),
                        auto=trigger != "manual",
                        partial=partial,  # type: ignore[arg-type]
                    ),
                }
            ],
            kind="summary",
        )
        restoration = await self.restore(kept_before + kept_after, limits)
        new = [*kept_before, summary_message, *kept_after]
        if (attachment := restoration.message()) is not None:
            new.append(attachment)
        self.history.append(Snapshot(previous, len(new)))
        agent.messages[:] = new
        self.replaced()
        self.services.on_compacted()
        record = {
            "trigger": trigger,
            "kind": kind,
            "tokens_before": tokens_before,
            "tokens_after": self.count(agent),
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

    async def restore(self, kept: list[Message], limits: ContextLimits) -> Restoration:
        """Re-read recent files and gather skills, plan, announcements, tasks and hook context."""
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
            self._remember_restored(item.label, item.cut, snapshot.get(item.label))
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
            restoration.items.append(text_item("announcement", "instructions", announcement))
        if tasks := services.background_tasks():
            text = "Background tasks still running:\n" + "\n".join(f"- {t}" for t in tasks)
            restoration.items.append(text_item("tasks", "background tasks", text))
        if services.run_hook is not None:
            outcome = await services.run_hook("SessionStart", "compact", {"source": "compact"})
            if context := getattr(outcome, "additional_context", []):
                restoration.items.append(text_item("hook", "SessionStart", "\n".join(context)))
        return restoration

    def _remember_restored(self, path: str, cut: bool, old: FileState | None) -> None:
        """The re-read file is in context again: Edit may use it without another Read."""
        text = read_file_now(path)
        try:
            mtime = Path(path).stat().st_mtime
        except OSError:
            return
        if text is None:
            return
        read_at = old.read_at if old else time.time()
        state = FileState(
            content=text, mtime=mtime, read_at=read_at, is_partial_view=cut, in_context=True
        )
        self.services.file_state.set(path, state)

    def undo(self, agent: ConversationHost) -> bool:
        """Bring back the conversation from before the last compaction; later turns stay after it."""
        if not self.history:
            return False
        snapshot = self.history.pop()
        later = agent.messages[snapshot.replaced_count :]
        agent.messages[:] = [*snapshot.messages, *later]
        self.replaced()
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

    async def _post_compact_hook(self, trigger: str, summary: str) -> None:
        if self.services.run_hook is None:
            return
        outcome = await self.services.run_hook(
            "PostCompact", trigger, {"trigger": trigger, "compact_summary": summary}
        )
        for message in getattr(outcome, "messages", []):
            self.emit(Notice(message, "warning"))

    def _persist(self, record: dict[str, Any], messages: list[Message]) -> None:
        session = self.services.session
        if session is None:
            return
        session.append_record({"type": "compact_boundary", **record})
        for message in messages:
            session.append_message(message)


def choose_pivot(
    messages: list[Message], partial: PartialMode | None, keep_rounds: int | None
) -> int | None:
    """Where a partial compaction splits the conversation, at a safe point; None for a full one."""
    if partial is None:
        return None
    groups = group_by_api_round(messages)
    if len(groups) < 2:
        raise CompactionError("there are too few turns for a partial compaction")
    rounds = min(max(1, keep_rounds or 1), len(groups) - 1)
    kept_groups = groups[: len(groups) - rounds] if partial == "up_to" else groups[:rounds]
    pivot = adjust_start_index(messages, sum(len(g) for g in kept_groups))
    if pivot <= 0 or pivot >= len(messages):
        raise CompactionError("no safe point to split the conversation there")
    return pivot


def latest_request(messages: list[Message]) -> str | None:
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
