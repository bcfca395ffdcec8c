"""Every compaction record names its method, on every wire it travels."""

from __future__ import annotations

import json

import pytest

from agent.core.compaction_record import CompactionRecord
from agent.core.conversation import Compacted, Conversation
from agent.core.events import CompactionFinished
from agent.core.messages import user_text


def record(trigger: str, kind: str) -> CompactionRecord:
    return CompactionRecord(trigger, kind, 900, 100, 0.5, 2, 0, {}, 0, 10, "s")


@pytest.mark.parametrize(
    ("trigger", "kind", "method"),
    [
        ("auto", "session_memory", "session_memory"),
        ("auto", "full", "summary"),
        ("manual", "full", "summary"),
        ("manual", "partial_up_to", "partial"),
        ("manual", "partial_from", "partial"),
        ("reactive", "full", "reactive"),
    ],
)
def test_the_method_follows_from_trigger_and_kind(trigger: str, kind: str, method: str) -> None:
    made = record(trigger, kind)
    assert made.method == method
    assert made.to_json()["method"] == method
    assert CompactionFinished(made).to_json()["record"]["method"] == method


class Log:
    def __init__(self) -> None:
        self.records: list[dict] = []

    def append_message(self, message) -> None:
        self.records.append({"type": "message"})

    def append_record(self, record: dict) -> None:
        self.records.append(json.loads(json.dumps(record)))


def test_the_transcript_boundary_carries_the_method() -> None:
    log = Log()
    conversation = Conversation([user_text("hi")], log)
    conversation.replace(Compacted([user_text("summary")], record("auto", "session_memory")))
    (boundary,) = [r for r in log.records if r["type"] == "compact_boundary"]
    assert boundary["method"] == "session_memory" and boundary["kind"] == "session_memory"


def test_the_result_line_says_when_the_notes_stood_in_for_the_summary() -> None:
    from tui.commands.builtin import compaction_line

    assert compaction_line(record("manual", "full")).startswith("Compacted (manual): ")
    made = CompactionRecord("auto", "session_memory", 900, 100, 0.005, 20, 12, {}, 0, 10, "n")
    line = compaction_line(made)
    assert line.startswith("Compacted (auto, from the session notes, 12 recent messages kept): ")


def test_the_result_line_says_when_the_context_did_not_get_smaller() -> None:
    from tui.commands.builtin import compaction_line

    smaller = CompactionRecord("manual", "full", 41_000, 9_000, 3.2, 20, 0, {}, 0, 10, "s")
    assert "did not get smaller" not in compaction_line(smaller)
    grew = CompactionRecord("manual", "full", 7_500, 12_000, 0.4, 4, 0, {}, 0, 10, "s")
    line = compaction_line(grew)
    assert line.startswith("Compacted (manual): 7.5K → 12K tokens")
    assert "did not get smaller" in line and "/undo-compact" in line
