"""The real Agent SDK (`claude-agent-sdk`) drives ccx as its CLI, against the fake API.

The SDK starts ``ccx`` exactly as it starts Claude Code (stream-json both
ways, ``--verbose``, an ``initialize`` control request first) and parses every
line ccx prints with its own message parser.
"""

from __future__ import annotations

import asyncio
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    query,
)

from tests.e2e.conftest import CCX, Ccx
from tui.fake_api import text_reply, tool_reply


def sdk_options(ccx: Ccx, **kw: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(cli_path=CCX, cwd=str(ccx.repo), env=dict(ccx.env), **kw)


def test_query_with_tool_calls_yields_init_assistants_and_a_success(ccx: Ccx) -> None:
    app = str(ccx.repo / "src" / "app.py")
    ccx.api.add(tool_reply(("Read", {"file_path": app})), text_reply("It sets RETRY_LIMIT."))

    async def collect() -> list[Any]:
        return [m async for m in query(prompt="what does app.py set?", options=sdk_options(ccx))]

    messages = asyncio.run(collect())
    init = messages[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert "Read" in init.data["tools"]
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    assert isinstance(assistants[0].content[0], ToolUseBlock)
    assert assistants[0].content[0].name == "Read" and assistants[0].model
    results = [b for m in messages if isinstance(m, UserMessage) for b in m.content]
    assert isinstance(results[0], ToolResultBlock) and "RETRY_LIMIT" in str(results[0].content)
    assert isinstance(assistants[-1].content[0], TextBlock)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert not result.is_error and result.result == "It sets RETRY_LIMIT."
    assert result.session_id == init.data["session_id"]
    assert ccx.api.requests[0].last_user_text() == "what does app.py set?"


def test_client_session_keeps_the_conversation_across_turns(ccx: Ccx) -> None:
    ccx.api.add(text_reply("Noted: blue."), text_reply("You said blue."))

    async def talk() -> list[ResultMessage]:
        results = []
        async with ClaudeSDKClient(options=sdk_options(ccx)) as client:
            for prompt in ("remember: blue", "what did I say?"):
                await client.query(prompt)
                async for message in client.receive_response():
                    if isinstance(message, ResultMessage):
                        results.append(message)
        return results

    first, second = asyncio.run(talk())
    assert (first.result, second.result) == ("Noted: blue.", "You said blue.")
    assert first.session_id == second.session_id
    texts = [m["content"] for m in ccx.api.requests[1].messages if m["role"] == "user"]
    assert "remember: blue" in str(texts[0]) and "what did I say?" in str(texts[-1])
    assert len(ccx.transcripts()) == 1  # one process, one session


def test_interrupt_stops_the_turn_and_the_session_goes_on(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Bash", {"command": "sleep 30"})), text_reply("Back again."))
    options = sdk_options(ccx, allowed_tools=["Bash(sleep *)"])

    async def interrupt_then_ask() -> tuple[ResultMessage, ResultMessage]:
        async with ClaudeSDKClient(options=options) as client:
            await client.query("wait a while")
            interrupted = None
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage) and any(
                    isinstance(b, ToolUseBlock) for b in message.content
                ):
                    await client.interrupt()
                if isinstance(message, ResultMessage):
                    interrupted = message
            await client.query("are you there?")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    assert interrupted is not None
                    return interrupted, message
        raise AssertionError("no result")

    interrupted, after = asyncio.run(asyncio.wait_for(interrupt_then_ask(), 60))
    assert interrupted.is_error and "Interrupted" in (interrupted.result or "")
    assert not after.is_error and after.result == "Back again."
    last = ccx.api.requests[-1].messages
    answered = [b for m in last if m["role"] == "user" for b in m["content"] if isinstance(b, dict)]
    assert any(b.get("type") == "tool_result" for b in answered)  # the interrupted call answered


def test_permission_callback_decides_each_tool_call(ccx: Ccx) -> None:
    ccx.api.add(
        tool_reply(("Bash", {"command": "mkdir made && echo allowed-run"})),
        tool_reply(("Write", {"file_path": str(ccx.repo / "new.txt"), "content": "x"})),
        text_reply("Done."),
    )
    asked: list[tuple[str, dict[str, Any]]] = []

    async def decide(name: str, tool_input: dict[str, Any], _context: Any) -> Any:
        asked.append((name, tool_input))
        if name == "Bash":
            return PermissionResultAllow()
        return PermissionResultDeny(message="not this file")

    async def prompts() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": "run and write"}}

    async def run() -> list[Any]:
        options = sdk_options(ccx, can_use_tool=decide)
        return [m async for m in query(prompt=prompts(), options=options)]

    messages = asyncio.run(asyncio.wait_for(run(), 60))
    assert [name for name, _input in asked] == ["Bash", "Write"]
    assert asked[0][1]["command"] == "mkdir made && echo allowed-run"
    assert (ccx.repo / "made").is_dir()
    results = [b for m in messages if isinstance(m, UserMessage) for b in m.content]
    assert "allowed-run" in str(results[0].content) and not results[0].is_error
    assert results[1].is_error
    assert not (ccx.repo / "new.txt").exists()
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Done."
