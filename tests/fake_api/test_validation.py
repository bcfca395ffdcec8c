"""The fake server rejects what the real API rejects, in its words, and accepts the fixed one."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import Message

from tests.fake_api.conftest import HELLO, MODEL, make_client, refused_then_accepted
from tui.fake_api import FakeApi, text_reply

DROP = object()
OBJECT_SCHEMA = {"type": "object", "properties": {}}


def request(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": MODEL, "max_tokens": 100, "messages": HELLO}
    body.update(changes)
    return {key: value for key, value in body.items() if value is not DROP}


def _content(blocks: tuple[Any, ...]) -> Any:
    return blocks[0] if len(blocks) == 1 and isinstance(blocks[0], str) else list(blocks)


def user(*content: Any) -> dict[str, Any]:
    return {"role": "user", "content": _content(content)}


def assistant(*content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": _content(content)}


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": value, **extra}


def use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": "a"}}


def result(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "file text"}


def tool(name: str, schema: Any = OBJECT_SCHEMA, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": "d", "input_schema": schema, **extra}


EPHEMERAL = {"type": "ephemeral"}
# A search that loaded mcp__a__x: the model's call, then the result referencing the tool.
SEARCHED = [
    user("find the x tool"),
    assistant({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}),
]
REFERENCE = {
    "type": "tool_result",
    "tool_use_id": "t1",
    "content": [{"type": "tool_reference", "tool_name": "mcp__a__x"}],
}
NOT_ANSWERED = (
    "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message."
)
UNEXPECTED = (
    "messages.{at}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each "
    "`tool_result` block must have a corresponding `tool_use` block in the previous message."
)
EMPTY = (
    "messages.{i}: all messages must have non-empty content except for the optional final "
    "assistant message"
)
TOOL_NAME = "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"

CASES = [
    ("no messages", request(messages=DROP), "messages: Field required", request()),
    (
        "empty messages",
        request(messages=[]),
        "messages: at least one message is required",
        request(),
    ),
    ("no max_tokens", request(max_tokens=DROP), "max_tokens: Field required", request()),
    (
        "max_tokens over the model's output limit",
        request(max_tokens=128_001),
        "max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens "
        "for claude-sonnet-5-5",
        request(max_tokens=128_000),
    ),
    ("no model", request(model=DROP), "model: Field required", request()),
    (
        "first message from the assistant",
        request(messages=[assistant("Hi"), user("Hello")]),
        'messages: first message must use the "user" role',
        request(messages=[user("Hello"), assistant("Hi"), user("Go on")]),
    ),
    (
        "unknown role",
        request(messages=[{"role": "system", "content": "Be nice"}]),
        "messages.0.role: Input should be 'user' or 'assistant'",
        request(system="Be nice"),
    ),
    (
        "empty string content",
        request(messages=[user("")]),
        EMPTY.format(i=0),
        request(messages=[user("Hello"), assistant("")]),  # final assistant may be empty
    ),
    (
        "empty block list",
        request(messages=[user("Hello"), {"role": "assistant", "content": []}, user("More")]),
        EMPTY.format(i=1),
        request(messages=[user("Hello"), assistant("Hi"), user("More")]),
    ),
    (
        "empty text block",
        request(messages=[user(text(""), text("Hello"))]),
        "messages: text content blocks must be non-empty",
        request(messages=[user(text("Hello"))]),
    ),
    (
        "whitespace-only text block",
        request(messages=[user(text("  \n"))]),
        "messages: text content blocks must contain non-whitespace text",
        request(messages=[user(text("Hello"))]),
    ),
    (
        "final assistant ending in whitespace",
        request(messages=[user("Hello"), assistant("The answer is ")]),
        "messages: final assistant content cannot end with trailing whitespace",
        request(messages=[user("Hello"), assistant("The answer is")]),
    ),
    (
        "tool_use answered by plain text",
        request(messages=[user("Go"), assistant(use("toolu_a")), user("ok")]),
        NOT_ANSWERED.format(ids="toolu_a"),
        request(messages=[user("Go"), assistant(use("toolu_a")), user(result("toolu_a"))]),
    ),
    (
        "tool_use in the last message",
        request(messages=[user("Go"), assistant(text("Reading"), use("toolu_a"))]),
        NOT_ANSWERED.format(ids="toolu_a"),
        request(
            messages=[
                user("Go"),
                assistant(text("Reading"), use("toolu_a")),
                user(result("toolu_a"), text("Continue")),
            ]
        ),
    ),
    (
        "tool_result after other content",
        request(
            messages=[user("Go"), assistant(use("toolu_a")), user(text("Here:"), result("toolu_a"))]
        ),
        NOT_ANSWERED.format(ids="toolu_a"),
        request(
            messages=[user("Go"), assistant(use("toolu_a")), user(result("toolu_a"), text("Here"))]
        ),
    ),
    (
        "one of two tool_use blocks unanswered",
        request(
            messages=[
                user("Go"),
                assistant(use("toolu_a"), use("toolu_b")),
                user(result("toolu_a")),
            ]
        ),
        NOT_ANSWERED.format(ids="toolu_b"),
        request(
            messages=[
                user("Go"),
                assistant(use("toolu_a"), use("toolu_b")),
                user(result("toolu_b"), result("toolu_a")),
            ]
        ),
    ),
    (
        "tool_result for an unknown id",
        request(
            messages=[
                user("Go"),
                assistant(use("toolu_a")),
                user(result("toolu_a"), result("toolu_z")),
            ]
        ),
        UNEXPECTED.format(at="2.content.1", id="toolu_z"),
        request(messages=[user("Go"), assistant(use("toolu_a")), user(result("toolu_a"))]),
    ),
    (
        "tool_result with no assistant before it",
        request(messages=[user(result("toolu_x"))]),
        UNEXPECTED.format(at="0.content.0", id="toolu_x"),
        request(messages=[user(text("toolu_x said: file text"))]),
    ),
    (
        "duplicate tool_use ids",
        request(
            messages=[
                user("Go"),
                assistant(use("toolu_a")),
                user(result("toolu_a")),
                assistant(use("toolu_a")),
                user(result("toolu_a")),
            ]
        ),
        "messages.3.content.0: `tool_use` ids must be unique",
        request(
            messages=[
                user("Go"),
                assistant(use("toolu_a")),
                user(result("toolu_a")),
                assistant(use("toolu_b")),
                user(result("toolu_b")),
            ]
        ),
    ),
    (
        "five cache breakpoints",
        request(
            tools=[tool("Read", cache_control=EPHEMERAL)],
            system=[text("a", cache_control=EPHEMERAL), text("b", cache_control=EPHEMERAL)],
            messages=[user(text("c", cache_control=EPHEMERAL), text("d", cache_control=EPHEMERAL))],
        ),
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        request(
            tools=[tool("Read", cache_control=EPHEMERAL)],
            system=[text("a", cache_control=EPHEMERAL), text("b")],
            messages=[user(text("c", cache_control=EPHEMERAL), text("d", cache_control=EPHEMERAL))],
        ),
    ),
    ("bad tool name", request(tools=[tool("Read file")]), TOOL_NAME, request(tools=[tool("Read")])),
    ("long tool name", request(tools=[tool("x" * 65)]), TOOL_NAME, request(tools=[tool("x" * 64)])),
    (
        "tool name over 64 characters",
        request(tools=[tool("mcp__red__" + "n" * 55)]),
        TOOL_NAME,
        request(tools=[tool("mcp__red__" + "n" * 54)]),
    ),
    (
        "duplicate tool names",
        request(tools=[tool("Read"), tool("Read")]),
        "tools: Tool names must be unique.",
        request(tools=[tool("Read"), tool("Write")]),
    ),
    (
        "input_schema not an object",
        request(tools=[tool("Read", {"type": "string"})]),
        "tools.0.custom.input_schema.type: Input should be 'object'",
        request(tools=[tool("Read")]),
    ),
    (
        "tool_choice naming a missing tool",
        request(tools=[tool("Read")], tool_choice={"type": "tool", "name": "Write"}),
        "tool_choice: Tool 'Write' not found in provided tools",
        request(tools=[tool("Read")], tool_choice={"type": "tool", "name": "Read"}),
    ),
    (
        "tool_choice without tools",
        request(tool_choice={"type": "any"}),
        "tool_choice: may only be specified while providing tools.",
        request(tool_choice={"type": "auto"}),
    ),
    (
        "every tool deferred",
        request(tools=[tool("mcp__a__x", defer_loading=True)]),
        "tools: at least one tool must not have defer_loading set",
        request(tools=[tool("ToolSearch"), tool("mcp__a__x", defer_loading=True)]),
    ),
    (
        "a server tool search tool deferred",
        request(
            tools=[
                tool("Read"),
                {
                    "type": "tool_search_tool_regex_20251119",
                    "name": "tool_search_tool_regex",
                    "defer_loading": True,
                },
            ]
        ),
        "tools.1: a tool search tool cannot have defer_loading set",
        request(
            tools=[
                tool("Read"),
                {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
            ]
        ),
    ),
    (
        "a tool reference to a tool that is not deferred",
        request(
            tools=[tool("Read"), tool("mcp__a__x")],
            messages=[*SEARCHED, user(REFERENCE)],
        ),
        "messages.2.content.0: tool_reference to 'mcp__a__x', which is not a tool of this "
        "request with defer_loading set (tool_reference_unresolved)",
        request(
            tools=[tool("Read"), tool("mcp__a__x", defer_loading=True)],
            messages=[*SEARCHED, user(REFERENCE)],
        ),
    ),
    (
        "system neither string nor list",
        request(system=42),
        "system: Input should be a valid string or a valid list",
        request(system="You are ccx."),
    ),
    (
        "system block that is not text",
        request(system=[{"type": "image", "source": {}}]),
        "system.0.type: Input should be 'text'",
        request(system=[text("You are ccx.")]),
    ),
]


@pytest.mark.refusal_expected
@pytest.mark.parametrize(
    ("bad", "message", "good"),
    [pytest.param(bad, message, good, id=name) for name, bad, message, good in CASES],
)
def test_rule_rejects_bad_and_accepts_fixed_request(
    api: FakeApi,
    client: anthropic.Anthropic,
    bad: dict[str, Any],
    message: str,
    good: dict[str, Any],
) -> None:
    refused_then_accepted(api, client, bad, message, good)


@pytest.mark.refusal_expected
def test_prompt_too_long_against_the_model_window() -> None:
    api = FakeApi([text_reply("fits")], models={"tiny-model": (1_000, 500)})
    with api, make_client(api) as client:
        too_long = [{"role": "user", "content": "x" * 4_001}]  # 1,001 tokens
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(model="tiny-model", max_tokens=10, messages=too_long)
        fits = [{"role": "user", "content": "x" * 4_000}]
        client.messages.create(model="tiny-model", max_tokens=10, messages=fits)
    assert caught.value.api_message == "prompt is too long: 1001 tokens > 1000 maximum"
    assert api.errors == ["prompt is too long: 1001 tokens > 1000 maximum"]


@pytest.mark.refusal_expected
def test_a_request_over_32_mb_is_too_large(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(text_reply("fits"))
    huge = [{"role": "user", "content": "x" * 32_000_000}]
    with pytest.raises(anthropic.APIStatusError) as caught:
        client.messages.create(model=MODEL, max_tokens=10, messages=huge)
    assert caught.value.status_code == 413
    assert caught.value.type == "request_too_large"
    assert api.script_remaining == 1


@pytest.mark.refusal_expected
def test_streaming_requests_are_checked_too(api: FakeApi, client: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError, match="first message must use"):
        client.messages.create(model=MODEL, max_tokens=10, messages=[assistant("Hi")], stream=True)


@pytest.mark.refusal_expected
def test_headers_are_checked(api: FakeApi) -> None:
    api.add(text_reply("bearer works"), text_reply("x-api-key works"))
    body = request()
    with httpx2.Client(base_url=api.url, trust_env=False) as http:
        no_key = http.post("/v1/messages", json=body, headers={"anthropic-version": "2023-06-01"})
        no_version = http.post("/v1/messages", json=body, headers={"x-api-key": "k"})
        with_key = http.post(
            "/v1/messages", json=body, headers={"x-api-key": "k", "anthropic-version": "2023-06-01"}
        )
        not_json = http.post(
            "/v1/messages",
            content=b"{not json",
            headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
        )
    assert no_key.status_code == 401
    assert no_key.json()["error"]["type"] == "authentication_error"
    assert no_version.status_code == 400
    assert no_version.json()["error"]["message"] == "anthropic-version: header is required"
    assert with_key.status_code == 200 and with_key.json()["content"][0]["text"] == "bearer works"
    assert not_json.status_code == 400
    with make_client(api, api_key=None, auth_token="oauth-token") as client:
        message = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert message.content[0].text == "x-api-key works"
    assert api.requests[-1].headers["authorization"] == "Bearer oauth-token"
    assert len(api.errors) == 3


def test_not_strict_lets_malformed_conversations_through() -> None:
    with FakeApi([text_reply("anything goes")], strict=False) as api, make_client(api) as client:
        messages = [assistant(use("toolu_a")), user(text(""))]
        message = client.post("/v1/messages", cast_to=Message, body=request(messages=messages))
    assert message.content[0].text == "anything goes"
    assert api.errors == []
