"""Microcompact planning and clearing: what is protected, when it pays, what the model sees."""

from __future__ import annotations

from agent.core.invariants import find_violations
from agent.core.messages import Message, tool_result_block, user_text
from compaction.inputs import apply_input_clearing
from compaction.markers import CLEARED_PREFIX, marker_for
from compaction.microcompact import (
    MicrocompactConfig,
    apply_clearing,
    find_candidates,
    plan_clearing,
)
from compaction.result_index import ResultIndex, is_cleared
from compaction.tokens import estimate_block, estimate_message
from tools.read import UNCHANGED_STUB_PREFIX

STUB = f"{UNCHANGED_STUB_PREFIX} (at 10:00:00, moments ago); the content shown earlier is current."

BIG = "x = 1\n" * 2_000  # about 3,000 tokens


def conversation(calls: list[tuple[str, dict]], result: str = BIG) -> list[Message]:
    messages = [user_text("audit the repo")]
    for index, (name, tool_input) in enumerate(calls):
        tool_id = f"toolu_{index:03d}"
        messages.append(
            Message(
                "assistant",
                [
                    {"type": "text", "text": "next"},
                    {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input},
                ],
                kind="response",
                api_id=f"msg_{index}",
            )
        )
        messages.append(Message("user", [tool_result_block(tool_id, result)], kind="tool_result"))
    return messages


def reads(count: int) -> list[tuple[str, dict]]:
    return [("Read", {"file_path": f"/repo/m{i:02d}.py"}) for i in range(count)]


def plan(messages, **kw):
    defaults = {
        "now": 1_000.0,
        "last_response_at": 999.0,
        "used_tokens": 10_000,
        "auto_threshold": 87_000,
        "growth_per_request": 3_000,
        "message_tokens": estimate_message,
        "estimate_block": estimate_block,
    }
    return plan_clearing(messages, **{**defaults, **kw})


def ids(candidates) -> list[str]:
    return [c.tool_use_id for c in candidates]


def test_latest_reads_of_five_files_and_the_latest_round_are_protected() -> None:
    messages = conversation(reads(9))
    candidates = find_candidates(messages, MicrocompactConfig(), estimate_block)
    # Reads 0-8: the last round (8) is unseen, 4-7 plus 8 are the five most recent files.
    assert ids(candidates) == ["toolu_000", "toolu_001", "toolu_002", "toolu_003"]


def test_a_file_read_twice_keeps_only_its_latest_read() -> None:
    calls = [("Read", {"file_path": "/repo/a.py"})] * 3 + reads(2)
    candidates = find_candidates(conversation(calls), MicrocompactConfig(), estimate_block)
    assert ids(candidates) == ["toolu_000", "toolu_001"]


def with_result(messages: list[Message], tool_id: str, text: str) -> list[Message]:
    """``messages`` with the result of ``tool_id`` reading ``text``."""
    return [
        Message("user", [tool_result_block(tool_id, text)], kind="tool_result")
        if any(b.get("tool_use_id") == tool_id for b in m.tool_results())
        else m
        for m in messages
    ]


def test_an_unchanged_reread_keeps_the_full_read_it_points_to() -> None:
    # a.py read in full, four other files, then a.py re-read unchanged (the stub) and a later round.
    calls = [("Read", {"file_path": "/repo/a.py"}), *reads(4)]
    calls += [("Read", {"file_path": "/repo/a.py"}), ("Bash", {"command": "make"})]
    messages = with_result(conversation(calls), "toolu_005", STUB)
    candidates = find_candidates(messages, MicrocompactConfig(), estimate_block)
    # The stub is no read of its own: a.py's full read stays, and it counts as one of five files.
    assert "toolu_000" not in ids(candidates)
    assert ids(candidates) == []
    # With a sixth file read after the stub, a.py is still among the five most recent (the stub
    # made it recent) and m00 is the one to go.
    calls.append(("Read", {"file_path": "/repo/b.py"}))
    messages = with_result(conversation(calls), "toolu_005", STUB)
    candidates = find_candidates(messages, MicrocompactConfig(), estimate_block)
    assert ids(candidates) == ["toolu_001"]


def test_the_full_read_behind_a_stub_is_as_recent_as_the_stub() -> None:
    # 18K of outputs after a.py's read, but the stub re-read it just before the last round:
    # on a 60K window (W/4 = 15K) the full read is kept, where without the stub it would go.
    calls = [("Read", {"file_path": "/repo/a.py"})] + [("Bash", {"command": "make"})] * 6
    calls += [("Read", {"file_path": "/repo/a.py"}), ("Bash", {"command": "make"})]
    plain = conversation(calls)
    index = ResultIndex(estimate_message, estimate_block)
    assert "toolu_000" in ids(
        find_candidates(plain, MicrocompactConfig(), estimate_block, index, window=60_000)
    )  # the re-read returned the text: it is the latest read, the first one goes
    stubbed = with_result(plain, "toolu_007", STUB)
    index = ResultIndex(estimate_message, estimate_block)
    assert "toolu_000" not in ids(
        find_candidates(stubbed, MicrocompactConfig(), estimate_block, index, window=60_000)
    )


def test_a_read_too_small_to_clear_takes_no_recent_file_slot() -> None:
    # m00-m04 read in full, then a tiny file (never clearable), then a Bash round.
    calls = [*reads(5), ("Read", {"file_path": "/repo/tiny.py"}), ("Bash", {"command": "make"})]
    messages = with_result(conversation(calls), "toolu_005", "1\tok = True\n")
    candidates = find_candidates(messages, MicrocompactConfig(), estimate_block)
    assert ids(candidates) == []  # the five full reads stay: tiny.py took none of their slots


def test_other_tools_keep_their_three_latest_and_small_or_foreign_results_stay() -> None:
    calls = (
        [("Bash", {"command": f"echo {i}"}) for i in range(6)]
        + [("Skill", {"skill": "x"})]
        + reads(1)
    )
    messages = conversation(calls)
    messages[2] = Message("user", [tool_result_block("toolu_000", "tiny")], kind="tool_result")
    candidates = find_candidates(messages, MicrocompactConfig(), estimate_block)
    assert ids(candidates) == [
        "toolu_001",
        "toolu_002",
    ]  # 0 is small, 3-5 are the latest three, Skill is not compactable


def test_cold_cache_clears_everything_clearable() -> None:
    messages = conversation(reads(8))
    result = plan(messages, last_response_at=1_000.0 - 301)
    assert result.reason == "time" and ids(result.clear) == ["toolu_000", "toolu_001", "toolu_002"]
    assert plan(messages, last_response_at=None).reason == "time"


def test_warm_cache_waits_until_the_batch_pays_for_the_rewrite() -> None:
    small = plan(conversation(reads(7)))
    assert small.reason == "none" and small.clear == []
    assert small.clearable_tokens < small.batch_threshold
    large = plan(conversation(reads(40)))
    assert large.reason == "cost" and len(large.clear) == 35
    assert large.clearable_tokens >= large.batch_threshold


def test_pressure_near_the_threshold_clears_now() -> None:
    messages = conversation(reads(8))
    result = plan(messages, used_tokens=82_000)  # 82K + 2 x 3K growth >= 87K
    assert result.reason == "pressure" and len(result.clear) == 3
    assert plan(messages, used_tokens=82_000, auto_threshold=None).reason == "none"


def test_clearing_replaces_results_with_markers_and_keeps_the_pairs() -> None:
    messages = conversation(reads(8))
    candidates = find_candidates(messages, MicrocompactConfig(), estimate_block)
    markers = {
        c.tool_use_id: marker_for(c, file_unchanged=True, line_count=2000) for c in candidates
    }
    cleared = apply_clearing(messages, markers)
    assert cleared is not messages and cleared[2] is not messages[2] and cleared[3] is messages[3]
    assert messages[2].content[0]["content"] == BIG  # the old list is untouched (undo, memo)
    block = cleared[2].content[0]
    assert (
        is_cleared(block)
        and "/repo/m00.py" not in block["content"]  # the Read call beside it names the file
        and "2000 lines" in block["content"]
    )
    assert "unchanged since" in block["content"]
    assert find_violations(cleared) == []
    assert [m.tool_uses() for m in cleared] == [m.tool_uses() for m in messages]
    assert find_candidates(cleared, MicrocompactConfig(), estimate_block) == []


def test_markers_say_how_to_get_the_content_back() -> None:
    (bash,) = [
        c
        for c in find_candidates(
            conversation([("Bash", {"command": "make"})] * 5 + reads(1)),
            MicrocompactConfig(),
            estimate_block,
        )
    ][:1]
    saved = marker_for(bash, saved_path="/s/out.txt", line_count=2000)
    assert saved.startswith(CLEARED_PREFIX) and "/s/out.txt" in saved and "2000 lines" in saved
    assert "make" not in saved  # the call beside it names the command
    assert "Read the file again" in marker_for(
        find_candidates(conversation(reads(7)), MicrocompactConfig(), estimate_block)[0],
        file_unchanged=False,
    )


def test_protection_is_a_token_budget_scaled_to_the_window() -> None:
    messages = conversation(reads(9))  # each read ~3,000 tokens
    roomy = find_candidates(messages, MicrocompactConfig(), estimate_block, window=200_000)
    assert ids(roomy) == ["toolu_000", "toolu_001", "toolu_002", "toolu_003"]  # five files fit
    # W/4 = 10K on a 40K window: three of the five recent files fit, the older two are cleared.
    index = ResultIndex(estimate_message, estimate_block)
    small = find_candidates(messages, MicrocompactConfig(), estimate_block, index, window=40_000)
    assert ids(small) == [f"toolu_{i:03d}" for i in range(6)]


def test_a_read_is_protected_only_while_what_followed_it_fits_the_budget() -> None:
    calls = [("Read", {"file_path": "/repo/old.py"})] + [("Bash", {"command": "make"})] * 6
    messages = conversation(calls)
    index = ResultIndex(estimate_message, estimate_block)
    # 18K of outputs followed the read: more than W/4 on a 60K window, less on 200K.
    assert "toolu_000" in ids(
        find_candidates(messages, MicrocompactConfig(), estimate_block, index, window=60_000)
    )
    index = ResultIndex(estimate_message, estimate_block)
    assert "toolu_000" not in ids(
        find_candidates(messages, MicrocompactConfig(), estimate_block, index, window=200_000)
    )


def edits(count: int) -> list[tuple[str, dict]]:
    return [
        (
            "Edit" if i % 2 else "Write",
            {"file_path": f"/repo/e{i}.py", "old_string": "a\n" * 300, "new_string": "b\n" * 300}
            if i % 2
            else {"file_path": f"/repo/e{i}.py", "content": "c\n" * 600},
        )
        for i in range(count)
    ]


def test_old_edit_and_write_inputs_are_cleared_with_the_results() -> None:
    messages = conversation(edits(6), result="ok " * 40)
    result = plan(messages, last_response_at=None, window=200_000)
    assert result.reason == "time"
    # every input but the latest call's goes
    assert ids(result.inputs) == ["toolu_000", "toolu_001", "toolu_002", "toolu_003", "toolu_004"]
    cleared = apply_input_clearing(messages, {c.tool_use_id for c in result.inputs})
    assert find_violations(cleared) == []
    write, edit = cleared[1].tool_uses()[0], cleared[3].tool_uses()[0]
    assert write["id"] == "toolu_000" and write["input"]["file_path"] == "/repo/e0.py"
    assert (
        write["input"]["content"].startswith(CLEARED_PREFIX)
        and "Read the file" in (write["input"]["content"])
        and "/repo/e0.py" not in write["input"]["content"]  # the call names it already
    )
    assert edit["input"]["old_string"] == CLEARED_PREFIX + "]"
    assert "301 lines" in edit["input"]["new_string"]
    assert messages[1].tool_uses()[0]["input"]["content"] == "c\n" * 600  # copies only
    again = plan(cleared, last_response_at=None, window=200_000)
    assert again.inputs == []  # a cleared input is not cleared twice


def test_inputs_can_be_left_alone() -> None:
    messages = conversation(edits(6), result="ok " * 40)
    config = MicrocompactConfig(clear_inputs=False)
    assert plan(messages, last_response_at=None, window=200_000, config=config).inputs == []


def test_old_web_fetch_results_are_cleared_and_the_call_beside_them_keeps_the_url() -> None:
    calls = [("WebFetch", {"url": f"https://docs.example/p{i}", "prompt": "q"}) for i in range(5)]
    messages = conversation([*calls, *reads(1)])
    candidates = find_candidates(messages, MicrocompactConfig(), estimate_block)
    assert ids(candidates) == ["toolu_000", "toolu_001"]  # the latest three results stay
    cleared = apply_clearing(messages, {c.tool_use_id: marker_for(c) for c in candidates})
    block = cleared[2].content[0]
    assert block["content"] == f"{CLEARED_PREFIX}: old output.]"
    call = next(b for b in cleared[1].content if b.get("type") == "tool_use")
    assert call["input"]["url"] == "https://docs.example/p0"
