"""Replies reach the real SDK as the API sends them: SSE streams, JSON messages, other endpoints."""

from __future__ import annotations

import json
import time

import anthropic
import httpx2
import pytest

from tests.fake_api.conftest import HELLO, MODEL, make_async_client, make_client
from tui.fake_api import (
    SCRIPT_EXHAUSTED,
    FakeApi,
    ModelSpec,
    Reply,
    estimate_request_tokens,
    text_reply,
    tool_reply,
)


async def test_text_reply_streams_as_sse(api: FakeApi, aclient: anthropic.AsyncAnthropic) -> None:
    api.add(text_reply("The quick brown fox jumps over the lazy dog."))
    stream = await aclient.messages.create(model=MODEL, max_tokens=100, messages=HELLO, stream=True)
    events = [event async for event in stream]
    kinds = [event.type for event in events]
    assert kinds[0] == "message_start" and kinds[1] == "content_block_start"
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    deltas = [event.delta.text for event in events if event.type == "content_block_delta"]
    assert 1 < len(deltas) <= 3
    assert "".join(deltas) == "The quick brown fox jumps over the lazy dog."
    start, final = events[0].message, events[-2]
    assert start.id.startswith("msg_") and start.usage.output_tokens == 1
    assert final.delta.stop_reason == "end_turn"
    assert final.usage.output_tokens == 11  # 44 characters / 4
    assert start.usage.input_tokens == final.usage.input_tokens == 2  # "Hello"


async def test_message_stream_assembles_text_reply(
    api: FakeApi, aclient: anthropic.AsyncAnthropic
) -> None:
    api.add(text_reply("One two three four five six.", chunk_chars=4))
    async with aclient.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        pieces = [text async for text in stream.text_stream]
        message = await stream.get_final_message()
    assert len(pieces) == 7  # 28 characters in chunks of 4
    assert message.content[0].type == "text"
    assert message.content[0].text == "One two three four five six."
    assert message.stop_reason == "end_turn"
    assert message.usage.output_tokens == 7
    assert message.id == api.requests[0].response_item.id


async def test_tool_reply_streams_input_json(
    api: FakeApi, aclient: anthropic.AsyncAnthropic
) -> None:
    api.add(
        tool_reply(
            ("Read", {"file_path": "/tmp/a.py", "limit": 20}),
            ("Grep", {"pattern": "def main", "-n": True}, "toolu_fixed"),
            text="Let me look.",
        )
    )
    async with aclient.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        events = [event async for event in stream]
        message = await stream.get_final_message()
    assert any(getattr(event, "type", "") == "input_json" for event in events)
    assert [block.type for block in message.content] == ["text", "tool_use", "tool_use"]
    read, grep = message.content[1], message.content[2]
    assert (read.name, read.input) == ("Read", {"file_path": "/tmp/a.py", "limit": 20})
    assert read.id.startswith("toolu_")
    assert (grep.name, grep.input, grep.id) == (
        "Grep",
        {"pattern": "def main", "-n": True},
        "toolu_fixed",
    )
    assert message.stop_reason == "tool_use"
    sent = api.requests[0].response_item
    assert [block.get("id") for block in sent.content[1:]] == [read.id, "toolu_fixed"]


async def test_thinking_block_streams_thinking_and_signature(
    api: FakeApi, aclient: anthropic.AsyncAnthropic
) -> None:
    api.add(
        Reply(
            content=[
                {"type": "thinking", "thinking": "The user greets me; greet back."},
                {"type": "text", "text": "Hi!"},
            ]
        )
    )
    async with aclient.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        message = await stream.get_final_message()
    thinking = message.content[0]
    assert thinking.type == "thinking"
    assert thinking.thinking == "The user greets me; greet back."
    assert thinking.signature == api.requests[0].response_item.content[0]["signature"] != ""
    assert message.content[1].text == "Hi!"


def test_sync_client_streams_and_gets_json(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(text_reply("streamed"), text_reply("helper"), tool_reply(("Glob", {"pattern": "*.py"})))
    raw = client.messages.create(model=MODEL, max_tokens=100, messages=HELLO, stream=True)
    assert "".join(e.delta.text for e in raw if e.type == "content_block_delta") == "streamed"
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        assert stream.get_final_text() == "helper"
    message = client.messages.create(model=MODEL, max_tokens=100, messages=HELLO)
    assert message.content[0].type == "tool_use"
    assert message.content[0].input == {"pattern": "*.py"}
    assert message.stop_reason == "tool_use"
    assert message.usage.input_tokens == 2 and message.usage.output_tokens == 6  # 22 chars
    assert api.errors == []


def test_recorded_request_and_its_helpers(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(text_reply("done"))
    messages = [
        {"role": "user", "content": "Fix the bug in parser.py"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "p"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "def parse(): pass"},
                {"type": "text", "text": "Be quick."},
            ],
        },
    ]
    system = [{"type": "text", "text": "You are ccx."}, {"type": "text", "text": "Be terse."}]
    client.messages.create(model=MODEL, max_tokens=50, messages=messages, system=system)
    [request] = api.requests
    assert request.path == "/v1/messages" and request.status == 200
    # this SDK sends the API key as a bearer token; both forms are accepted
    assert request.headers["authorization"] == "Bearer test-key"
    assert "anthropic-version" in request.headers
    assert request.messages == messages
    assert request.system_text() == "You are ccx.\n\nBe terse."
    assert request.last_user_text() == "def parse(): pass\nBe quick."
    assert "def parse(): pass" in request.all_text() and "Fix the bug" in request.all_text()
    assert request.tool_result_ids() == ["toolu_1"] == request.tool_use_ids()
    assert 0 < request.server_seconds < 1
    assert request.received_at <= time.perf_counter()
    body = {"model": MODEL, "messages": messages, "system": system}
    assert request.billing.estimated_tokens == estimate_request_tokens(body)


def test_callable_items_and_added_items(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(lambda request: text_reply(f"echo: {request.last_user_text()}"))
    api.add(text_reply("second"), text_reply("third"))
    assert api.script_remaining == 3
    first = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert first.content[0].text == "echo: Hello"
    assert api.script_remaining == 2


def test_routes_answer_before_the_script_without_consuming_it(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    api.add(text_reply("main loop"))
    route = api.on(lambda r: "Summarize" in r.system_text(), text_reply("SUMMARY"))
    api.on(lambda r: r.last_user_text() == "ping", lambda r: text_reply(f"pong {len(r.messages)}"))
    summary = client.messages.create(
        model=MODEL, max_tokens=10, messages=HELLO, system="Summarize the conversation."
    )
    assert summary.content[0].text == "SUMMARY"
    pong = client.messages.create(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "ping"}]
    )
    assert pong.content[0].text == "pong 1"
    assert api.script_remaining == 1 and route.hits == 1
    main = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert main.content[0].text == "main loop"


def test_exhausted_script_is_a_500_and_an_error(api: FakeApi, client: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.InternalServerError) as caught:
        client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert caught.value.status_code == 500 and caught.value.type == "api_error"
    assert caught.value.api_message == SCRIPT_EXHAUSTED
    assert api.errors == [SCRIPT_EXHAUSTED]


def test_script_item_that_raises_is_a_500_and_an_error(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    api.add(lambda request: 1 / 0)
    with pytest.raises(anthropic.InternalServerError):
        client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert "ZeroDivisionError" in api.errors[0]


def test_sync_requests_share_one_keep_alive_connection(api: FakeApi) -> None:
    api.add(*[text_reply(f"reply {n}") for n in range(6)])
    with make_client(api) as client:
        for _ in range(3):
            with client.messages.stream(model=MODEL, max_tokens=10, messages=HELLO) as stream:
                stream.get_final_message()
            client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert api.connections_accepted == 1
    assert {request.connection_id for request in api.requests} == {1}


async def test_async_requests_share_one_keep_alive_connection(api: FakeApi) -> None:
    api.add(*[text_reply(f"reply {n}") for n in range(4)])
    async with make_async_client(api) as client:
        for _ in range(4):
            stream = await client.messages.create(
                model=MODEL, max_tokens=10, messages=HELLO, stream=True
            )
            [event async for event in stream]
    assert api.connections_accepted == 1


def test_count_tokens_uses_the_estimate_and_keeps_the_script(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    api.add(text_reply("unused"))
    messages = [{"role": "user", "content": "x" * 4001}]
    counted = client.messages.count_tokens(model=MODEL, messages=messages, system="s" * 8)
    assert counted.input_tokens == 1001 + 2
    assert api.script_remaining == 1
    assert api.requests[0].path == "/v1/messages/count_tokens"


def test_models_endpoints() -> None:
    models = {"tiny-model": (1_000, 500), "other": ModelSpec("other", 5, 1)}
    with FakeApi(models=models) as api, make_client(api) as client:
        sonnet = client.models.retrieve("claude-sonnet-4-5")
        assert (sonnet.max_input_tokens, sonnet.max_tokens) == (200_000, 64_000)
        assert sonnet.display_name == "Claude Sonnet 4.5" and sonnet.lifecycle == "active"
        opus = client.models.retrieve("claude-opus-5-5")
        assert (opus.max_input_tokens, opus.max_tokens) == (1_000_000, 128_000)
        tiny = client.models.retrieve("tiny-model")
        assert (tiny.max_input_tokens, tiny.max_tokens) == (1_000, 500)
        with pytest.raises(anthropic.NotFoundError):
            client.models.retrieve("claude-nonexistent-1")
        ids = {model.id for model in client.models.list()}
    assert {"claude-haiku-4-5", "claude-sonnet-5-5", "tiny-model", "other"} <= ids
    assert api.errors == ["model: claude-nonexistent-1"]


@pytest.mark.refusal_expected
def test_unknown_model_is_a_404_like_the_api(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(text_reply("unused"))
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.messages.create(model="claude-imaginary-9", max_tokens=10, messages=HELLO)
    assert caught.value.api_message == "model: claude-imaginary-9"
    assert api.script_remaining == 1


def test_dated_model_id_resolves_to_its_alias(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(text_reply("ok"))
    client.messages.create(model="claude-sonnet-5-5-20260501", max_tokens=10, messages=HELLO)
    assert api.errors == []


def test_tokens_per_s_paces_the_deltas(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(text_reply("a" * 400, chunk_chars=40, tokens_per_s=2_000))  # 100 tokens: 50 ms
    started = time.perf_counter()
    with client.messages.stream(model=MODEL, max_tokens=10, messages=HELLO) as stream:
        arrivals = [time.perf_counter() for _ in stream.text_stream]
    assert len(arrivals) == 10
    # The server paces itself: it spends the 50 ms writing the deltas (when the client reads
    # them depends on how busy the machine is, so their spread is not asserted).
    assert arrivals[-1] - started >= 0.045
    assert api.requests[0].server_seconds >= 0.045


def test_delay_postpones_the_response(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(text_reply("late", delay_s=0.05))
    started = time.perf_counter()
    client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert time.perf_counter() - started >= 0.05
    assert api.requests[0].server_seconds >= 0.05


def large_conversation() -> list[dict]:
    """40 tool rounds of 17.5 KB results (~700 KB), the request bench/speed_targets.py times."""
    messages: list[dict] = [{"role": "user", "content": "start"}]
    for n in range(40):
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {}}],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "x" * 17_500}
                ],
            }
        )
    return messages


def test_a_large_request_is_checked_and_recorded(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(text_reply("ok"))
    messages = large_conversation()
    reply = client.messages.create(model=MODEL, max_tokens=10, messages=messages)
    assert reply.content[0].text == "ok"  # type: ignore[union-attr]
    assert api.errors == []
    (request,) = api.requests
    assert request.messages == messages
    assert len(request.tool_result_ids()) == 40 == len(request.tool_use_ids())


def test_a_reply_the_server_cannot_send_is_a_500_and_an_error(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    api.add(tool_reply(("Read", {"file_path": {"not", "json"}})), text_reply("still serving"))
    with pytest.raises(anthropic.InternalServerError):
        client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert api.errors[0].startswith("fake_api: server error: TypeError")
    after = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert after.content[0].text == "still serving"


def test_chunked_request_bodies_are_read(api: FakeApi) -> None:
    api.add(text_reply("chunked ok"))
    body = json.dumps({"model": MODEL, "max_tokens": 5, "messages": HELLO}).encode()
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    with httpx2.Client(base_url=api.url, trust_env=False) as http:
        response = http.post("/v1/messages", content=iter([body[:10], body[10:]]), headers=headers)
    assert response.json()["content"] == [{"type": "text", "text": "chunked ok"}]
    assert api.requests[0].headers["transfer-encoding"] == "chunked"
