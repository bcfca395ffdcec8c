"""The stable cleared prefix: anchors microcompact names, the breakpoints requests put there,
and the rule that a later clear never changes what an anchor froze."""

from __future__ import annotations

import random

from agent.core.compaction_record import CompactionRecord
from agent.core.conversation import Compacted, Conversation
from agent.core.events import Microcompacted
from agent.core.messages import Message, user_text
from agent.core.request import build_request
from compaction.inputs import apply_input_clearing
from compaction.markers import marker_for
from compaction.microcompact import MicrocompactConfig, apply_clearing, plan_clearing
from compaction.result_index import ResultIndex
from compaction.tokens import estimate_block, estimate_message
from tests.compaction.manager_harness import Setup
from tests.compaction.test_microcompact import BIG, conversation, reads
from tui.fake_api import text_reply
from tui.fake_api.billing import block_tokens


def breakpoints(request: dict) -> list[int]:
    return [
        i
        for i, m in enumerate(request["messages"])
        if isinstance(m["content"], list) and "cache_control" in m["content"][-1]
    ]


def marks(request: dict) -> int:
    tools = sum("cache_control" in t for t in request.get("tools", []))
    system = sum("cache_control" in b for b in request["system"])
    return tools + system + len(breakpoints(request))


def request_for(messages: list[Message], anchors: tuple[int, ...] = ()) -> dict:
    return build_request(
        model="m",
        system=[{"type": "text", "text": "sys"}],
        tools=[{"name": "Read", "description": "d", "input_schema": {}}],
        messages=messages,
        max_tokens=100,
        anchors=anchors,
    )


def test_requests_mark_the_anchors_and_never_more_than_four_blocks() -> None:
    messages = conversation(reads(10))
    plain = request_for(messages)
    assert breakpoints(plain) == [18, 20] and marks(plain) == 3
    assert "cache_control" in plain["system"][-1]
    assert not any("cache_control" in t for t in plain["tools"])  # the system covers them
    anchored = request_for(messages, (4, 12))
    assert breakpoints(anchored) == [4, 12, 20] and marks(anchored) == 4
    # Only user messages before the tail can be anchors; a stale index is ignored.
    assert breakpoints(request_for(messages, (3, 19, 99))) == [20]
    assert messages[4].content[-1].get("cache_control") is None  # copies are marked


def test_the_previous_turn_keeps_its_breakpoint_when_the_last_round_is_long() -> None:
    messages = conversation(reads(3))
    uses = [
        {"type": "tool_use", "id": f"p{i}", "name": "Read", "input": {"file_path": f"/p{i}"}}
        for i in range(10)
    ]
    results = [{"type": "tool_result", "tool_use_id": f"p{i}", "content": "x"} for i in range(10)]
    messages += [Message("assistant", uses, kind="response"), Message("user", results)]
    request = request_for(messages, (2, 4))
    assert breakpoints(request) == [4, 6, 8] and marks(request) == 4


def test_a_clear_keeps_the_anchor_and_a_compaction_loses_it() -> None:
    messages = conversation(reads(8))
    chat = Conversation(messages)
    chat.set_cache_anchors([4, 10])
    assert chat.cache_anchors == (4, 10)
    cleared = apply_clearing(messages, {"toolu_003": "[Cleared to save context]"})
    chat.clear_results(cleared)  # message 8 changed; 4 and 10 are the same objects
    assert chat.cache_anchors == (4, 10)
    chat.set_cache_anchors([0, 4])
    record = CompactionRecord("manual", "full", 900, 100, 0.5, 2, 0, {}, 0, 10, "s")
    chat.replace(Compacted([user_text("summary"), *messages[1:]], record))
    assert chat.cache_anchors == (4,)  # a new first message: only the message still there holds
    chat.drop_oldest(messages[2:])
    assert chat.cache_anchors == ()


def plan(messages: list[Message], anchors: tuple[int, ...], **kw):
    defaults = {
        "now": 1_000.0,
        "last_response_at": 999.0,
        "used_tokens": 10_000,
        "auto_threshold": None,
        "growth_per_request": 3_000,
        "message_tokens": estimate_message,
        "estimate_block": estimate_block,
        "window": 200_000,
    }
    return plan_clearing(messages, anchors=anchors, **{**defaults, **kw})


def test_the_anchor_sits_before_every_result_a_later_clear_may_replace() -> None:
    messages = conversation(reads(4))
    result = plan(messages, ())
    assert result.clear == [] and result.anchors == (0,)  # the prompt: the reads all may go
    config = MicrocompactConfig(keep_recent_files=2)
    cleared = plan(messages, (), config=config, last_response_at=None)
    assert [c.message_index for c in cleared.clear] == [2, 4]
    # The read at 6 is protected and the one at 8 unseen: frozen up to 4, where the clear ended.
    assert cleared.anchors == (4,)


def test_a_later_clear_never_changes_what_an_anchor_froze() -> None:
    rng = random.Random(5)
    config = MicrocompactConfig(keep_recent_files=3, keep_recent_results=1)
    messages = [user_text("go")]
    anchors: tuple[int, ...] = ()
    index = ResultIndex(estimate_message, estimate_block)
    for step in range(120):
        name = rng.choice(["Read", "Read", "Bash", "Edit"])
        tool_input = {"file_path": f"/f{rng.randrange(8)}", "command": "make"}
        if name == "Edit":
            tool_input |= {"old_string": "a\n" * 200, "new_string": "b\n" * 200}
        tool_id = f"t{step}"
        use = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
        messages.append(Message("assistant", [use], kind="response", api_id=f"m{step}"))
        body = BIG[: rng.randrange(400, len(BIG))]
        messages.append(
            Message("user", [{"type": "tool_result", "tool_use_id": tool_id, "content": body}])
        )
        result = plan(messages, anchors, config=config, index=index, growth_per_request=200)
        changed = [c.message_index for c in (*result.clear, *result.inputs)]
        if changed and result.reason == "cost":
            frozen = anchors[0] if anchors else -1
            assert min(changed) > frozen, "a clear reached into the frozen prefix"
        markers = {c.tool_use_id: marker_for(c) for c in result.clear}
        if result.changes:
            messages = apply_input_clearing(
                apply_clearing(messages, markers), {c.tool_use_id for c in result.inputs}
            )
        if not result.changes or not anchors:  # as the manager does: move after a clear
            anchors = result.anchors


def prefix_tokens(body: dict, through: int) -> int:
    """The fake API's tokens of the tools, the system prompt and messages[: through + 1]."""
    blocks = [*body.get("tools", []), *body["system"]]
    blocks += [b for m in body["messages"][: through + 1] for b in m["content"]]
    return sum(block_tokens(b) for b in blocks)


async def test_a_clear_reads_the_frozen_prefix_from_the_cache(api, tmp_path) -> None:
    setup = Setup(api, tmp_path, window=200_000)
    # Without folding, so the cleared rounds stay in the frozen prefix (test_fold.py folds).
    setup.manager.config = MicrocompactConfig(
        keep_recent_files=2, keep_recent_results=1, fold_rounds=False
    )
    setup.manager.clearing.growth = 50.0  # small batches: several clears in twelve reads
    api.add(*setup.read_script(12), text_reply("done"))
    await setup.agent.submit("read the modules")
    assert len([e for e in setup.events if isinstance(e, Microcompacted)]) >= 2
    requests = api.requests
    shrunk = [
        i
        for i in range(1, len(requests))
        if requests[i].billing.estimated_tokens < requests[i - 1].billing.estimated_tokens
    ]
    body = requests[shrunk[-1]].body
    *anchors, _tail = breakpoints(body)
    anchor = anchors[-1]  # where the earlier clear left the frozen prefix
    frozen = prefix_tokens(body, anchor)
    assert frozen > prefix_tokens(body, -1) + 200, "the anchor is past the prompt"
    # That prefix was unchanged by this clear and is read from the cache, not written again.
    assert requests[shrunk[-1]].billing.cache_read_input_tokens >= frozen
