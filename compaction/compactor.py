"""Carrying out a compaction: hooks, the summary call, the new conversation, restoration, the record.

After a compaction the conversation is: the kept older messages (partial
"from"), the summary message (naming the transcript and carrying every
message the user typed, verbatim, within a budget: ``user_messages``), the
kept newer messages (partial "up_to", session memory), and one attachment
message with what was restored. The conversation's owner
(``agent.core.conversation``) puts it in place and records a
``compact_boundary`` followed by those messages; the previous conversation and
file-state cache are kept as a snapshot so /undo-compact can bring them back.
The cache follows the new conversation (``read_state``): entries whose reads
are kept stay as they were, restored files are read anew, and the files whose
reads were summarized away are marked so, and named once in the attachment.

A compaction is worked out first (``prepare``: the summary message, the files
re-read, nothing changed yet) and then committed (``commit``), so an interrupt
or a result that is not good enough leaves the session as it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from agent.core.compaction_record import CompactionKind, CompactionRecord, CompactionTrigger
from agent.core.conversation import Compacted, Undone
from agent.core.events import (
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    EventSink,
    Notice,
)
from agent.core.messages import Message
from agent.core.thinking import drop_earlier_thinking
from compaction.full import SUMMARY_MAX_OUTPUT, CompactionError, SummaryResult, summarize
from compaction.grouping import adjust_start_index, group_by_api_round
from compaction.read_state import KeptReads, kept_reads, latest_reads, reread_notice
from compaction.restore import (
    FILE_TOKENS,
    FILES_BUDGET,
    SKILL_TOKENS,
    SKILLS_BUDGET,
    Restoration,
    read_file_now,
    restore_files,
    restore_skills,
    text_item,
    visible_skill_names,
)
from compaction.restore_jobs import background_items
from compaction.services import CompactionServices, ConversationHost
from compaction.summary import PartialMode, latest_request, summary_message_text
from compaction.thresholds import ContextLimits
from compaction.tokens import PADDING, estimate_message
from compaction.undo import Snapshot, UndoHistory, snapshots_from_transcript
from compaction.user_messages import for_summary
from tools.file_state import FileState

# Claude Code's PreCompact/PostCompact hooks know only "manual" and "auto".
HOOK_TRIGGERS: dict[CompactionTrigger, CompactionTrigger] = {"reactive": "auto"}
# The kind of a partial compaction, and the part a kind keeps (session memory keeps the
# newer messages, as a partial "up_to" compaction does).
PARTIAL_KINDS: dict[PartialMode, CompactionKind] = {
    "from": "partial_from",
    "up_to": "partial_up_to",
}
KEPT_PARTS: dict[CompactionKind, PartialMode] = {
    "partial_from": "from",
    "partial_up_to": "up_to",
    "session_memory": "up_to",
}


@dataclass
class Replacement:
    """A compaction worked out but not yet in place: committing it is a separate step."""

    previous: list[Message]
    kept_before: list[Message]
    summary: str
    summary_message: Message
    kept_after: list[Message]
    restoration: Restoration
    file_state: dict[str, FileState]  # the cache as it was, for /undo-compact
    trigger: CompactionTrigger
    kind: CompactionKind
    reads: KeptReads = field(default_factory=KeptReads)  # entries kept, files summarized away

    def messages(self) -> list[Message]:
        """The new conversation. Every prompt byte after the system prompt is written again,
        so the kept messages' earlier thinking goes at no extra cost (the continued tool
        loop's stays: agent/core/thinking.py)."""
        new = [*self.kept_before, self.summary_message, *self.kept_after]
        if (attachment := self.restoration.message()) is not None:
            new.append(attachment)
        return drop_earlier_thinking(new)


@dataclass
class Compactor:
    services: CompactionServices
    emit: EventSink
    count: Callable[[ConversationHost], int]  # the context size, as the manager counts it
    # What the context would count with these messages in place (as ``count`` will then).
    estimate: Callable[[ConversationHost, list[Message]], int]
    replaced: Callable[[], None]  # tells the manager the conversation was swapped
    clock: Callable[[], float] = time.time
    history: UndoHistory = field(default_factory=UndoHistory)
    running: bool = False

    def __post_init__(self) -> None:
        self.history.load = self._snapshots_in_transcript

    async def compact(
        self,
        agent: ConversationHost,
        limits: ContextLimits,
        *,
        trigger: CompactionTrigger,
        instructions: str | None = None,
        partial: PartialMode | None = None,
        keep_rounds: int | None = None,
    ) -> CompactionRecord:
        if self.running:
            raise CompactionError("a compaction is already running")
        messages = list(agent.conversation.messages)
        if not any(m.role == "assistant" for m in messages):
            raise CompactionError("there is nothing to compact yet")
        pivot = choose_pivot(messages, partial, keep_rounds)
        started = self.clock()
        tokens_before = self.count(agent)
        self.emit(CompactionStarted(trigger, tokens_before, _detail(messages, partial, pivot)))
        result = await self._summary(agent, messages, limits, trigger, instructions, partial, pivot)
        now = agent.conversation.messages
        if messages != list(now[: len(messages)]):
            raise CompactionError("the conversation changed while it was being summarized")
        if result.truncated:
            self.emit(
                Notice(
                    "Compaction: the summary was cut at the output limit; its last sections may "
                    "be missing",
                    "warning",
                )
            )
        kept_before = messages[:pivot] if partial == "from" and pivot is not None else []
        kept_after = messages[pivot:] if partial == "up_to" and pivot is not None else []
        kept_after += now[len(messages) :]  # anything added meanwhile stays
        replacement = self.prepare(
            agent,
            limits,
            result.summary,
            kept_before=kept_before,
            kept_after=kept_after,
            trigger=trigger,
            kind=PARTIAL_KINDS[partial] if partial else "full",
        )
        return await self.commit(
            agent,
            replacement,
            tokens_before=tokens_before,
            started=started,
            summary_result=result,
            instructions=instructions,
        )

    async def _summary(
        self,
        agent: ConversationHost,
        messages: list[Message],
        limits: ContextLimits,
        trigger: CompactionTrigger,
        instructions: str | None,
        partial: PartialMode | None,
        pivot: int | None,
    ) -> SummaryResult:
        """PreCompact, then the summary call on a fork of the conversation; its cost is counted."""
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
                max_output=min(SUMMARY_MAX_OUTPUT, limits.max_output),
                request_extra=agent.request_extra,
                output_limit=limits.max_output,
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
            agent.costs.add(
                result.model or agent.model, result.usage, result.duration_s, purpose="summary"
            )
        return result

    def prepare(
        self,
        agent: ConversationHost,
        limits: ContextLimits,
        summary: str,
        *,
        kept_before: list[Message],
        kept_after: list[Message],
        trigger: CompactionTrigger,
        kind: CompactionKind,
        restore_room: Callable[[list[Message]], int] | None = None,
    ) -> Replacement:
        """The conversation that would replace this one, worked out without changing anything.

        ``restore_room``: how many tokens the new conversation without restored
        items leaves under its target; the files restored then take at most
        that (session-memory compaction, whose kept messages take room).
        """
        previous = list(agent.conversation.messages)
        latest = latest_request(previous)
        typed = for_summary(previous, [*kept_before, *kept_after], latest, limits)
        partial = KEPT_PARTS.get(kind)
        summary_message = Message(
            role="user",
            content=[
                {
                    "type": "text",
                    "text": summary_message_text(
                        summary,
                        transcript_path=self.services.transcript_path,
                        latest_request=latest,
                        auto=trigger != "manual",
                        partial=partial,
                        user_messages=typed.render(self.services.transcript_path),
                    ),
                }
            ],
            kind="summary",
        )
        file_state = self.services.file_state.snapshot()
        cap = None
        if restore_room is not None:
            # The room is in counted tokens; a restored item's tokens are unpadded characters / 4.
            kept = drop_earlier_thinking([*kept_before, summary_message, *kept_after])
            cap = max(0, int(restore_room(kept) / PADDING))
        restoration = self.restoration(file_state, kept_before + kept_after, limits, cap)
        reads = kept_reads(
            previous, kept_before + kept_after, file_state, self.services.resolve_path
        )
        restored = {item.label for item in restoration.of_kind("file")}
        reads.dropped = [key for key in reads.dropped if key not in restored]
        excluded = {self.services.resolve_path(path) for path in self.services.excluded_paths()}
        if notice := reread_notice([key for key in reads.dropped if key not in excluded]):
            restoration.items.append(text_item("reads", "files to read again", notice))
        return Replacement(
            previous,
            kept_before,
            summary,
            summary_message,
            kept_after,
            restoration,
            file_state,
            trigger,
            kind,
            reads,
        )

    async def commit(
        self,
        agent: ConversationHost,
        replacement: Replacement,
        *,
        tokens_before: int,
        started: float,
        summary_result: SummaryResult | None = None,
        instructions: str | None = None,
    ) -> CompactionRecord:
        """Hand a prepared replacement to the conversation, which records it; run PostCompact.

        Nothing changes before the SessionStart(compact) hook has answered, so an
        interrupt there leaves the conversation and the file-state cache as they were.
        """
        await self._session_start_hook(replacement.restoration)
        new = replacement.messages()
        previous, kept = replacement.previous, len(replacement.kept_before + replacement.kept_after)
        record = CompactionRecord(
            trigger=replacement.trigger,
            kind=replacement.kind,
            tokens_before=tokens_before,
            tokens_after=self.estimate(agent, new),
            duration_s=round(self.clock() - started, 3),
            messages_summarized=len(previous) - kept,
            messages_kept=kept,
            restored=replacement.restoration.summary(),
            restored_tokens=replacement.restoration.tokens,
            summary_tokens=round(estimate_message(replacement.summary_message)),
            summary=replacement.summary,
            instructions=instructions,
            attempts=summary_result.attempts if summary_result else 0,
            dropped_messages=summary_result.dropped_messages if summary_result else 0,
            truncated=summary_result.truncated if summary_result else False,
            usage=summary_result.usage if summary_result else {},
            replaced_count=len(new),
            last_uuid=new[-1].uuid,
            at=time.time(),
        )
        self.history.push(Snapshot(previous, new[-1].uuid, len(new), replacement.file_state))
        # The re-read files are recorded before the boundary, as they always were.
        self._refill_file_state(replacement)
        agent.conversation.replace(Compacted(new, record))
        self.replaced()
        self.services.on_compacted()
        await self._post_compact_hook(replacement.trigger, replacement.summary)
        self.emit(CompactionFinished(record))
        return record

    def restoration(
        self,
        snapshot: dict[str, FileState],
        kept: list[Message],
        limits: ContextLimits,
        files_cap: int | None = None,
    ) -> Restoration:
        """Recent files re-read now, invoked skills, the plan, announcements, background work."""
        services = self.services
        paths = services.files_to_restore(kept, snapshot)
        # Budgets shrink with small windows, so what is restored can never refill the context.
        files_budget = min(FILES_BUDGET, limits.effective // 3)
        if files_cap is not None:
            files_budget = min(files_budget, files_cap)
        restoration = Restoration(
            restore_files(
                paths, read_file_now, per_file=min(FILE_TOKENS, files_budget), budget=files_budget
            )
        )
        skills_budget = min(SKILLS_BUDGET, limits.effective // 8)
        shown = visible_skill_names(kept)
        restoration.items += restore_skills(
            [skill for skill in services.invoked_skills() if skill[0].casefold() not in shown],
            per_skill=min(SKILL_TOKENS, skills_budget),
            budget=skills_budget,
        )
        if plan := services.plan():
            path, content = plan
            restoration.items.append(
                text_item("plan", path, f"The current plan, from {path}:\n{content}")
            )
        if tasks := services.task_list():
            restoration.items.append(
                text_item(
                    "task_list", "task list", f"Your task list (TaskList shows it again):\n{tasks}"
                )
            )
        if reminder := services.plan_reminder():
            restoration.items.append(text_item("plan_mode", "plan mode", reminder))
        for announcement in services.announcements():
            restoration.items.append(text_item("announcement", "instructions", announcement))
        restoration.items += background_items(services, kept)
        return restoration

    async def _session_start_hook(self, restoration: Restoration) -> None:
        if self.services.run_hook is None:
            return
        outcome = await self.services.run_hook("SessionStart", "compact", {"source": "compact"})
        if context := getattr(outcome, "additional_context", []):
            restoration.items.append(text_item("hook", "SessionStart", "\n".join(context)))

    def _refill_file_state(self, replacement: Replacement) -> None:
        """The files whose reads the new conversation holds (kept or re-read) stay editable;
        the others need a new Read, and a refused Edit says why."""
        restoration, snapshot = replacement.restoration, replacement.file_state
        cache = self.services.file_state
        summarized_before, now = cache.summarized(), cache.snapshot()
        cache.clear()
        # In their LRU order, as they are now (a file watcher may have marked one stale since).
        for key, kept in replacement.reads.kept.items():
            cache.set(key, now.get(key) or replace(kept))
        # Oldest first, so the newest ends most recent in the LRU.
        for item in reversed(restoration.of_kind("file")):
            if item.content is None or item.mtime is None:
                continue
            old = snapshot.get(item.label)
            state = FileState(
                content=item.content,
                mtime=item.mtime,
                read_at=old.read_at if old else time.time(),
                is_partial_view=item.cut,
                in_context=True,
            )
            cache.set(item.label, state)
        dropped = {key: snapshot[key] for key in reversed(replacement.reads.dropped)}
        cache.mark_summarized({**summarized_before, **dropped})

    def undo(self, agent: ConversationHost) -> bool:
        """Bring back the conversation from before the last compaction; later turns stay after it.

        Refuses (False) when what the compaction put in place can no longer be
        found, e.g. after a prompt-too-long retry dropped the oldest rounds.
        """
        snapshot = self.history.last()
        if snapshot is None:
            return False
        end = snapshot.end_in(list(agent.conversation.messages))
        if end is None:
            return False
        self.history.pop()
        later = list(agent.conversation.messages[end:])
        # Reads taken back from the snapshot are recorded before the undo record, as ever.
        self.services.file_state.merge(snapshot.file_state)
        agent.conversation.undo(Undone(snapshot.messages, later))
        # A snapshot from the transcript has no cache: the reads back in the conversation
        # (summarized away by this compaction, e.g. before a resume) come back from their marks.
        self.services.file_state.bring_back(
            latest_reads(agent.conversation.messages, self.services.resolve_path)
        )
        self.replaced()
        return True

    def restore_history(
        self,
        segments: list[list[Message]],
        boundaries: list[dict[str, Any]],
        live: list[Message] | None = None,
        first_unread: bool = False,
    ) -> None:
        """Undo snapshots from a loaded transcript; ``first_unread``: its first segment was not
        read (a load from the end), so that compaction and any before it are read back from
        the transcript when undo reaches them."""
        if first_unread and segments:
            snapshots = snapshots_from_transcript(segments[1:], boundaries[1:], live)
            self.history.replace(snapshots, unread=1)
            return
        self.history.replace(snapshots_from_transcript(segments, boundaries, live))

    def _snapshots_in_transcript(self) -> list[Snapshot]:
        """The undo snapshots the transcript has in effect now (older ones memory let go)."""
        from agent.sessions.session import SessionError, load_session

        path = self.services.transcript_path
        if path is None:
            return []
        try:
            loaded = load_session(path)
        except SessionError:
            return []
        return snapshots_from_transcript(loaded.segments, loaded.boundaries, loaded.messages)

    async def _pre_compact_hook(self, trigger: CompactionTrigger, instructions: str | None) -> None:
        if self.services.run_hook is None:
            return
        trigger = HOOK_TRIGGERS.get(trigger, trigger)
        outcome = await self.services.run_hook(
            "PreCompact", trigger, {"trigger": trigger, "custom_instructions": instructions or ""}
        )
        for message in getattr(outcome, "messages", []):
            self.emit(Notice(message, "warning"))
        if getattr(outcome, "blocked", False):
            raise CompactionError(
                f"a PreCompact hook blocked it: {outcome.block_reason or 'no reason given'}"
            )

    async def _post_compact_hook(self, trigger: CompactionTrigger, summary: str) -> None:
        if self.services.run_hook is None:
            return
        trigger = HOOK_TRIGGERS.get(trigger, trigger)
        outcome = await self.services.run_hook(
            "PostCompact", trigger, {"trigger": trigger, "compact_summary": summary}
        )
        for message in getattr(outcome, "messages", []):
            self.emit(Notice(message, "warning"))


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
    # The groups before the pivot: summarized in "up_to" mode, kept verbatim in "from" mode.
    head = groups[: len(groups) - rounds] if partial == "up_to" else groups[:rounds]
    pivot = adjust_start_index(messages, sum(len(g) for g in head))
    if pivot <= 0 or pivot >= len(messages):
        raise CompactionError("no safe point to split the conversation there")
    return pivot


def _detail(messages: list[Message], partial: PartialMode | None, pivot: int | None) -> str:
    if partial == "up_to" and pivot is not None:
        return f"summarizing {pivot} older messages, keeping {len(messages) - pivot}"
    if partial == "from" and pivot is not None:
        return f"summarizing {len(messages) - pivot} recent messages, keeping the first {pivot}"
    return f"summarizing {len(messages)} messages"
