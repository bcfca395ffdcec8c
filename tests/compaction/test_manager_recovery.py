"""The context manager recovering: prompt-too-long, undo, interrupted hooks, session memory."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent.core.events import CompactionFinished
from agent.core.invariants import find_violations
from agent.core.messages import Message, user_text
from compaction.grouping import drop_oldest_groups
from compaction.microcompact import MicrocompactConfig
from compaction.session_memory import SessionMemoryResult
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from tests.compaction.manager_harness import Hooks, Setup, summary_reply
from tui.fake_api import Fault, text_reply, tool_reply


async def test_prompt_too_long_triggers_reactive_compaction(api, tmp_path) -> None:
    setup = Setup(api, tmp_path, window=200_000)
    api.add(*setup.read_script(2), Fault.prompt_too_long(210_000, 200_000))
    api.add(text_reply("<summary>short</summary>"), text_reply("answered after compaction"))
    outcome = await setup.agent.submit("read and answer")
    assert outcome.result == "answered after compaction"
    record = next(e.record for e in setup.events if isinstance(e, CompactionFinished))
    assert record.trigger == "reactive"
    assert api.errors == []


async def test_summary_request_too_long_drops_oldest_rounds(api, tmp_path) -> None:
    setup = Setup(api, tmp_path)
    api.add(*setup.read_script(6), text_reply("ok"))
    await setup.agent.submit("read six")
    api.add(Fault.prompt_too_long(60_000, 50_000), text_reply("<summary>after dropping</summary>"))
    record = await setup.manager.compact(setup.agent)
    assert record.attempts == 2 and record.dropped_messages > 0
    retry = api.requests[-1]
    assert retry.messages[0]["role"] == "user" and api.errors == []


async def test_undo_compact_brings_back_the_file_state_cache(api, tmp_path) -> None:
    setup = Setup(api, tmp_path)
    api.add(*setup.read_script(8), text_reply("read eight"))
    await setup.agent.submit("read eight modules")
    api.add(text_reply("<summary>s</summary>"))
    await setup.manager.compact(setup.agent)
    assert 0 < len(setup.file_state) <= 5  # only what was re-read
    assert setup.manager.undo(setup.agent)
    assert len(setup.file_state) == 8
    oldest = setup.repo / "m00.py"  # read before the compaction, not re-read by it
    edit = {"file_path": str(oldest), "old_string": "FACT_0 = 0", "new_string": "FACT_0 = 100"}
    api.add(tool_reply(("Edit", edit)), text_reply("edited"))
    await setup.agent.submit("set FACT_0 to 100")
    assert oldest.read_text().startswith("FACT_0 = 100\n")


async def test_an_interrupt_in_the_session_start_hook_leaves_the_session_as_it_was(
    api, tmp_path
) -> None:
    setup = Setup(api, tmp_path, hooks=Hooks(interrupt_session_start=True))
    api.add(*setup.read_script(8), text_reply("read eight"), text_reply("<summary>s</summary>"))
    await setup.agent.submit("read eight modules")
    before, cached = list(setup.agent.messages), setup.file_state.snapshot()
    with pytest.raises(asyncio.CancelledError):
        await setup.manager.compact(setup.agent)
    assert setup.agent.messages == before
    assert setup.file_state.snapshot() == cached
    assert not setup.manager.undo(setup.agent)  # nothing was committed


async def test_undo_finds_its_place_after_the_head_of_the_conversation_changed(
    api, tmp_path
) -> None:
    setup = Setup(api, tmp_path)
    api.add(*setup.read_script(2), text_reply("read two"))
    await setup.agent.submit("read two modules")
    before = list(setup.agent.messages)
    api.add(text_reply("<summary>s</summary>"), text_reply("later answer"))
    record = await setup.manager.compact(setup.agent)
    assert record.last_uuid == setup.agent.messages[-1].uuid  # for resume, in the boundary
    await setup.agent.submit("a later question")
    later = setup.agent.messages[-2:]
    head = user_text("[repaired]", kind="meta")
    setup.agent.conversation.apply_repair([head, *setup.agent.messages])  # a repair at the head
    assert setup.manager.undo(setup.agent)
    assert setup.agent.messages == [*before, *later]

    api.add(text_reply("<summary>s2</summary>"), text_reply("answer"))
    await setup.manager.compact(setup.agent)
    await setup.agent.submit("another question")
    # A prompt-too-long retry drops the oldest rounds, and with them the summary and restored files.
    trimmed = drop_oldest_groups(setup.agent.messages, None)
    assert trimmed is not None
    setup.agent.conversation.drop_oldest(trimmed)
    assert not setup.manager.undo(setup.agent)
    assert setup.agent.messages == trimmed


async def test_prompt_too_long_ladder_compacts_once_then_drops_the_oldest_rounds(
    api, tmp_path
) -> None:
    hooks = Hooks(block=True)  # the reactive compaction fails: on to dropping rounds
    setup = Setup(api, tmp_path, window=200_000, hooks=hooks)
    api.add(*setup.read_script(6), text_reply("read six"))
    await setup.agent.submit("read six")
    api.add(Fault.prompt_too_long(201_000, 200_000), Fault.prompt_too_long(201_000, 200_000))
    api.add(text_reply("fits now"))
    outcome = await setup.agent.submit("and now?")
    assert outcome.result == "fits now"
    pre_compacts = [c for c in hooks.calls if c[0] == "PreCompact"]
    assert len(pre_compacts) == 1  # compaction is tried for the first refusal only
    sizes = [len(r.messages) for r in setup.main_requests()[-3:]]
    assert sizes[0] > sizes[1] > sizes[2]  # each refusal after it dropped the oldest rounds
    assert find_violations(setup.agent.messages) == [] and api.errors == []

    api.add(Fault.prompt_too_long(201_000, 200_000), text_reply("again"))
    await setup.agent.submit("once more")  # a new request starts the ladder again
    assert len([c for c in hooks.calls if c[0] == "PreCompact"]) == 2


async def test_reactive_compaction_tells_hooks_it_is_auto(api, tmp_path) -> None:
    hooks = Hooks()
    setup = Setup(api, tmp_path, window=200_000, hooks=hooks)
    api.add(*setup.read_script(2), Fault.prompt_too_long(210_000, 200_000))
    api.add(text_reply("<summary>short</summary>"), text_reply("answered after compaction"))
    await setup.agent.submit("read and answer")
    record = next(e.record for e in setup.events if isinstance(e, CompactionFinished))
    assert record.trigger == "reactive"  # the session log keeps the real cause
    compact_hooks = [
        (event, value, payload["trigger"])
        for (event, value), payload in zip(hooks.calls, hooks.payloads, strict=True)
        if event in ("PreCompact", "PostCompact")
    ]
    assert compact_hooks == [("PreCompact", "auto", "auto"), ("PostCompact", "auto", "auto")]


# -- session memory ---------------------------------------------------------------------


class Notes:
    """A stand-in for the session-memory producer: notes covering all but the last messages."""

    def __init__(self, keep_last: int) -> None:
        self.keep_last = keep_last
        self.calls = 0

    def observe(self, host: object, used: int, limits: object, outlook: object = None) -> None:
        return None

    def cancel(self) -> None:
        return None

    def plan(self, messages: list[Message], limits: object) -> SessionMemoryResult | None:
        return SessionMemoryResult("Notes: the modules were read.", len(messages) - self.keep_last)

    def start_update(self, host: object, used: int, limits: object) -> bool:
        return False

    def covered_uuid(self) -> str | None:
        return None

    async def aclose(self) -> None:
        return None

    async def try_compact(
        self, messages: list[Message], limits: object
    ) -> SessionMemoryResult | None:
        self.calls += 1
        return SessionMemoryResult("Notes: the modules were read.", len(messages) - self.keep_last)


async def test_session_memory_result_over_the_threshold_is_never_committed(api, tmp_path) -> None:
    hooks = Hooks()
    notes = Notes(keep_last=10_000)  # keeps everything: still over the threshold
    setup = Setup(api, tmp_path, window=40_000, hooks=hooks, session_memory=notes)
    setup.manager.config = MicrocompactConfig(keep_recent_files=100, read_budget=1.0)
    records: list[dict[str, Any]] = []
    transcript = type(
        "S",
        (),
        {
            "folder": None,
            "path": tmp_path / "t.jsonl",
            "append_record": lambda self, r: records.append(r),
            "append_message": lambda self, m: None,
        },
    )()
    # One transcript, as in a session: compaction's events and the conversation's records.
    setup.manager.services.session = setup.agent.conversation.transcript = transcript
    api.on(lambda r: SUMMARY_MARK in r.last_user_text(), summary_reply)
    api.add(*setup.read_script(12), text_reply("done"))
    await setup.agent.submit("Read every module.")
    assert notes.calls >= 1
    finished = [e.record.kind for e in setup.events if isinstance(e, CompactionFinished)]
    assert finished and set(finished) == {"full"}
    boundaries = [r["kind"] for r in records if r["type"] == "compact_boundary"]
    assert boundaries == finished and not any(r["type"] == "compact_undo" for r in records)
    assert [c[0] for c in hooks.calls].count("SessionStart") == len(finished)
    assert len(setup.manager.compactor.history) == len(finished)


async def test_session_memory_under_the_threshold_replaces_the_summary_call(api, tmp_path) -> None:
    notes = Notes(keep_last=2)
    setup = Setup(api, tmp_path, window=40_000, session_memory=notes)
    setup.manager.config = MicrocompactConfig(keep_recent_files=100, read_budget=1.0)
    api.add(*setup.read_script(12), text_reply("done"))
    outcome = await setup.agent.submit("Read every module.")
    assert outcome.result == "done" and notes.calls >= 1
    finished = [e.record for e in setup.events if isinstance(e, CompactionFinished)]
    assert finished and {r.kind for r in finished} == {"session_memory"}
    assert setup.summaries() == [] and api.errors == []
    assert "Notes: the modules were read." in api.requests[-1].all_text()
