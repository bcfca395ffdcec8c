"""Thinking in the history through every path of the context system, against the fake API.

Each session here runs with thinking on and scripted thinking blocks; every
request the fake API received is checked against the API's thinking rules
(tests/thinking_rules.py, which reads only the wire): blocks sent back byte
for byte, the continued tool loop starting with its thinking, no
cache_control on thinking, max_tokens above the budget. Beyond the rules:
the earlier thinking is dropped where a clear or a compaction rewrites the
prompt anyway, and never the continued loop's.
"""

from __future__ import annotations

from typing import Any

from agent.core.events import CompactionFinished, Microcompacted
from agent.core.messages import Message, user_text
from agent.model.thinking import ThinkingChoice
from compaction.microcompact import MicrocompactConfig
from compaction.notes import NotesStore
from compaction.notes_writer import NOTES_REQUEST_MARK, SessionNotes
from compaction.summary import SUMMARY_REQUEST_MARK
from tests.compaction.manager_harness import Setup, summary_reply
from tests.thinking_rules import THINKING, thinking_count, violations
from tui.fake_api import Reply, text_reply

BUDGET = 24_000  # above a summary's 20,000 output tokens and the notes' 8,000
BUDGET_MODEL = "claude-sonnet-4-5"
THINKING_ON = {"thinking": {"type": "enabled", "budget_tokens": BUDGET, "display": "omitted"}}


def thought(step: int, words: int = 200) -> dict[str, Any]:
    return {
        "type": "thinking",
        "thinking": f"Step {step}: " + "weighing what to read next. " * words,
    }


def thinking_reads(setup: Setup, count: int, start: int = 0) -> list[Reply]:
    return [
        Reply(
            content=[
                thought(start + i),
                {"type": "text", "text": f"Reading module {i}."},
                {
                    "type": "tool_use",
                    "name": "Read",
                    "input": {"file_path": str(setup.repo / f"m{i:02d}.py")},
                },
            ]
        )
        for i in range(count)
    ]


def final(step: int) -> Reply:
    return Reply(content=[thought(step, 20), {"type": "text", "text": "done"}])


def thinking_setup(api: Any, tmp_path: Any, **kw: Any) -> Setup:
    """A session on a model that thinks with a budget (the 4.5 models), BUDGET tokens of it."""
    setup = Setup(api, tmp_path, **kw)
    setup.agent.model = setup.agent.config.model = BUDGET_MODEL
    setup.agent.config.thinking = ThinkingChoice(budget=BUDGET)
    setup.agent.config.max_tokens = BUDGET + 8_192
    return setup


def is_side(request: Any) -> bool:
    return SUMMARY_REQUEST_MARK in request.last_user_text()


def main_requests(api: Any) -> list[Any]:
    return [r for r in api.requests if not is_side(r)]


def last_response_thinking(request: Any) -> dict[str, Any] | None:
    assistants = [m for m in request.messages if m["role"] == "assistant"]
    first = assistants[-1]["content"][0] if assistants else {}
    return first if first.get("type") in THINKING else None


async def test_a_clear_on_a_cold_cache_drops_every_earlier_thought_but_the_loop_s(
    api, tmp_path
) -> None:
    setup = thinking_setup(api, tmp_path, window=200_000)
    setup.manager.config = MicrocompactConfig(cache_ttl_s=0.0)  # every gap is cold: clear freely
    api.add(*thinking_reads(setup, 8), final(8))
    outcome = await setup.agent.submit("Read the modules.")
    assert outcome.result == "done" and api.errors == []
    assert violations(api.requests) == []
    requests = main_requests(api)
    assert [thinking_count(r.body) for r in requests] == [0, 1, 1, 1, 1, 1, 1, 1, 1]
    # the one kept is the continued loop's (the rules checked it is the reply's, unchanged)
    assert all(last_response_thinking(r) is not None for r in requests[1:])
    dropped = [e.thinking_dropped for e in setup.events if isinstance(e, Microcompacted)]
    assert sum(dropped) >= 6
    # in memory: the last request's loop response and the final one still hold theirs
    holders = [m for m in setup.agent.messages if any(b["type"] in THINKING for b in m.content)]
    assert holders == [setup.agent.messages[-3], setup.agent.messages[-1]]


async def test_a_warm_cache_keeps_the_prefix_and_a_clear_takes_the_thinking_it_rewrites(
    api, tmp_path
) -> None:
    setup = thinking_setup(api, tmp_path, window=60_000)
    api.on(is_side, summary_reply)
    api.add(*thinking_reads(setup, 12), final(12))
    outcome = await setup.agent.submit("Read every module and report FACT values.")
    assert outcome.result == "done" and api.errors == []
    assert violations(api.requests) == []
    counts = [thinking_count(r.body) for r in main_requests(api)]
    assert max(counts) < len(counts) - 1, counts  # some earlier thinking went somewhere
    # every request kept the loop's thought
    assert all(last_response_thinking(r) for r in main_requests(api)[1:])


async def test_auto_compaction_between_tool_rounds_keeps_the_loop_thinking(api, tmp_path) -> None:
    setup = thinking_setup(api, tmp_path, window=40_000)
    setup.manager.config = MicrocompactConfig(keep_recent_files=100, read_budget=1.0)
    api.on(is_side, summary_reply)
    api.add(*thinking_reads(setup, 12), final(12))
    outcome = await setup.agent.submit("Read every module and report FACT values.")
    assert outcome.result == "done" and api.errors == []
    assert [e for e in setup.events if isinstance(e, CompactionFinished)]
    assert violations(api.requests) == []
    summaries = setup.summaries()
    assert summaries and all(r.body["max_tokens"] > BUDGET for r in summaries)
    assert all(r.body.get("thinking") == THINKING_ON["thinking"] for r in summaries)


async def test_manual_compact_then_undo_then_more_turns_send_nothing_refused(api, tmp_path) -> None:
    setup = thinking_setup(api, tmp_path)
    api.add(*thinking_reads(setup, 3), final(3))
    await setup.agent.submit("read three modules")
    before = [m.to_record() for m in setup.agent.messages]
    api.add(text_reply("<summary>read three modules</summary>"))
    await setup.manager.compact(setup.agent)
    summary_request = api.requests[-1]
    assert summary_request.body["max_tokens"] > BUDGET
    api.add(*thinking_reads(setup, 2, start=10), final(12))
    await setup.agent.submit("two more")
    assert setup.manager.undo(setup.agent)
    restored = [m.to_record() for m in setup.agent.messages[: len(before)]]
    assert restored == before  # thinking blocks back byte for byte
    api.add(*thinking_reads(setup, 1, start=20), final(21))
    await setup.agent.submit("one more after the undo")
    assert api.errors == [] and violations(api.requests) == []


async def test_partial_compaction_up_to_a_loop_whose_thinking_went_sends_no_thinking(
    api, tmp_path
) -> None:
    setup = thinking_setup(api, tmp_path)
    setup.manager.config = MicrocompactConfig(cache_ttl_s=0.0)
    api.add(*thinking_reads(setup, 5), final(5))
    await setup.agent.submit("read five")
    api.add(text_reply("<summary>the older rounds</summary>"))
    record = await setup.manager.compact(setup.agent, partial="up_to", keep_rounds=2)
    assert record.kind == "partial_up_to"
    request = api.requests[-1]
    # the summarized part ends in a tool loop whose thinking a clear dropped: no thinking then
    assert "thinking" not in request.body
    api.add(*thinking_reads(setup, 1, start=9), final(10))
    await setup.agent.submit("go on")
    assert api.errors == [] and violations(api.requests) == []


async def test_session_memory_compaction_with_thinking(api, tmp_path) -> None:
    events: list[dict] = []
    notes = SessionNotes(NotesStore(tmp_path / "session"), events.append)
    setup = thinking_setup(api, tmp_path, window=40_000, session_memory=notes)
    setup.manager.config = MicrocompactConfig(keep_recent_files=100, read_budget=1.0)
    api.on(
        lambda r: NOTES_REQUEST_MARK in r.last_user_text(),
        lambda _r: text_reply("<summary>Notes: modules read so far.</summary>"),
    )
    api.on(is_side, summary_reply)
    api.add(*thinking_reads(setup, 12), final(12))
    outcome = await setup.agent.submit("Read every module, twice.")
    assert outcome.result == "done" and api.errors == []
    records = [e.record for e in setup.events if isinstance(e, CompactionFinished)]
    assert records and records[0].method == "session_memory"
    assert violations(api.requests) == []
    notes_requests = [r for r in api.requests if NOTES_REQUEST_MARK in r.last_user_text()]
    assert notes_requests and all(r.body["max_tokens"] > BUDGET for r in notes_requests)
    # after it, only the continued loop's thought of the kept messages was sent back
    after = [r for r in main_requests(api) if r.received_at > notes_requests[0].received_at]
    assert after and thinking_count(after[0].body) <= 2


async def test_a_loop_continued_without_its_thinking_is_sent_without_thinking(
    api, tmp_path
) -> None:
    setup = thinking_setup(api, tmp_path)
    earlier = [
        user_text("read m00"),
        Message(
            role="assistant",
            content=[
                {
                    "type": "tool_use",
                    "id": "toolu_old",
                    "name": "Glob",
                    "input": {"pattern": "*.py"},
                }
            ],
            kind="response",
        ),
        Message(
            role="user",
            content=[{"type": "tool_result", "tool_use_id": "toolu_old", "content": "m00.py"}],
            kind="tool_result",
        ),
    ]
    for message in earlier:  # a session recorded while thinking was off, stopped mid-loop
        setup.agent.conversation.append(message)
    api.add(final(1), final(2))
    await setup.agent.submit("and now?")
    (first,) = api.requests
    assert "thinking" not in first.body  # with thinking on the API would refuse it
    await setup.agent.submit("again")
    assert api.requests[-1].body.get("thinking") == THINKING_ON["thinking"]
    assert violations(api.requests) == []
