"""The context manager in a real loop against the fake API: auto, manual, partial, microcompact."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.events import CompactionFailed, CompactionFinished, Microcompacted, Notice
from agent.core.invariants import find_violations
from compaction.full import CompactionError
from compaction.manager import ContextFullError
from compaction.microcompact import MicrocompactConfig
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from compaction.thresholds import ContextLimits
from tests.compaction.manager_harness import Hooks, Setup, summary_reply
from tui.fake_api import text_reply, tool_reply


async def test_auto_compaction_at_the_threshold_keeps_request_and_recent_files(
    api, tmp_path
) -> None:
    setup = Setup(api, tmp_path, window=40_000)
    setup.manager.config = MicrocompactConfig(
        keep_recent_files=100, read_budget=1.0
    )  # leave it all to compaction
    api.on(lambda r: SUMMARY_MARK in r.last_user_text(), summary_reply)
    api.add(*setup.read_script(12), text_reply("done"))
    outcome = await setup.agent.submit("Read every module and report FACT values.")
    assert outcome.result == "done"
    finished = [e.record for e in setup.events if isinstance(e, CompactionFinished)]
    assert finished and all(r.trigger == "auto" for r in finished)
    first = finished[0]
    assert first.tokens_after < first.tokens_before
    assert first.restored["files"] and first.restored["skills"] == ["deploy"]
    assert first.restored["plan"] == ["/plans/p.md"]
    summary_request = setup.summaries()[0]
    main_before = setup.main_requests()[0]
    assert (
        summary_request.body["system"] == main_before.body["system"]
    )  # the fork shares the prefix
    assert summary_request.body["tools"] == main_before.body["tools"]
    assert not any(b.get("type") == "tool_use" for b in summary_request.messages[-1]["content"])
    after = next(r for r in setup.main_requests() if r.received_at > summary_request.received_at)
    text = after.all_text()
    assert "Read every module and report FACT values." in text  # verbatim
    assert "1. Primary request: read all modules." in text and "scratch" not in text
    assert "Continue the work from where it stopped" in text
    assert "FACT_" in text and "re-read from disk" in text
    assert api.errors == []
    assert find_violations(setup.agent.messages) == []


async def test_microcompact_clears_reads_and_a_reread_returns_content(api, tmp_path) -> None:
    setup = Setup(api, tmp_path, window=200_000)
    setup.manager.last_response_at = None
    api.add(*setup.read_script(8))
    api.add(tool_reply(("Read", {"file_path": str(setup.repo / "m00.py")})), text_reply("ok"))
    setup.manager.config = type(setup.manager.config)(cache_ttl_s=0.0)  # every gap counts as cold
    await setup.agent.submit("go")
    cleared = [e for e in setup.events if isinstance(e, Microcompacted)]
    assert cleared and cleared[0].reason == "time"
    last_result = api.requests[-1].messages[-1]["content"][0]["content"]
    assert "FACT_0 = 0" in last_result, "a cleared read must not answer 'unchanged'"


async def test_manual_compact_with_instructions_and_undo(api, tmp_path) -> None:
    setup = Setup(api, tmp_path)
    api.add(*setup.read_script(2), text_reply("read two"))
    await setup.agent.submit("read two modules")
    before = list(setup.agent.messages)
    api.add(text_reply("<summary>kept FACT_0 and FACT_1</summary>"))
    record = await setup.manager.compact(setup.agent, instructions="keep every FACT value")
    assert "keep every FACT value" in api.requests[-1].last_user_text()
    assert record.trigger == "manual" and record.summary == "kept FACT_0 and FACT_1"
    assert [m.kind for m in setup.agent.messages] == ["summary", "attachment"]
    assert (
        "Continue the work" not in setup.agent.messages[0].text()
    )  # manual: no auto-continue nudge
    assert setup.manager.undo(setup.agent)
    assert setup.agent.messages == before
    assert not setup.manager.undo(setup.agent)


async def test_partial_compaction_keeps_recent_rounds_verbatim(api, tmp_path) -> None:
    setup = Setup(api, tmp_path)
    api.add(*setup.read_script(4), text_reply("read four"))
    await setup.agent.submit("read four")
    last_two = setup.agent.messages[-3:]
    api.add(text_reply("<summary>older part</summary>"))
    record = await setup.manager.compact(setup.agent, partial="up_to", keep_rounds=2)
    assert record.kind == "partial_up_to" and record.messages_kept >= 3
    messages = setup.agent.messages
    assert messages[0].kind == "summary" and messages[1 : 1 + len(last_two)][-len(last_two) :]
    assert all(m in messages for m in last_two)
    assert find_violations(messages) == []
    # The summary request saw only the older part.
    assert "read four" not in [
        b.get("text") for m in api.requests[-1].messages[-3:] for b in m["content"]
    ]


async def test_a_summary_that_calls_a_tool_fails_and_three_failures_open_the_breaker(
    api, tmp_path
) -> None:
    setup = Setup(api, tmp_path, window=40_000)
    setup.manager.config = MicrocompactConfig(keep_recent_files=100, read_budget=1.0)
    api.on(
        lambda r: SUMMARY_MARK in r.last_user_text(),
        lambda r: tool_reply(("Read", {"file_path": "x"})),
    )
    api.add(*setup.read_script(12), text_reply("done"))
    with pytest.raises(
        ContextFullError, match="/compact"
    ):  # past the blocking limit, nothing may compact
        await setup.agent.submit("Read every module.")
    failures = [e for e in setup.events if isinstance(e, CompactionFailed)]
    assert len(failures) == 3 and "tool" in failures[0].reason
    assert setup.manager.circuit_open
    state = setup.manager.state(setup.agent)
    assert state.circuit_open and state.consecutive_failures == 3
    assert len(setup.summaries()) == 3  # no fourth attempt


async def test_pre_compact_hook_can_block_and_session_start_output_is_restored(
    api, tmp_path
) -> None:
    blocking = Setup(api, tmp_path / "a", hooks=Hooks(block=True))
    api.add(*blocking.read_script(1), text_reply("ok"))
    await blocking.agent.submit("read")
    with pytest.raises(CompactionError, match="not now"):
        await blocking.manager.compact(blocking.agent)

    hooks = Hooks()
    setup = Setup(api, tmp_path / "b", hooks=hooks)
    api.add(*setup.read_script(1), text_reply("ok"), text_reply("<summary>s</summary>"))
    await setup.agent.submit("read")
    await setup.manager.compact(setup.agent)
    assert [c[0] for c in hooks.calls] == ["PreCompact", "SessionStart", "PostCompact"]
    assert "hook says hello" in setup.agent.messages[-1].text()


async def test_large_cleared_outputs_are_saved_and_the_marker_names_the_file(api, tmp_path) -> None:
    setup = Setup(api, tmp_path)
    setup.manager.config = MicrocompactConfig(cache_ttl_s=0.0, keep_recent_results=1)
    session_dir = tmp_path / "session-folder"
    setup.manager.services.session = type(
        "S",
        (),
        {
            "folder": session_dir,
            "path": tmp_path / "t.jsonl",
            "append_record": lambda self, r: None,
        },
    )()
    api.add(
        tool_reply(("Bash", {"command": "seq 1 6000"})),
        tool_reply(("Bash", {"command": "echo small"})),
        tool_reply(("Bash", {"command": "echo again"})),
        text_reply("ok"),
    )
    await setup.agent.submit("run things")
    marker = api.requests[-1].messages[2]["content"][0]["content"]
    # The call beside the marker names the command; the marker names only the saved file.
    assert marker.startswith("[Cleared to save context: output (6000 lines). Saved in full at ")
    assert "seq 1 6000" not in marker
    saved = marker.split("Saved in full at ")[1].split(";")[0]
    assert saved.startswith(str(session_dir)) and Path(saved).read_text().splitlines()[-1] == "6000"


# -- undo -------------------------------------------------------------------------------


# -- microcompact and the file-state cache ----------------------------------------------


async def test_microcompact_keeps_the_file_lru_order_and_records_no_reads(api, tmp_path) -> None:
    setup = Setup(api, tmp_path, window=200_000)
    setup.manager.config = MicrocompactConfig(cache_ttl_s=0.0, keep_recent_files=2)
    heard: list[str] = []
    setup.file_state.add_listener(heard.append)
    api.add(*setup.read_script(6), text_reply("ok"))
    await setup.agent.submit("go")
    assert any(isinstance(e, Microcompacted) for e in setup.events)
    paths = [str(setup.repo / f"m{i:02d}.py") for i in range(6)]
    assert setup.file_state.paths() == paths  # clearing is not a use of the file
    assert heard == paths  # one transcript record per read, none for clearing
    assert setup.file_state.peek(paths[0]).in_context is False  # type: ignore[union-attr]


async def test_relative_read_paths_are_cleared_against_the_session_directory(api, tmp_path) -> None:
    setup = Setup(api, tmp_path, window=200_000)
    assert Path.cwd() != setup.repo
    setup.manager.config = MicrocompactConfig(cache_ttl_s=0.0)  # every gap counts as cold
    api.add(*[tool_reply(("Read", {"file_path": f"m{i:02d}.py"})) for i in range(8)])
    api.add(tool_reply(("Read", {"file_path": "m00.py"})), text_reply("ok"))
    await setup.agent.submit("go")
    assert any(isinstance(e, Microcompacted) for e in setup.events)
    last_result = api.requests[-1].messages[-1]["content"][0]["content"]
    assert "FACT_0 = 0" in last_result, "a cleared read must not answer 'unchanged'"


# -- the summary ------------------------------------------------------------------------


async def test_a_summary_cut_at_the_output_limit_warns_and_one_with_nothing_fails(
    api, tmp_path
) -> None:
    setup = Setup(api, tmp_path, limits=ContextLimits(200_000, 8_000))
    api.add(*setup.read_script(1), text_reply("ok"))
    await setup.agent.submit("read")
    api.add(text_reply("<summary>1. Primary request: read the", stop_reason="max_tokens"))
    record = await setup.manager.compact(setup.agent)
    assert api.requests[-1].body["max_tokens"] == 8_000  # never above the model's output limit
    assert record.truncated and record.summary == "1. Primary request: read the"
    assert any(isinstance(e, Notice) and "cut at the output limit" in e.text for e in setup.events)
    api.add(text_reply("more"), text_reply("<analysis>long thoughts", stop_reason="max_tokens"))
    await setup.agent.submit("more")
    before = list(setup.agent.messages)
    with pytest.raises(CompactionError, match="output limit"):
        await setup.manager.compact(setup.agent)
    assert setup.agent.messages == before


# -- prompt too long --------------------------------------------------------------------
