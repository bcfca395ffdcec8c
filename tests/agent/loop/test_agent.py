"""The agent loop in-process against the fake API: ordering, interrupts, recovery ladder."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import anthropic
import pytest

from agent.core.context_policy import NoContextPolicy
from agent.core.events import Event, Notice, ToolFinished, ToolStarted
from agent.core.invariants import find_violations
from agent.core.messages import INTERRUPTED_BY_USER, Message
from agent.loop.agent import Agent, AgentConfig, MaxTurnsReached
from agent.loop.tool_runner import ToolRunner
from agent.model.catalog import ModelLimits
from agent.model.client import ModelClient, PromptTooLongError, RetryPolicy
from agent.permissions.gate import PermissionGate
from tools.base import Tool, ToolContext, ToolParams, ToolResult
from tools.file_state import FileStateCache
from tools.registry import default_tools
from tools.shown_output import shown_output
from tui.fake_api import FakeApi, Fault, Stall, text_reply, tool_reply


class NapParams(ToolParams):
    seconds: float
    label: str = ""


class Nap(Tool):
    """A tool that sleeps, to observe ordering and cancellation."""

    name = "Nap"
    Params = NapParams
    is_mutating = False
    log: ClassVar[list[str]] = []

    @classmethod
    def description(cls) -> str:
        return "Sleep for a while."

    async def run(self, params: NapParams, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        self.log.append(f"start {params.label}")
        await asyncio.sleep(params.seconds)
        self.log.append(f"end {params.label}")
        return ToolResult(f"napped {params.label}")


class MutatingNap(Nap):
    name = "MutatingNap"
    is_mutating = True


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi() as server:
        yield server


@pytest.fixture
def events() -> list[Event]:
    return []


def make_agent(api: FakeApi, tmp_path: Path, events: list[Event], **config: Any) -> Agent:
    client = anthropic.AsyncAnthropic(base_url=api.url, api_key="test", max_retries=0)
    policy = RetryPolicy(max_attempts=config.pop("max_attempts", 10), base_delay_s=0.001)
    ctx = ToolContext(cwd=tmp_path, file_state=FileStateCache())
    gate = PermissionGate("bypassPermissions", [], [], [], cwd=tmp_path)
    tools: list[Tool] = [*default_tools(), Nap(), MutatingNap()]
    runner = ToolRunner(tools, ctx, gate, events.append)
    system = [{"type": "text", "text": "You are a test agent."}]
    reminder_sources = config.pop("reminder_sources", [])
    messages = config.pop("messages", None)
    return Agent(
        config=AgentConfig(**{"model": "claude-sonnet-5-5", **config}),
        client=ModelClient(client, policy, events.append),
        runner=runner,
        system=system,
        emit=events.append,
        reminder_sources=reminder_sources,
        messages=messages,
    )


async def test_read_only_calls_run_together_mutating_ones_alone(api, tmp_path, events) -> None:
    Nap.log.clear()
    api.add(
        tool_reply(
            ("Nap", {"seconds": 0.3, "label": "a"}),
            ("Nap", {"seconds": 0.3, "label": "b"}),
            ("MutatingNap", {"seconds": 0.05, "label": "m"}),
            ("Nap", {"seconds": 0.05, "label": "c"}),
        ),
        text_reply("done"),
    )
    agent = make_agent(api, tmp_path, events)
    outcome = await agent.submit("go")  # its wall time is measured by bench/speed_targets.py
    assert outcome.result == "done"
    assert Nap.log[:2] == ["start a", "start b"]  # b started before a ended: they overlapped
    assert Nap.log[2:] == ["end a", "end b", "start m", "end m", "start c", "end c"]
    results = api.requests[1].messages[-1]["content"]
    assert [b["content"] for b in results] == ["napped a", "napped b", "napped m", "napped c"]
    assert api.errors == []


async def test_interrupt_while_tools_run_keeps_finished_results(api, tmp_path, events) -> None:
    api.add(
        tool_reply(("Nap", {"seconds": 0.01, "label": "quick"}), ("MutatingNap", {"seconds": 30}))
    )
    agent = make_agent(api, tmp_path, events)
    task = asyncio.create_task(agent.submit("go"))
    while not any(isinstance(e, ToolStarted) and e.name == "MutatingNap" for e in events):
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    results = agent.messages[-1].content
    assert results[0]["content"] == "napped quick" and "is_error" not in results[0]
    assert results[1]["is_error"] and "interrupted" in results[1]["content"]
    assert INTERRUPTED_BY_USER in agent.messages[-1].text()
    assert find_violations(agent.messages) == []

    api.add(text_reply("ok"))
    assert (await agent.submit("continue")).result == "ok"
    assert api.errors == []


async def test_interrupt_while_streaming_leaves_no_partial_response(api, tmp_path, events) -> None:
    api.add(Stall(after_events=3, seconds=30))
    agent = make_agent(api, tmp_path, events)
    task = asyncio.create_task(agent.submit("go"))
    while not api.requests:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [m.role for m in agent.messages] == ["user", "user"]
    assert agent.messages[-1].text() == INTERRUPTED_BY_USER


async def test_max_tokens_escalates_once_then_nudges(api, tmp_path, events) -> None:
    api.add(
        text_reply("cut", stop_reason="max_tokens"),
        text_reply("still cut", stop_reason="max_tokens"),
        text_reply("and the rest"),
    )
    # A 4.5 model is asked for 32,000 first, its whole limit of 64,000 once cut off.
    agent = make_agent(api, tmp_path, events, model="claude-sonnet-4-5")
    outcome = await agent.submit("write a lot")
    assert outcome.result == "and the rest"
    assert [r.body["max_tokens"] for r in api.requests] == [32_000, 64_000, 64_000]
    budgets = [r.body["thinking"]["budget_tokens"] for r in api.requests]
    assert budgets == [31_999] * 3  # the budget stays below every max_tokens
    texts = [m.text() for m in agent.messages]
    assert "cut" not in texts  # the escalated retry replaced the first cut response
    assert texts[1] == "still cut" and "cut off" in texts[2]


async def test_overloaded_falls_back_to_another_model(api, tmp_path, events) -> None:
    api.add(Fault(529), Fault(529), text_reply("from haiku"))
    agent = make_agent(api, tmp_path, events, fallback_model="claude-haiku-5-5", max_attempts=2)
    outcome = await agent.submit("hi")
    assert outcome.result == "from haiku"
    assert [r.body["model"] for r in api.requests] == ["claude-sonnet-5-5"] * 2 + [
        "claude-haiku-5-5"
    ]
    assert any(isinstance(e, Notice) and "overloaded" in e.text for e in events)


async def test_prompt_too_long_surfaces_when_nothing_can_shrink(api, tmp_path, events) -> None:
    api.add(Fault.prompt_too_long(250_000, 200_000))
    agent = make_agent(api, tmp_path, events)
    with pytest.raises(PromptTooLongError) as info:
        await agent.submit("hi")
    assert info.value.gap == 50_000


async def test_max_turns(api, tmp_path, events) -> None:
    api.add(*[tool_reply(("Nap", {"seconds": 0})) for _ in range(3)])
    agent = make_agent(api, tmp_path, events, max_turns=2)
    with pytest.raises(MaxTurnsReached):
        await agent.submit("go")
    assert find_violations(agent.messages) == []


async def test_reminders_ride_on_the_next_user_message(api, tmp_path, events) -> None:
    notices = [["Note: a.py was changed on disk."]]
    api.add(tool_reply(("Nap", {"seconds": 0})), text_reply("ok"))
    agent = make_agent(
        api, tmp_path, events, reminder_sources=[lambda: notices.pop() if notices else []]
    )
    await agent.submit("go")
    first = api.requests[0].messages[0]["content"]
    assert first[0]["text"] == "go"
    assert "a.py was changed" in first[1]["text"] and "<system-reminder>" in first[1]["text"]


async def test_tool_events_carry_display_and_errors(api, tmp_path, events) -> None:
    api.add(tool_reply(("Read", {"file_path": str(tmp_path / "missing.txt")})), text_reply("ok"))
    agent = make_agent(api, tmp_path, events)
    await agent.submit("go")
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished[0].is_error and finished[0].name == "Read"
    assert "duration_s" in finished[0].meta


async def test_max_tokens_escalation_discards_the_cut_text(api, tmp_path, events) -> None:
    api.add(text_reply("cut", stop_reason="max_tokens"), text_reply("whole"))
    agent = make_agent(api, tmp_path, events, model="claude-sonnet-4-5")
    await agent.submit("write a lot")
    kinds = [e.type for e in events]
    assert kinds.count("response_discarded") == 1
    assert kinds.index("text_delta") < kinds.index("response_discarded")
    assert kinds.index("response_discarded") < kinds.index("request_started", 1)


async def test_output_limits_come_from_the_configured_source(api, tmp_path, events) -> None:
    api.add(text_reply("cut", stop_reason="max_tokens"), text_reply("whole"))
    agent = make_agent(api, tmp_path, events, limits=lambda _model: ModelLimits(100_000, 16_000))
    await agent.submit("write a lot")
    # Already at the model's whole limit: no escalation, the model is asked to go on.
    assert [r.body["max_tokens"] for r in api.requests] == [16_000, 16_000]
    assert "cut off" in agent.messages[2].text()


async def test_a_model_at_its_whole_limit_is_not_escalated(api, tmp_path, events) -> None:
    api.add(text_reply("cut", stop_reason="max_tokens"), text_reply("rest"))
    agent = make_agent(api, tmp_path, events)
    await agent.submit("write a lot")
    assert [r.body["max_tokens"] for r in api.requests] == [128_000, 128_000]


class ShrinkingPolicy(NoContextPolicy):
    def __init__(self) -> None:
        self.calls = 0

    async def on_prompt_too_long(self, agent, error) -> bool:
        self.calls += 1
        return True


async def test_prompt_too_long_asks_the_policy_up_to_three_times(api, tmp_path, events) -> None:
    api.add(*[Fault.prompt_too_long(250_000, 200_000) for _ in range(3)], text_reply("fits"))
    agent = make_agent(api, tmp_path, events)
    agent.policy = policy = ShrinkingPolicy()
    assert (await agent.submit("hi")).result == "fits"
    assert policy.calls == 3

    api.add(*[Fault.prompt_too_long(250_000, 200_000) for _ in range(4)])
    policy.calls = 0
    with pytest.raises(PromptTooLongError):
        await agent.submit("again")
    assert policy.calls == 3 and len(api.requests) == 8


async def test_a_failure_around_a_tool_still_answers_every_tool_use(api, tmp_path, events) -> None:
    """An exception escaping the runner (here: saving an "always" rule) leaves no tool_use open."""
    api.add(
        tool_reply(
            ("Nap", {"seconds": 0, "label": "a"}), ("Write", {"file_path": "x", "content": "y"})
        )
    )

    async def always(_request):
        return "always"

    def broken_remember(_rule):
        raise RuntimeError("settings exploded")

    agent = make_agent(api, tmp_path, events)
    agent.runner.gate = PermissionGate("default", [], [], [], cwd=tmp_path)
    agent.runner.ask, agent.runner.remember = always, broken_remember
    with pytest.raises(RuntimeError, match="settings exploded"):
        await agent.submit("go")
    assert find_violations(agent.messages) == []
    nap, write = agent.messages[-1].content[:2]
    assert nap["content"] == "napped a"
    assert write["is_error"] and "internal error" in write["content"]
    assert "settings exploded" in write["content"]
    assert INTERRUPTED_BY_USER not in agent.messages[-1].text()

    api.add(text_reply("ok"))
    assert (await agent.submit("continue")).result == "ok"
    assert api.errors == []


async def test_a_path_the_permission_check_cannot_take_is_an_error_result(tmp_path) -> None:
    events: list[Event] = []
    ctx = ToolContext(cwd=tmp_path, file_state=FileStateCache())
    gate = PermissionGate("default", [], [], [], cwd=tmp_path)
    runner = ToolRunner(default_tools(), ctx, gate, events.append)
    use = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/tmp/a\0b"}}
    results: dict[str, dict] = {}
    await runner.run([use], {}, results)
    assert results["t1"]["is_error"] and "NUL byte" in results["t1"]["content"]


# -- text that is not UTF-8 ----------------------------------------------------------------


async def test_a_tool_result_that_is_not_utf8_is_escaped_before_it_enters(
    api: FakeApi, tmp_path: Path, events: list[Event]
) -> None:
    (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_text("x")  # latin-1 name: not UTF-8
    shown = str(tmp_path / "caf\\xe9.txt")
    api.add(
        tool_reply(("Glob", {"pattern": "*.txt"}), ("Read", {"file_path": "caf\\xe9.txt"})),
        text_reply("seen"),
    )
    agent = make_agent(api, tmp_path, events)
    await agent.submit("list")
    assert api.errors == []
    glob, read = api.requests[1].messages[-1]["content"]
    assert glob["content"] == shown and read["content"] == "1\tx"
    finished = {e.name: e for e in events if isinstance(e, ToolFinished)}
    assert finished["Glob"].output_preview == shown
    assert finished["Read"].meta["path"] == shown  # what the user sees is escaped too


async def test_the_user_gets_a_whole_copy_of_a_result_the_model_gets_unchanged(
    api: FakeApi, tmp_path: Path, events: list[Event]
) -> None:
    (tmp_path / "big.txt").write_text("\n".join(f"line {i}" for i in range(1, 3001)))
    api.add(tool_reply(("Grep", {"pattern": "line", "path": "big.txt", "output_mode": "content"})))
    api.add(text_reply("seen"))
    agent = make_agent(api, tmp_path, events)
    await agent.submit("find")
    sent = api.requests[1].messages[-1]["content"][0]["content"]
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert finished.content == sent  # the model's copy is the event's content, untouched
    assert finished.output_preview == shown_output(sent)
    assert sent.count("\n") >= 200  # far beyond the 2,000 characters a preview once had
    first, last = sent.splitlines()[0], sent.splitlines()[-1]
    assert first in finished.output_preview and last in finished.output_preview


def test_the_users_copy_of_a_long_result_keeps_both_ends_and_says_what_is_left_out() -> None:
    text = "\n".join(f"row {i}" for i in range(1, 20_001))
    shown = shown_output(text, keep=1_000)
    assert shown.startswith("row 1\n") and shown.endswith("row 20000")
    middle = text[1_000:-1_000]
    assert f"… {middle.count(chr(10)) + 1:,} lines ({len(middle):,} characters) not kept" in shown
    assert len(shown) < 2_100
    assert shown_output("short", keep=1_000) == "short"


async def test_a_request_that_cannot_be_encoded_goes_out_escaped_and_heals_the_source(
    api: FakeApi, tmp_path: Path, events: list[Event], caplog: pytest.LogCaptureFixture
) -> None:
    api.add(text_reply("first"), text_reply("second"))
    # What escaping on entry cannot see: a conversation that starts with text never appended.
    restored = [
        Message(role="user", content=[{"type": "text", "text": "a\udcffb"}]),
        Message(role="assistant", content=[{"type": "text", "text": "ok"}]),
    ]
    agent = make_agent(api, tmp_path, events, messages=restored)
    agent.system = [{"type": "text", "text": "cwd: /home/\udce9"}]
    with caplog.at_level("WARNING"):
        await agent.submit("go")
        await agent.submit("again")
    assert api.errors == []
    assert api.requests[0].messages[0]["content"][0]["text"] == "a\\xffb"
    assert "cwd: /home/\\xe9" in api.requests[0].system_text()
    assert agent.messages[0].content[0]["text"] == "a\\xffb"  # healed, so it happens once
    warnings = [r for r in caplog.records if "not valid UTF-8" in r.getMessage()]
    assert len(warnings) == 1
