"""The context manager in a real loop against the fake API: auto, manual, partial, reactive, undo."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from agent.api import ModelClient, RetryPolicy
from agent.events import CompactionFailed, CompactionFinished, Event, Microcompacted, Notice
from agent.fake_api import FakeApi, Fault, text_reply, tool_reply
from agent.invariants import find_violations
from agent.loop import Agent, AgentConfig
from agent.messages import Message, user_text
from agent.permissions import PermissionGate
from agent.tool_runner import ToolRunner
from compaction.full import CompactionError
from compaction.grouping import drop_oldest_groups
from compaction.manager import CompactionServices, ContextFullError, ContextManager
from compaction.microcompact import MicrocompactConfig
from compaction.session_memory import SessionMemory, SessionMemoryResult
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from compaction.thresholds import ContextLimits, WindowConfig
from tools.base import ToolContext
from tools.file_state import FileStateCache, normalize_path
from tools.registry import default_tools

MODEL = "claude-sonnet-5-5"
LIMITS = ContextLimits(200_000, 64_000)


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi() as server:
        yield server


class Hooks:
    def __init__(self, block: bool = False, interrupt_session_start: bool = False) -> None:
        self.block = block
        self.interrupt_session_start = interrupt_session_start
        self.calls: list[tuple[str, Any]] = []
        self.payloads: list[dict[str, Any]] = []

    async def run(self, event: str, value: Any, payload: dict[str, Any]) -> Any:
        self.calls.append((event, value))
        self.payloads.append(payload)
        if event == "SessionStart" and self.interrupt_session_start:
            raise asyncio.CancelledError  # Esc while the hook runs
        outcome = type("Outcome", (), {})()
        outcome.blocked = self.block and event == "PreCompact"
        outcome.block_reason = "not now"
        outcome.messages = []
        outcome.additional_context = ["hook says hello"] if event == "SessionStart" else []
        return outcome


class Setup:
    def __init__(
        self,
        api: FakeApi,
        tmp_path: Path,
        window: int = 40_000,
        hooks: Hooks | None = None,
        limits: ContextLimits = LIMITS,
        session_memory: SessionMemory | None = None,
    ):
        self.api = api
        self.repo = tmp_path / "repo"
        self.repo.mkdir(parents=True)
        for index in range(12):
            (self.repo / f"m{index:02d}.py").write_text(
                f"FACT_{index} = {index}\n" + "value = 1\n" * 600
            )
        self.events: list[Event] = []
        self.file_state = FileStateCache()
        ctx = ToolContext(
            cwd=self.repo, file_state=self.file_state, session_dir=tmp_path / "session"
        )
        gate = PermissionGate("bypassPermissions", [], [], [], cwd=self.repo)
        runner = ToolRunner(default_tools(), ctx, gate, self.events.append)
        client = anthropic.AsyncAnthropic(base_url=api.url, api_key="test", max_retries=0)
        self.agent = Agent(
            config=AgentConfig(model=MODEL),
            client=ModelClient(
                client, RetryPolicy(max_attempts=2, base_delay_s=0.001), self.events.append
            ),
            runner=runner,
            system=[{"type": "text", "text": "You are a test agent."}],
            emit=self.events.append,
        )
        self.hooks = hooks
        services = CompactionServices(
            file_state=self.file_state,
            invoked_skills=lambda: [("deploy", "/skills/deploy/SKILL.md", "Step 1. Build.\n" * 10)],
            plan=lambda: ("/plans/p.md", "1. read\n2. fix"),
            run_hook=hooks.run if hooks else None,
            resolve_path=lambda path: normalize_path(ctx.resolve(path)),  # as context_setup does
        )
        self.manager = ContextManager(
            limits_for=lambda model: limits,
            window=WindowConfig(window, True, True, "cli"),
            services=services,
            emit=self.events.append,
            session_memory=session_memory,
        )
        self.agent.policy = self.manager

    def read_script(self, count: int) -> list[Any]:
        return [
            tool_reply(("Read", {"file_path": str(self.repo / f"m{i:02d}.py")}))
            for i in range(count)
        ]

    def summaries(self) -> list[Any]:
        return [r for r in self.api.requests if SUMMARY_MARK in r.last_user_text()]

    def main_requests(self) -> list[Any]:
        return [r for r in self.api.requests if SUMMARY_MARK not in r.last_user_text()]


def summary_reply(_request: Any) -> Any:
    return text_reply(
        "<analysis>scratch</analysis><summary>1. Primary request: read all modules.</summary>"
    )


async def test_auto_compaction_at_the_threshold_keeps_request_and_recent_files(
    api, tmp_path
) -> None:
    setup = Setup(api, tmp_path, window=40_000)
    setup.manager.config = MicrocompactConfig(keep_recent_files=100)  # leave it all to compaction
    api.on(lambda r: SUMMARY_MARK in r.last_user_text(), summary_reply)
    api.add(*setup.read_script(12), text_reply("done"))
    outcome = await setup.agent.submit("Read every module and report FACT values.")
    assert outcome.result == "done"
    finished = [e.record for e in setup.events if isinstance(e, CompactionFinished)]
    assert finished and all(r["trigger"] == "auto" for r in finished)
    first = finished[0]
    assert first["tokens_after"] < first["tokens_before"]
    assert first["restored"]["files"] and first["restored"]["skills"] == ["deploy"]
    assert first["restored"]["plan"] == ["/plans/p.md"]
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
    assert record["trigger"] == "manual" and record["summary"] == "kept FACT_0 and FACT_1"
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
    assert record["kind"] == "partial_up_to" and record["messages_kept"] >= 3
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
    setup.manager.config = MicrocompactConfig(keep_recent_files=100)
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


async def test_prompt_too_long_triggers_reactive_compaction(api, tmp_path) -> None:
    setup = Setup(api, tmp_path, window=200_000)
    api.add(*setup.read_script(2), Fault.prompt_too_long(210_000, 200_000))
    api.add(text_reply("<summary>short</summary>"), text_reply("answered after compaction"))
    outcome = await setup.agent.submit("read and answer")
    assert outcome.result == "answered after compaction"
    record = next(e.record for e in setup.events if isinstance(e, CompactionFinished))
    assert record["trigger"] == "reactive"
    assert api.errors == []


async def test_summary_request_too_long_drops_oldest_rounds(api, tmp_path) -> None:
    setup = Setup(api, tmp_path)
    api.add(*setup.read_script(6), text_reply("ok"))
    await setup.agent.submit("read six")
    api.add(Fault.prompt_too_long(60_000, 50_000), text_reply("<summary>after dropping</summary>"))
    record = await setup.manager.compact(setup.agent)
    assert record["attempts"] == 2 and record["dropped_messages"] > 0
    retry = api.requests[-1]
    assert retry.messages[0]["role"] == "user" and api.errors == []


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
    assert marker.startswith("[Cleared to save context: output of Bash `seq 1 6000`")
    saved = marker.split("Saved in full at ")[1].split(";")[0]
    assert saved.startswith(str(session_dir)) and Path(saved).read_text().splitlines()[-1] == "6000"


# -- undo -------------------------------------------------------------------------------


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
    assert record["last_uuid"] == setup.agent.messages[-1].uuid  # for resume, in the boundary
    await setup.agent.submit("a later question")
    later = setup.agent.messages[-2:]
    setup.agent.messages.insert(0, user_text("[repaired]", kind="meta"))  # a repair at the head
    assert setup.manager.undo(setup.agent)
    assert setup.agent.messages == [*before, *later]

    api.add(text_reply("<summary>s2</summary>"), text_reply("answer"))
    await setup.manager.compact(setup.agent)
    await setup.agent.submit("another question")
    # A prompt-too-long retry drops the oldest rounds, and with them the summary and restored files.
    trimmed = drop_oldest_groups(setup.agent.messages, None)
    assert trimmed is not None
    setup.agent.messages[:] = trimmed
    assert not setup.manager.undo(setup.agent)
    assert setup.agent.messages == trimmed


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
    assert record["truncated"] and record["summary"] == "1. Primary request: read the"
    assert any(isinstance(e, Notice) and "cut at the output limit" in e.text for e in setup.events)
    api.add(text_reply("more"), text_reply("<analysis>long thoughts", stop_reason="max_tokens"))
    await setup.agent.submit("more")
    before = list(setup.agent.messages)
    with pytest.raises(CompactionError, match="output limit"):
        await setup.manager.compact(setup.agent)
    assert setup.agent.messages == before


# -- prompt too long --------------------------------------------------------------------


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
    assert record["trigger"] == "reactive"  # the session log keeps the real cause
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

    async def try_compact(self, messages: list[Message]) -> SessionMemoryResult | None:
        self.calls += 1
        return SessionMemoryResult("Notes: the modules were read.", len(messages) - self.keep_last)


async def test_session_memory_result_over_the_threshold_is_never_committed(api, tmp_path) -> None:
    hooks = Hooks()
    notes = Notes(keep_last=10_000)  # keeps everything: still over the threshold
    setup = Setup(api, tmp_path, window=40_000, hooks=hooks, session_memory=notes)
    setup.manager.config = MicrocompactConfig(keep_recent_files=100)
    records: list[dict[str, Any]] = []
    setup.manager.services.session = type(
        "S",
        (),
        {
            "folder": None,
            "path": tmp_path / "t.jsonl",
            "append_record": lambda self, r: records.append(r),
            "append_message": lambda self, m: None,
        },
    )()
    api.on(lambda r: SUMMARY_MARK in r.last_user_text(), summary_reply)
    api.add(*setup.read_script(12), text_reply("done"))
    await setup.agent.submit("Read every module.")
    assert notes.calls >= 1
    finished = [e.record["kind"] for e in setup.events if isinstance(e, CompactionFinished)]
    assert finished and set(finished) == {"full"}
    boundaries = [r["kind"] for r in records if r["type"] == "compact_boundary"]
    assert boundaries == finished and not any(r["type"] == "compact_undo" for r in records)
    assert [c[0] for c in hooks.calls].count("SessionStart") == len(finished)
    assert len(setup.manager.compactor.history) == len(finished)


async def test_session_memory_under_the_threshold_replaces_the_summary_call(api, tmp_path) -> None:
    notes = Notes(keep_last=2)
    setup = Setup(api, tmp_path, window=40_000, session_memory=notes)
    setup.manager.config = MicrocompactConfig(keep_recent_files=100)
    api.add(*setup.read_script(12), text_reply("done"))
    outcome = await setup.agent.submit("Read every module.")
    assert outcome.result == "done" and notes.calls >= 1
    finished = [e.record for e in setup.events if isinstance(e, CompactionFinished)]
    assert finished and {r["kind"] for r in finished} == {"session_memory"}
    assert setup.summaries() == [] and api.errors == []
    assert "Notes: the modules were read." in api.requests[-1].all_text()
