"""The event channel carries typed payloads; they become dicts only at the boundaries."""

from __future__ import annotations

import json

from agent.core.compaction_record import CompactionRecord
from agent.core.context_state import ContextLimits, ContextState, context_state
from agent.core.events import (
    CompactionFinished,
    ContextUpdate,
    ModeChanged,
    ToolStarted,
)

LIMITS = ContextLimits(200_000, 64_000)


def record() -> CompactionRecord:
    return CompactionRecord(
        trigger="auto",
        kind="full",
        tokens_before=170_000,
        tokens_after=21_000,
        duration_s=3.2,
        messages_summarized=40,
        messages_kept=0,
        restored={"files": ["/r/a.py"], "skills": [], "plan": [], "other": []},
        restored_tokens=900,
        summary_tokens=1_500,
        summary="1. Primary request: fix it",
        usage={"input_tokens": 10},
        replaced_count=2,
        last_uuid="u-2",
        at=1.0,
    )


def test_a_context_update_carries_the_state_and_serializes_it_as_ever() -> None:
    state = context_state(150_000, LIMITS, auto_enabled=True, compact_enabled=True)
    event = ContextUpdate(state)
    assert event.state is state and event.state.level == "warning"
    data = event.to_json()
    assert data == {"type": "context", "state": state.to_json()}
    assert "limits" not in data["state"] and data["state"]["auto_compact_at"] == 167_000
    back = ContextState.from_json(json.loads(json.dumps(data))["state"])
    assert (
        back.to_json() == state.to_json() and back.limits.auto_compact == state.limits.auto_compact
    )


def test_a_compaction_record_is_typed_and_keeps_its_keys_on_the_wire() -> None:
    data = CompactionFinished(record()).to_json()
    assert data["type"] == "compaction_finished"
    assert list(data["record"]) == [
        "trigger",
        "kind",
        "tokens_before",
        "tokens_after",
        "duration_s",
        "messages_summarized",
        "messages_kept",
        "restored",
        "restored_tokens",
        "summary_tokens",
        "summary",
        "instructions",
        "attempts",
        "dropped_messages",
        "truncated",
        "usage",
        "replaced_count",
        "last_uuid",
        "at",
        "method",
    ]
    assert data["record"]["restored"]["files"] == ["/r/a.py"]
    json.dumps(data)  # nothing left that JSON cannot carry


def test_a_mode_change_and_a_tool_label_are_events_too() -> None:
    assert ModeChanged("plan", "default").to_json() == {
        "type": "mode_changed",
        "mode": "plan",
        "previous": "default",
    }
    started = ToolStarted("t1", "Read", {"file_path": "a.py"}, "Read a.py")
    assert started.to_json()["label"] == "Read a.py"
    assert ToolStarted("t2", "Read", {}).label == ""
