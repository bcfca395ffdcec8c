"""Server-side context editing: the edit's parameters, the request it rides on, the switch,
and the context manager handing clearing to the API (against the fake server)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from agent.core.events import SERVER_CLEARING, Microcompacted
from agent.core.invariants import find_violations
from agent.core.messages import Message, tool_result_block, user_text
from agent.core.request import CLEAR_THINKING
from compaction.cost_model import economic_batch
from compaction.microcompact import MicrocompactConfig
from compaction.server_editing import (
    BETA,
    ClearToolUses,
    cleared_read_paths,
    cleared_tool_use_ids,
    plan_server_edit,
    resolve_server_editing,
    server_clearing,
    with_server_edit,
)
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from compaction.thresholds import ContextLimits
from tests.compaction.manager_harness import Setup, summary_reply
from tui.fake_api import FakeApi, text_reply, tool_reply

SONNET = ContextLimits(200_000, 64_000)
TOOLS = ["Read", "Bash", "Grep", "Glob", "Edit", "Write", "Skill", "ExitPlanMode"]


# -- the edit's parameters ---------------------------------------------------------------


def test_parameters_come_from_the_local_rule_scaled_to_the_window() -> None:
    edit = plan_server_edit(SONNET, auto_enabled=True, tool_names=TOOLS)
    # T: auto-compact at 167,000, less two requests' growth of 2,000.
    assert edit.trigger == SONNET.auto_compact - 4_000 == 163_000
    assert edit.keep == 8  # the 5 most recent files' reads and 3 other results
    # C: the economic batch when the rewrite is what stays after the cleared results.
    c = edit.clear_at_least
    assert c == pytest.approx(economic_batch(edit.trigger - c, 2_000), abs=1)
    assert 60_000 < c < 70_000
    assert edit.exclude_tools == ("ExitPlanMode", "Skill")
    smaller = plan_server_edit(ContextLimits(120_000, 64_000), auto_enabled=True, tool_names=[])
    assert smaller.trigger == 83_000 and smaller.clear_at_least < c


def test_without_auto_compaction_the_trigger_sits_under_the_effective_window() -> None:
    edit = plan_server_edit(SONNET, auto_enabled=False, tool_names=TOOLS)
    assert edit.trigger == SONNET.effective - 4_000


def test_parameters_follow_the_microcompact_configuration() -> None:
    config = MicrocompactConfig(keep_recent_files=2, keep_recent_results=1, pressure_requests=5)
    edit = plan_server_edit(SONNET, auto_enabled=True, tool_names=TOOLS, config=config)
    assert edit.keep == 3 and edit.trigger == SONNET.auto_compact - 10_000


def test_the_request_extra_carries_the_beta_and_the_edit_merged_with_what_was_there() -> None:
    edit = ClearToolUses(100, 3, 50, ("Skill",))
    extra = {
        "extra_headers": {"anthropic-beta": "other-2025-01-01", "x-trace": "1"},
        "extra_body": {"metadata": {"user_id": "u"}},
        "temperature": 0.5,
    }
    merged = with_server_edit(extra, edit)
    assert merged["extra_headers"] == {
        "anthropic-beta": f"other-2025-01-01,{BETA}",
        "x-trace": "1",
    }
    assert merged["extra_body"] == {
        "metadata": {"user_id": "u"},
        "context_management": {
            "edits": [
                {
                    "type": "clear_tool_uses_20250919",
                    "trigger": {"type": "input_tokens", "value": 100},
                    "keep": {"type": "tool_uses", "value": 3},
                    "clear_at_least": {"type": "input_tokens", "value": 50},
                    "exclude_tools": ["Skill"],
                }
            ]
        },
    }
    assert merged["temperature"] == 0.5
    assert extra["extra_headers"]["anthropic-beta"] == "other-2025-01-01"  # not edited in place
    assert with_server_edit(merged, edit) == merged  # applying it again changes nothing


def test_applied_edits_are_summed_per_strategy() -> None:
    edits = [
        {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3, "cleared_input_tokens": 900},
        {"type": "clear_thinking_20251015", "cleared_thinking_turns": 2, "cleared_input_tokens": 5},
    ]
    cleared = server_clearing(edits)
    assert (cleared.tool_uses, cleared.input_tokens) == (3, 900)
    assert server_clearing([]) == server_clearing([{"type": "clear_tool_uses_20250919"}])


# -- which results the API cleared -------------------------------------------------------


def round_trip(index: int, name: str, path: str = "") -> list[Message]:
    tool_input = {"file_path": path} if path else {}
    use = {"type": "tool_use", "id": f"t{index}", "name": name, "input": tool_input}
    return [
        Message(role="assistant", content=[use], kind="response"),
        Message(role="user", content=[tool_result_block(f"t{index}", "text")], kind="tool_result"),
    ]


def test_cleared_ids_follow_the_rule_oldest_first_without_kept_or_excluded() -> None:
    messages = [user_text("go")]
    for index, name in enumerate(["Read", "Skill", "Read", "Bash", "Read", "Read"]):
        messages += round_trip(index, name, f"f{index}.py" if name == "Read" else "")
    edit = ClearToolUses(0, 2, 0, ("Skill",))
    assert cleared_tool_use_ids(messages, 3, edit) == ["t0", "t2", "t3"]
    assert cleared_tool_use_ids(messages, 99, edit) == ["t0", "t2", "t3"]
    assert cleared_tool_use_ids(messages, 0, edit) == []


def test_a_file_counts_as_cleared_only_when_its_latest_read_was() -> None:
    messages = [user_text("go")]
    messages += round_trip(0, "Read", "a.py") + round_trip(1, "Read", "b.py")
    messages += round_trip(2, "Read", "a.py")
    assert cleared_read_paths(messages, ["t0", "t1"]) == ["b.py"]
    assert sorted(cleared_read_paths(messages, ["t0", "t1", "t2"])) == ["a.py", "b.py"]


# -- the switch --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "env", "expected"),
    [
        (None, {}, False),
        (True, {}, True),
        (False, {"CCX_SERVER_CONTEXT_EDITING": "1"}, True),
        (True, {"CCX_SERVER_CONTEXT_EDITING": "false"}, False),
        (True, {"CCX_SERVER_CONTEXT_EDITING": "0"}, False),
        (None, {"CCX_SERVER_CONTEXT_EDITING": "TRUE"}, True),
        (True, {"CCX_SERVER_CONTEXT_EDITING": ""}, True),
    ],
)
def test_the_environment_wins_over_the_setting(setting, env, expected) -> None:
    assert resolve_server_editing(setting, env) == (expected, [])


def test_unusable_values_are_ignored_with_a_warning() -> None:
    enabled, warnings = resolve_server_editing(True, {"CCX_SERVER_CONTEXT_EDITING": "maybe"})
    assert enabled is True and "CCX_SERVER_CONTEXT_EDITING" in warnings[0]
    enabled, warnings = resolve_server_editing("yes", {})
    assert enabled is False and "serverContextEditing" in warnings[0]


# -- the context manager with the API clearing -------------------------------------------


def server_setup(api: FakeApi, tmp_path, window: int, on: bool = True) -> Setup:
    setup = Setup(api, tmp_path, window=window, limits=ContextLimits(window, 64_000))
    setup.manager.server_editing = on
    return setup


async def test_off_the_requests_carry_neither_header_nor_edit(api: FakeApi, tmp_path) -> None:
    setup = server_setup(api, tmp_path, 200_000, on=False)
    api.add(*setup.read_script(2), text_reply("done"))
    await setup.agent.submit("read two")
    for request in api.requests:
        # Only the edit that keeps thinking blocks (the model's default, thinking on).
        assert request.body["context_management"] == {"edits": [CLEAR_THINKING]}
        assert request.context_editing.applied_edits == []


async def test_on_every_request_asks_the_api_to_clear_and_microcompact_stays_off(
    api: FakeApi, tmp_path
) -> None:
    setup = server_setup(api, tmp_path, 200_000)
    # Locally, a zero cache TTL would make every turn clear everything clearable ("time").
    setup.manager.config = MicrocompactConfig(cache_ttl_s=0.0)
    api.add(*setup.read_script(10), text_reply("done"))
    await setup.agent.submit("read them")
    expected = plan_server_edit(
        ContextLimits(200_000, 64_000),
        auto_enabled=True,
        tool_names=[t["name"] for t in setup.agent.tools_api],
        config=setup.manager.config,
    )
    for request in api.requests:
        assert BETA in request.headers["anthropic-beta"].split(",")
        assert request.body["context_management"] == {"edits": [CLEAR_THINKING, expected.to_api()]}
    assert not any(isinstance(e, Microcompacted) for e in setup.events)
    assert not any("[Cleared to save context" in r.all_text() for r in api.requests)


def script_long_reading(setup: Setup) -> list[Path]:
    """42 reads of ~2,100 tokens: on a 120K window the trigger is crossed around the 40th."""
    paths = []
    for index in range(42):
        paths.append(setup.repo / f"g{index:02d}.py")
        paths[-1].write_text(f"FACT_{index} = {index}\n" + "value = 1\n" * 600)
    setup.api.add(*[tool_reply(("Read", {"file_path": str(path)})) for path in paths])
    return paths


async def test_server_clearing_is_reported_once_counted_honestly_and_reads_come_back(
    api: FakeApi, tmp_path
) -> None:
    # Window 120,000: T = 83,000, C = 42,932, auto-compaction at 87,000.
    setup = server_setup(api, tmp_path, 120_000)
    edit = plan_server_edit(
        ContextLimits(120_000, 64_000),
        auto_enabled=True,
        tool_names=[t["name"] for t in setup.agent.tools_api],
    )
    assert (edit.trigger, edit.clear_at_least) == (83_000, 42_932)
    paths = script_long_reading(setup)
    api.add(tool_reply(("Read", {"file_path": str(paths[0])})), text_reply("done"))
    outcome = await setup.agent.submit("read every module")
    assert outcome.result == "done"
    edited = [r for r in api.requests if r.applied_edits]
    assert edited, [r.estimated_tokens for r in api.requests]
    assert all(r.context_editing.original_tokens > edit.trigger for r in edited)
    assert not setup.summaries()  # the API's clearing kept the context under the threshold
    reported = [e for e in setup.events if isinstance(e, Microcompacted)]
    assert reported and all(e.reason == SERVER_CLEARING for e in reported)
    # Reported when what the API clears changes, not on every request it clears again.
    assert len(reported) < len(edited)
    last = edited[-1].applied_edits[0]
    assert (reported[-1].cleared, reported[-1].tokens_freed) == (
        last["cleared_tool_uses"],
        last["cleared_input_tokens"],
    )
    # The count anchors on what the API saw after clearing, and the calibration is not
    # dragged down by the cleared tokens: the estimate of the full messages still fits.
    assert setup.manager.counter.calibration == pytest.approx(1.0, rel=0.05)
    sent = api.requests[-1].estimated_tokens
    assert setup.manager.count(setup.agent) == pytest.approx(sent, rel=0.05)
    assert sent < edited[-1].context_editing.original_tokens - edit.clear_at_least
    # g00's read was cleared by the API: reading it again returns its text, not "unchanged".
    first_read = setup.agent.messages[1].tool_uses()[0]["id"]
    assert first_read in api.requests[-1].cleared_tool_use_ids
    reread = api.requests[-1].messages[-1]["content"][0]["content"]
    assert "FACT_0 = 0" in reread, "a read the API cleared must not answer 'unchanged'"
    assert api.errors == [] and find_violations(setup.agent.messages) == []


async def test_the_summary_fork_sends_the_same_edit_and_reads_the_cleared_prefix(
    api: FakeApi, tmp_path
) -> None:
    setup = server_setup(api, tmp_path, 120_000)
    script_long_reading(setup)
    api.add(text_reply("done"))
    await setup.agent.submit("read every module")
    last = api.requests[-1]
    assert last.cleared_tool_use_ids
    api.on(lambda r: SUMMARY_MARK in r.last_user_text(), summary_reply)
    await setup.manager.compact(setup.agent)
    (summary,) = setup.summaries()
    assert summary.headers["anthropic-beta"] == last.headers["anthropic-beta"]
    assert summary.body["context_management"] == last.body["context_management"]
    # The API cleared the same results from the fork, so it read the cached cleared prefix.
    assert summary.cleared_tool_use_ids == last.cleared_tool_use_ids
    assert summary.billing.cache_read_input_tokens > 0.9 * last.estimated_tokens
    assert api.errors == []


def test_calibration_adds_back_what_the_api_cleared() -> None:
    from compaction.tokens import TokenCounter

    messages = [user_text("x" * 40_000)]  # 10,000 raw tokens
    response = Message(role="assistant", content=[{"type": "text", "text": "ok"}])
    usage = {"input_tokens": 7_000, "output_tokens": 10}
    skewed, honest = TokenCounter(calibration=1.0), TokenCounter(calibration=1.0)
    skewed.observe_response(messages, usage, response, 0.0)
    honest.observe_response(messages, usage, response, 0.0, cleared_input_tokens=3_000)
    assert skewed.calibration == pytest.approx(0.85)  # 7,000 seen for 10,000 drags it down
    assert honest.calibration == pytest.approx(1.0)
    assert honest.anchor is not None and honest.anchor.tokens == 7_010  # what the API saw
    assert math.isclose(honest.count([*messages, response], 0.0), 7_010, abs_tol=1)
