"""The loop sends nothing the API refuses: a blank prompt, blank tool output, a response left
with nothing ccx knows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from agent.core.events import Event
from agent.loop.agent import Agent, AgentConfig, NothingToSend
from agent.loop.tool_runner import ToolRunner
from agent.model.client import ModelClient, RetryPolicy
from agent.permissions.gate import PermissionGate
from tests.request_rules import refusals
from tools.base import Tool, ToolContext, ToolParams, ToolResult
from tools.file_state import FileStateCache
from tui.fake_api import FakeApi, Reply, text_reply, tool_reply


class ShowParams(ToolParams):
    kind: str


class Show(Tool[ShowParams]):
    """Output as a tool may give it: blank text, an empty list, an SVG between blank texts."""

    name = "Show"
    is_mutating = False

    @classmethod
    def description(cls) -> str:
        return "Show something."

    async def run(self, params: ShowParams, ctx: ToolContext) -> ToolResult:
        svg = {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml",
                                           "data": "PHN2Zy8+"}}  # fmt: skip
        outputs: dict[str, Any] = {
            "blank": " \n ",
            "nothing": [],
            "svg": [{"type": "text", "text": ""}, svg, {"type": "text", "text": " "}],
        }
        return ToolResult(outputs[params.kind])


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi() as server:
        yield server


def make_agent(api: FakeApi, tmp_path: Path, events: list[Event]) -> Agent:
    client = anthropic.AsyncAnthropic(base_url=api.url, api_key="test", max_retries=0)
    ctx = ToolContext(cwd=tmp_path, file_state=FileStateCache())
    gate = PermissionGate("bypassPermissions", [], [], [], cwd=tmp_path)
    runner = ToolRunner([Show()], ctx, gate, events.append)
    return Agent(
        config=AgentConfig(model="claude-sonnet-5-5"),
        client=ModelClient(client, RetryPolicy(max_attempts=2, base_delay_s=0.001), events.append),
        runner=runner,
        system=[{"type": "text", "text": "You are a test agent."}],
        emit=events.append,
    )


@pytest.mark.parametrize(
    "prompt", ["", "   ", "\n\t", [{"type": "text", "text": ""}, {"type": "text", "text": " "}]]
)
async def test_a_prompt_without_words_is_not_sent_nor_kept(
    api: FakeApi, tmp_path: Path, prompt: Any
) -> None:
    agent = make_agent(api, tmp_path, [])
    with pytest.raises(NothingToSend, match="empty or only whitespace"):
        await agent.submit(prompt)
    assert api.requests == [] and list(agent.messages) == []
    api.add(text_reply("fine"))
    assert (await agent.submit("now with words")).result == "fine"  # the session goes on


async def test_blank_blocks_of_a_prompt_are_left_out(api: FakeApi, tmp_path: Path) -> None:
    api.add(text_reply("ok"))
    agent = make_agent(api, tmp_path, [])
    await agent.submit([{"type": "text", "text": " "}, {"type": "text", "text": "real words"}])
    assert api.requests[0].messages[0]["content"][0]["text"] == "real words"
    assert refusals(api.requests[0].body) == []


async def test_blank_tool_output_becomes_words_and_refused_images_are_described(
    api: FakeApi, tmp_path: Path
) -> None:
    api.add(
        tool_reply(("Show", {"kind": "blank"}), ("Show", {"kind": "nothing"}),
                   ("Show", {"kind": "svg"})),
        Reply(content=[{"type": "brand_new_block"}]),  # nothing ccx knows: an empty reply,
        text_reply("shown"),  # asked again (tests/agent/loop/test_empty_reply.py)
    )  # fmt: skip
    agent = make_agent(api, tmp_path, [])
    assert (await agent.submit("show")).result == "shown"
    api.add(text_reply("again"))
    assert (await agent.submit("once more")).result == "again"
    assert [problem for r in api.requests for problem in refusals(r.body)] == []
    assert api.errors == []
    blank, nothing, svg = (b["content"] for b in api.requests[1].messages[2]["content"])
    assert blank == nothing == "(no output)"
    assert svg[0]["type"] == "text" and "image/svg+xml" in svg[0]["text"]
    assert api.requests[2].messages == api.requests[1].messages  # the same request again
    assert api.requests[3].messages[3]["content"] == [{"type": "text", "text": "shown"}]
