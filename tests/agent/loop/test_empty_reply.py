"""A reply with nothing in it is asked again, then fails the turn; it never ends a turn as done."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import Event, Notice
from agent.core.invariants import find_violations
from agent.loop.endings import MAX_EMPTY_RETRIES, EmptyReplyError, is_empty_reply
from agent.model.client import ApiError
from tests.agent.loop.test_agent import make_agent
from tui.fake_api import FakeApi, Reply, text_reply, tool_reply

EMPTY = Reply(content=[])


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi() as server:
        yield server


@pytest.fixture
def events() -> list[Event]:
    return []


def nap(label: str) -> Any:
    return tool_reply(("Nap", {"seconds": 0.0, "label": label}))


async def test_an_empty_reply_is_asked_again_and_the_task_goes_on(
    api: FakeApi, tmp_path: Path, events: list[Event]
) -> None:
    api.add(nap("1"), nap("2"), EMPTY, nap("3"), nap("4"), nap("5"), text_reply("all six"))
    agent = make_agent(api, tmp_path, events)
    outcome = await agent.submit("six steps")
    assert outcome.result == "all six" and outcome.num_turns == 6
    assert len(api.requests) == 7
    # The same request went again: nothing of the empty reply entered the conversation.
    assert api.requests[3].messages == api.requests[2].messages
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("empty reply" in text and "1 of" in text for text in notices)
    assert "(no content)" not in str([m.content for m in agent.messages])
    assert find_violations(agent.messages) == []
    assert api.errors == []


@pytest.mark.parametrize(
    "empty",
    [
        Reply(content=[]),
        Reply(content=[{"type": "text", "text": " \n"}]),  # blank text only
        Reply(content=[{"type": "brand_new_block"}]),  # nothing ccx knows
    ],
    ids=["no-blocks", "blank-text", "unknown-block"],
)
async def test_empty_replies_past_the_retries_fail_the_turn_and_keep_the_conversation(
    api: FakeApi, tmp_path: Path, events: list[Event], empty: Reply
) -> None:
    api.add(nap("1"), *[empty] * (MAX_EMPTY_RETRIES + 1))
    agent = make_agent(api, tmp_path, events)
    with pytest.raises(EmptyReplyError) as raised:
        await agent.submit("go")
    assert isinstance(raised.value, ApiError)  # a failure to every front end, never a success
    assert f"{MAX_EMPTY_RETRIES + 1} times in a row" in raised.value.message
    assert len(api.requests) == MAX_EMPTY_RETRIES + 2
    assert agent.messages[-1].kind == "tool_result"  # as it was before the empty replies
    assert find_violations(agent.messages) == []
    api.add(text_reply("back"))
    assert (await agent.submit("again")).result == "back"  # the session goes on
    assert api.errors == []


async def test_a_refusal_with_nothing_is_not_asked_again(
    api: FakeApi, tmp_path: Path, events: list[Event]
) -> None:
    api.add(Reply(content=[], stop_reason="refusal"))
    agent = make_agent(api, tmp_path, events)
    with pytest.raises(EmptyReplyError, match="declined"):
        await agent.submit("go")
    assert len(api.requests) == 1


async def test_thinking_alone_is_no_answer_and_a_count_resets_after_a_real_reply(
    api: FakeApi, tmp_path: Path, events: list[Event]
) -> None:
    thinking_only = Reply(content=[{"type": "thinking", "thinking": "hmm"}])
    # Two empty replies, a real one, two more: never three in a row, so the task finishes.
    api.add(EMPTY, thinking_only, nap("1"), EMPTY, EMPTY, text_reply("done"))
    agent = make_agent(api, tmp_path, events)
    assert (await agent.submit("go")).result == "done"
    assert len(api.requests) == 6


def test_what_counts_as_empty() -> None:
    assert is_empty_reply([])
    assert is_empty_reply([{"type": "thinking", "thinking": "x"}, {"type": "text", "text": " "}])
    assert not is_empty_reply([{"type": "text", "text": "ok"}])
    assert not is_empty_reply([{"type": "tool_use", "id": "t", "name": "Nap", "input": {}}])
    assert not is_empty_reply([{"type": "server_tool_use", "id": "s", "name": "web_search"}])


async def test_an_interrupt_between_empty_replies_stops_the_turn(
    api: FakeApi, tmp_path: Path, events: list[Event]
) -> None:
    api.add(EMPTY, Reply(content=[], delay_s=30))
    agent = make_agent(api, tmp_path, events)
    task = asyncio.ensure_future(agent.submit("go"))
    while len(api.requests) < 2:
        await asyncio.sleep(0.01)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert find_violations(agent.messages) == []
