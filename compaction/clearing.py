"""Carrying out microcompact: markers, saved outputs, the file-state cache, the growth estimate.

``microcompact.py`` decides what to clear (pure); this does the side effects
around that decision: it writes large outputs to the session folder so the
marker can name them, marks cleared reads as no longer in context (so a
re-read returns the text, not "unchanged"), and learns how many clearable
tokens each request adds, the g of the batching rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent.core.messages import Message
from agent.core.thinking import drop_thinking, is_thinking
from compaction.fold import Folded, fold_rounds, remap
from compaction.inputs import apply_input_clearing, clearable_input_tokens
from compaction.markers import marker_for
from compaction.microcompact import (
    COMPACTABLE_TOOLS,
    ClearPlan,
    MicrocompactConfig,
    anchors_after,
    apply_clearing,
    find_candidates,
    plan_clearing,
)
from compaction.result_index import ResultIndex
from compaction.services import CompactionServices
from compaction.session_memory import compaction_floor
from compaction.tokens import estimate_block, estimate_message
from tools.atomic_file import atomic_write
from tools.surrogates import escape_text

INITIAL_GROWTH = 2_000.0  # clearable tokens per request, assumed until the session shows its own


@dataclass
class ClearingOutcome:
    plan: ClearPlan
    messages: list[Message]
    tokens_freed: float = 0.0
    saved_paths: list[str] = field(default_factory=list)


@dataclass
class Clearing:
    services: CompactionServices
    config: MicrocompactConfig = field(default_factory=MicrocompactConfig)
    growth: float = INITIAL_GROWTH
    request_growth: float = INITIAL_GROWTH  # all tokens a round adds, clearable or not
    _samples: int = 0
    _counted: set[str] = field(default_factory=set)
    _index: ResultIndex = field(
        default_factory=lambda: ResultIndex(estimate_message, estimate_block)
    )

    def learn_growth(self, messages: Sequence[Message]) -> None:
        """Clearable tokens added per request, averaged over the session.

        A long-run mean rather than a quick moving average: a couple of small
        results must not make a big rewrite look cheap.
        """
        if len(messages) < 2 or not messages[-1].tool_results():
            return
        uses = messages[-2].tool_uses()
        names = {u["id"]: u["name"] for u in uses}
        added = 0.0
        if self.config.clear_inputs:
            added += sum(
                clearable_input_tokens(u["name"], u.get("input") or {})
                for u in uses
                if u["id"] not in self._counted
            )
        if any(b["tool_use_id"] not in self._counted for b in messages[-1].tool_results()):
            # New thinking is after every anchor: the next clear drops it (microcompact.py).
            added += sum(estimate_block(b) for b in messages[-2].content if is_thinking(b))
        for block in messages[-1].tool_results():
            if block["tool_use_id"] in self._counted:
                continue
            self._counted.add(block["tool_use_id"])
            if names.get(block["tool_use_id"]) in COMPACTABLE_TOOLS:
                added += estimate_block(block)
        self._samples += 1
        self.growth += (added - self.growth) / self._samples
        total = estimate_message(messages[-2]) + estimate_message(messages[-1])
        self.request_growth += (total - self.request_growth) / self._samples

    def clearable_tokens(self, messages: list[Message], window: int | None) -> float:
        """What clearing everything it may would free now (protection respected)."""
        candidates = find_candidates(messages, self.config, estimate_block, self._index, window)
        return sum(c.tokens for c in candidates)

    def plan(
        self,
        messages: list[Message],
        *,
        now: float,
        last_response_at: float | None,
        used_tokens: float,
        auto_threshold: float | None,
        window: int | None = None,
        anchors: tuple[int, ...] = (),
    ) -> ClearPlan:
        """This request's clearing, decided (microcompact.plan_clearing) but not carried out."""
        return plan_clearing(
            messages,
            now=now,
            last_response_at=last_response_at,
            used_tokens=used_tokens,
            auto_threshold=auto_threshold,
            growth_per_request=self.growth,
            message_tokens=estimate_message,
            estimate_block=estimate_block,
            config=self.config,
            index=self._index,
            window=window,
            anchors=anchors,
        )

    def apply(
        self, messages: list[Message], plan: ClearPlan, keep: frozenset[str] = frozenset()
    ) -> ClearingOutcome:
        """Carry out ``plan`` (made on ``messages``): markers, saved outputs, folded rounds
        (never one holding a message whose uuid is in ``keep``), the event."""
        if not plan.changes:
            return ClearingOutcome(plan, messages)
        markers, saved = self._markers(messages, plan)
        if len(markers) < len(plan.clear):  # outputs that could not be saved stay as they are
            plan = replace(plan, clear=[c for c in plan.clear if c.tool_use_id in markers])
            plan.anchors = anchors_after(messages, self._index, self.config, plan)
            if not plan.changes:
                return ClearingOutcome(plan, messages)
        touched = {c.message_index for c in plan.clear} | {c.message_index for c in plan.inputs}
        touched |= set(plan.thinking)
        cleared = apply_clearing(messages, markers)
        cleared = apply_input_clearing(cleared, {c.tool_use_id for c in plan.inputs})
        cleared = drop_thinking(cleared, plan.thinking)
        freed = sum(estimate_message(messages[i]) - estimate_message(cleared[i]) for i in touched)
        folded = self._fold(cleared, plan, keep)
        if folded.rounds:
            cleared, freed = folded.messages, freed + folded.tokens
            plan.anchors = remap(plan.anchors, folded.moved)
        self.services.record_event(
            {
                "type": "microcompact",
                "reason": plan.reason,
                "cleared": len(plan.clear),
                "inputs_cleared": len(plan.inputs),
                "thinking_dropped": len(plan.thinking),
                "calls_folded": folded.rounds,
                "tokens_freed": round(freed),
            }
        )
        return ClearingOutcome(plan, cleared, freed, saved)

    def _fold(self, messages: list[Message], plan: ClearPlan, keep: frozenset[str]) -> Folded:
        """Fold the old rounds this clear leaves only markers of (fold.py): in the part of the
        prompt it rewrites anyway, after the last compaction's messages, up to the newest
        result it clears."""
        if not self.config.fold_rounds or not plan.clear:
            return Folded(messages, {})
        return fold_rounds(
            messages,
            max(plan.rewrite_from, compaction_floor(messages)),
            max(c.message_index for c in plan.clear),
            estimate_message=estimate_message,
            estimate_block=estimate_block,
            min_tokens=self.config.min_result_tokens,
            base=self.services.resolve_path("."),
            keep=keep,
        )

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
            text = result_text(results.get(candidate.tool_use_id, {}))
            lines = text.count("\n") + 1 if text else None
            if candidate.tool_name == "Read":
                unchanged = self.forget_read(candidate.tool_input.get("file_path"))
                markers[candidate.tool_use_id] = marker_for(
                    candidate, file_unchanged=unchanged, line_count=lines
                )
                continue
            path = None
            if candidate.tokens > self.config.save_over_tokens:
                try:
                    path = self._save_output(candidate.tool_use_id, text)
                except OSError:
                    continue  # kept: a marker must not point at a file that was not written
                if path:
                    saved.append(path)
            markers[candidate.tool_use_id] = marker_for(
                candidate, saved_path=escape_text(path) if path else None, line_count=lines
            )
        return markers, saved

    def forget_read(self, path: Any) -> bool:
        """The read's text leaves the context, so a re-read must return it. True if the file is unchanged."""
        if not isinstance(path, str):
            return False
        key = self.services.resolve_path(path)
        # In place: clearing is not a read, so the LRU order stays and nothing is recorded.
        state = self.services.file_state.update(key, in_context=False)
        if state is None:
            return False
        try:
            return Path(key).stat().st_mtime == state.mtime and not state.stale
        except OSError:
            return False

    def _save_output(self, tool_use_id: str, text: str) -> str | None:
        """The path the output was saved at; None without a session folder or text.

        Written whole or not at all (OSError): a full disk leaves no empty or partial file.
        """
        folder = self.services.folder
        if folder is None or not text:
            return None
        target = Path(folder) / "cleared" / f"{tool_use_id}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, text.encode("utf-8", "surrogatepass"))
        return str(target)


def result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
    return ""
