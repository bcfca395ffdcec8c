"""The real Agent SDK's options and control protocol with ccx as its CLI, against the fake API.

Permission answers that rewrite or deny, SDK hooks (HookMatcher callbacks
answered through ``hook_callback``), ``get_context_usage``, structured output,
the budget, partial messages and hook events, each as the SDK's own
``query()`` / ``ClaudeSDKClient`` sees them.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookEventMessage,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultError,
    ResultMessage,
    StreamEvent,
    UserMessage,
    query,
)
from claude_agent_sdk.types import PermissionRuleValue, PermissionUpdate

from tests.e2e.conftest import CCX, Ccx
from tui.fake_api import text_reply, tool_reply


def sdk_options(ccx: Ccx, **kw: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(cli_path=CCX, cwd=str(ccx.repo), env=dict(ccx.env), **kw)


async def one_prompt(text: str) -> Any:
    yield {"type": "user", "message": {"role": "user", "content": text}}


def run_query(ccx: Ccx, prompt: Any, **kw: Any) -> list[Any]:
    async def collect() -> list[Any]:
        return [m async for m in query(prompt=prompt, options=sdk_options(ccx, **kw))]

    return asyncio.run(asyncio.wait_for(collect(), 90))


def tool_results(messages: list[Any]) -> list[Any]:
    return [b for m in messages if isinstance(m, UserMessage) for b in m.content]


def test_can_use_tool_rewrites_the_input(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Bash", {"command": "touch original.txt"})), text_reply("Done."))
    asked: list[str] = []

    async def rewrite(name: str, tool_input: dict[str, Any], _context: Any) -> Any:
        asked.append(tool_input["command"])
        return PermissionResultAllow(updated_input={**tool_input, "command": "touch rewritten.txt"})

    messages = run_query(ccx, one_prompt("run it"), can_use_tool=rewrite)
    assert asked == ["touch original.txt"]
    assert (ccx.repo / "rewritten.txt").exists() and not (ccx.repo / "original.txt").exists()
    assert not tool_results(messages)[0].is_error
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Done."


def test_an_allow_with_updated_permissions_adds_the_rule_for_the_session(ccx: Ccx) -> None:
    ccx.api.add(
        tool_reply(("Bash", {"command": "touch a.txt"})),
        tool_reply(("Bash", {"command": "touch b.txt"})),
        text_reply("Done."),
    )
    suggested: list[Any] = []

    async def always(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        suggested.append(context.suggestions)
        rule = PermissionRuleValue(tool_name="Bash", rule_content="touch *")
        update = PermissionUpdate("addRules", [rule], behavior="allow", destination="session")
        return PermissionResultAllow(updated_permissions=[update])

    run_query(ccx, one_prompt("touch both"), can_use_tool=always)
    assert len(suggested) == 1  # the second touch ran under the rule, unasked
    assert suggested[0] and suggested[0][0].rules[0].tool_name == "Bash"
    assert (ccx.repo / "a.txt").exists() and (ccx.repo / "b.txt").exists()


def test_a_denial_message_reaches_the_model_and_interrupt_ends_the_turn(ccx: Ccx) -> None:
    target = ccx.repo / "blocked.txt"
    write = ("Write", {"file_path": str(target), "content": "x"})
    ccx.api.add(tool_reply(write), text_reply("Understood."), tool_reply(write))

    async def deny(name: str, tool_input: dict[str, Any], _context: Any) -> Any:
        return PermissionResultDeny(message="No writes in this repo today.")

    messages = run_query(ccx, one_prompt("write it"), can_use_tool=deny)
    assert "No writes in this repo today." in json.dumps(ccx.api.requests[1].messages[-1])
    assert messages[-1].result == "Understood." and not target.exists()

    async def stop(name: str, tool_input: dict[str, Any], _context: Any) -> Any:
        return PermissionResultDeny(message="Stop right there.", interrupt=True)

    messages = run_query(ccx, one_prompt("write it again"), can_use_tool=stop)
    assert len(ccx.api.requests) == 3  # the turn ended: no request after the denial
    assert tool_results(messages)[0].is_error and not target.exists()
    assert isinstance(messages[-1], ResultMessage)


def test_sdk_hooks_are_called_back_and_their_answers_honoured(ccx: Ccx) -> None:
    ccx.api.add(
        tool_reply(("Bash", {"command": "echo BLOCKME"})),
        tool_reply(("Bash", {"command": "echo fine"})),
        text_reply("Done."),
    )
    seen: list[dict[str, Any]] = []

    async def guard(payload: dict[str, Any], tool_use_id: str | None, _ctx: Any) -> Any:
        seen.append({**payload, "callback_tool_use_id": tool_use_id})
        if "BLOCKME" in payload["tool_input"]["command"]:
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "the SDK guard said no",
                }
            }
        return {}

    async def prompt_seen(payload: dict[str, Any], _id: str | None, _ctx: Any) -> Any:
        seen.append(payload)
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                       "additionalContext": "CONTEXT-FROM-SDK"}}  # fmt: skip

    hooks = {
        "PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])],
        "UserPromptSubmit": [HookMatcher(hooks=[prompt_seen])],
    }
    messages = run_query(ccx, one_prompt("run both"), hooks=hooks, allowed_tools=["Bash(echo *)"])
    events = [p["hook_event_name"] for p in seen]
    assert events == ["UserPromptSubmit", "PreToolUse", "PreToolUse"]
    assert seen[0]["prompt"] == "run both" and seen[1]["tool_name"] == "Bash"
    assert seen[1]["callback_tool_use_id"] == seen[1]["tool_use_id"]
    assert "CONTEXT-FROM-SDK" in json.dumps(ccx.api.requests[0].messages)
    blocked, ran = tool_results(messages)
    assert blocked.is_error and "the SDK guard said no" in str(blocked.content)
    assert not ran.is_error and "fine" in str(ran.content)


def test_client_reads_context_usage_in_the_sdk_shape(ccx: Ccx) -> None:
    ccx.api.add(text_reply("Hello."))

    async def talk() -> dict[str, Any]:
        async with ClaudeSDKClient(options=sdk_options(ccx)) as client:
            await client.query("hi")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    break
            return dict(await client.get_context_usage())

    usage = asyncio.run(asyncio.wait_for(talk(), 90))
    names = [c["name"] for c in usage["categories"]]
    assert "System prompt" in names and "Messages" in names
    assert usage["totalTokens"] > 0 and usage["rawMaxTokens"] >= usage["maxTokens"] > 0
    assert 0 < usage["percentage"] < 100 and usage["model"]
    assert sum(c["tokens"] for c in usage["categories"]) <= usage["rawMaxTokens"]


def test_output_format_yields_structured_output(ccx: Ccx) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    ccx.api.add(tool_reply(("StructuredOutput", {"n": 3})))
    messages = run_query(ccx, "count", output_format={"type": "json_schema", "schema": schema})
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert result.structured_output == {"n": 3}


def test_max_budget_usd_ends_with_the_budget_subtype(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Read", {"file_path": str(ccx.repo / "README.md")})), text_reply("x"))
    seen: list[Any] = []

    async def collect() -> None:
        options = sdk_options(ccx, max_budget_usd=0.000001)
        async for message in query(prompt="read", options=options):
            seen.append(message)

    # An error result ends the process with exit 1; the SDK raises it after yielding it.
    with pytest.raises(ResultError) as raised:
        asyncio.run(asyncio.wait_for(collect(), 90))
    assert raised.value.data["subtype"] == "error_max_budget_usd"
    result = seen[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "error_max_budget_usd"
    assert result.is_error and len(ccx.api.requests) == 1


def test_partial_messages_and_hook_events_arrive_as_sdk_messages(ccx: Ccx) -> None:
    claude = ccx.repo / ".claude"
    claude.mkdir(exist_ok=True)
    hook = {"hooks": [{"type": "command", "command": "true"}]}
    (claude / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [hook]}}))
    ccx.api.add(text_reply("Streamed."))
    messages = run_query(
        ccx, "hi", include_partial_messages=True, include_hook_events=True,
        setting_sources=["user", "project"],
    )  # fmt: skip
    raw = [m.event["type"] for m in messages if isinstance(m, StreamEvent)]
    assert raw[0] == "message_start" and raw[-1] == "message_stop"
    assert "content_block_delta" in raw
    hooks = [m for m in messages if isinstance(m, HookEventMessage)]
    assert [m.subtype for m in hooks] == ["hook_started", "hook_response"]
    assert hooks[0].data["hook_event"] == "UserPromptSubmit"


def test_rewind_files_puts_the_files_back_as_they_were_at_a_prompt(ccx: Ccx) -> None:
    first, second = ccx.repo / "first.txt", ccx.repo / "second.txt"
    ccx.api.add(
        tool_reply(("Write", {"file_path": str(first), "content": "one\n"})),
        text_reply("Wrote first."),
        tool_reply(("Write", {"file_path": str(second), "content": "two\n"})),
        text_reply("Wrote second."),
    )
    options = sdk_options(
        ccx, enable_file_checkpointing=True, permission_mode="acceptEdits",
        extra_args={"replay-user-messages": None},
    )  # fmt: skip

    async def talk() -> list[str]:
        prompts: list[str] = []
        async with ClaudeSDKClient(options=options) as client:
            for text in ("write first", "write second"):
                await client.query(text)
                async for message in client.receive_response():
                    if isinstance(message, UserMessage) and message.content == text:
                        prompts.append(message.uuid or "")
            assert first.exists() and second.exists()
            await client.rewind_files(prompts[1])
            assert first.read_text() == "one\n" and not second.exists()
            await client.rewind_files(prompts[0])
            assert not first.exists()
        return prompts

    prompts = asyncio.run(asyncio.wait_for(talk(), 90))
    assert len(prompts) == 2 and all(prompts)
    (transcript,) = ccx.transcripts()
    assert prompts[0] in transcript.read_text()  # the uuid the client saw is the prompt's


def test_a_failing_sdk_hook_with_on_failure_block_blocks_the_call(ccx: Ccx) -> None:
    ccx.api.add(tool_reply(("Bash", {"command": "touch made.txt"})), text_reply("Done."))

    async def broken(_payload: dict[str, Any], _id: str | None, _ctx: Any) -> Any:
        raise RuntimeError("guard crashed")

    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[broken], on_failure="block")]}
    messages = run_query(ccx, one_prompt("make it"), hooks=hooks, allowed_tools=["Bash"])
    (blocked,) = tool_results(messages)
    assert blocked.is_error and "guard crashed" in str(blocked.content)
    assert not (ccx.repo / "made.txt").exists()


def test_can_use_tool_gets_file_paths_absolute(ccx: Ccx) -> None:
    """The model names a file relative to the session's folder; the client's callback sees it
    absolute, as Claude Code gives it (rules compare absolute paths); the write lands there."""
    ccx.api.add(
        tool_reply(("Write", {"file_path": "notes/plan.md", "content": "step 1\n"})),
        text_reply("Written."),
    )
    seen: list[str] = []

    async def record(name: str, tool_input: dict[str, Any], _context: Any) -> Any:
        seen.append(tool_input["file_path"])
        return PermissionResultAllow()

    messages = run_query(ccx, one_prompt("write the plan"), can_use_tool=record)
    assert seen == [str(ccx.repo / "notes" / "plan.md")]
    assert messages[-1].result == "Written."
    assert (ccx.repo / "notes" / "plan.md").read_text() == "step 1\n"
