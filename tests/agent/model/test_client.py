"""The model client: a retry drops what the failed attempt streamed; bad streams and env survive."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import anthropic
import pytest

from agent.core.events import ApiRetry, Event, Notice, ResponseDiscarded, TextDelta
from agent.model.client import ApiError, ModelClient, RetryPolicy
from tui.fake_api import Drop, FakeApi, Fault, Reply, text_reply

REQUEST = {
    "model": "claude-sonnet-5-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "hi"}],
}


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi() as server:
        yield server


def client_for(api: FakeApi, events: list[Event], attempts: int = 5) -> ModelClient:
    sdk = anthropic.AsyncAnthropic(base_url=api.url, api_key="test", max_retries=0)
    policy = RetryPolicy(max_attempts=attempts, base_delay_s=0.001)
    return ModelClient(sdk, policy, events.append)


def kinds(events: list[Event]) -> list[str]:
    return [event.type for event in events]


async def test_text_of_a_dropped_attempt_is_discarded_before_the_retry(api: FakeApi) -> None:
    api.add(Drop(after_events=4), text_reply("the whole answer"))
    events: list[Event] = []
    response = await client_for(api, events).stream(REQUEST)
    assert response.content == [{"type": "text", "text": "the whole answer"}]
    partial = kinds(events).index("text_delta")
    discarded = kinds(events).index("response_discarded")
    assert partial < discarded < kinds(events).index("api_retry")
    after = [e.text for e in events[discarded:] if isinstance(e, TextDelta)]
    assert "".join(after) == "the whole answer"


async def test_a_retry_before_any_text_discards_nothing(api: FakeApi) -> None:
    api.add(Fault(529), text_reply("ok"))
    events: list[Event] = []
    await client_for(api, events).stream(REQUEST)
    assert any(isinstance(e, ApiRetry) for e in events)
    assert not any(isinstance(e, ResponseDiscarded) for e in events)


async def test_giving_up_discards_the_partial_text_too(api: FakeApi) -> None:
    api.add(Drop(after_events=4), Drop(after_events=4))
    events: list[Event] = []
    with pytest.raises(ApiError):
        await client_for(api, events, attempts=2).stream(REQUEST)
    assert kinds(events).count("response_discarded") == 2


async def test_the_edits_the_api_applied_come_with_the_response(api: FakeApi) -> None:
    api.add(text_reply("plain"), text_reply("edited"))
    client = client_for(api, [])
    assert (await client.stream(REQUEST)).applied_edits == []
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 1}}
    edited = await client.stream(
        {
            **REQUEST,
            "messages": [
                {"role": "user", "content": "read it"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x" * 400}],
                },
            ],
            "tools": [{"name": "Read", "description": "d", "input_schema": {"type": "object"}}],
            "extra_headers": {"anthropic-beta": "context-management-2025-06-27"},
            "extra_body": {
                "context_management": {
                    "edits": [{**edit, "keep": {"type": "tool_uses", "value": 0}}]
                }
            },
        }
    )
    assert edited.applied_edits == api.requests[-1].applied_edits
    assert edited.applied_edits[0]["cleared_tool_uses"] == 1
    assert edited.applied_edits[0]["cleared_input_tokens"] > 80


async def test_a_summary_call_that_streams_no_text_emits_no_discard(api: FakeApi) -> None:
    api.add(Drop(after_events=4), text_reply("summary"))
    events: list[Event] = []
    await client_for(api, events).stream(REQUEST, stream_text=False)
    assert not any(isinstance(e, (TextDelta, ResponseDiscarded)) for e in events)


# -- a malformed stream ------------------------------------------------------------------


class FakeStream:
    def __init__(self, events: list[Any]):
        self.events = events

    def __aiter__(self) -> Any:
        return self._iterate()

    async def _iterate(self) -> Any:
        for event in self.events:
            yield event

    async def close(self) -> None:
        return None


class ScriptedSdk:
    """Just enough of AsyncAnthropic: each create() returns the next scripted stream."""

    def __init__(self, *streams: list[Any]):
        self.streams = list(streams)
        self.messages = SimpleNamespace(create=self.create)

    async def create(self, **_request: Any) -> FakeStream:
        return FakeStream(self.streams.pop(0))


def event(kind: str, **fields: Any) -> SimpleNamespace:
    return SimpleNamespace(type=kind, **fields)


def good_stream(text: str) -> list[Any]:
    block = SimpleNamespace(model_dump=lambda **_: {"type": "text", "text": ""})
    usage = SimpleNamespace(input_tokens=3, output_tokens=2)
    return [
        event("message_start", message=SimpleNamespace(id="msg_1", model="m", usage=usage)),
        event("content_block_start", index=0, content_block=block),
        event("content_block_delta", index=0, delta=SimpleNamespace(type="text_delta", text=text)),
        event("content_block_stop", index=0),
        event("message_delta", delta=SimpleNamespace(stop_reason="end_turn"), usage=usage),
    ]


async def test_a_malformed_stream_event_is_retried_like_a_dropped_connection() -> None:
    # A delta for a block that never started: the accumulator raises KeyError.
    broken = [event("content_block_delta", index=7, delta=SimpleNamespace(type="text_delta"))]
    events: list[Event] = []
    policy = RetryPolicy(max_attempts=3, base_delay_s=0.001)
    sdk: Any = ScriptedSdk(broken, good_stream("fine"))
    client = ModelClient(sdk, policy, events.append)
    response = await client.stream(REQUEST)
    assert response.content == [{"type": "text", "text": "fine"}]
    (retry,) = [e for e in events if isinstance(e, ApiRetry)]
    assert retry.reason == "malformed stream event"


async def test_a_stream_that_stays_malformed_ends_in_an_api_error() -> None:
    no_delta = [event("content_block_delta", index=0)]  # no .delta: AttributeError
    policy = RetryPolicy(max_attempts=2, base_delay_s=0.001)
    client = ModelClient(ScriptedSdk(no_delta, no_delta), policy)  # type: ignore[arg-type]
    with pytest.raises(ApiError, match="Gave up after 2 attempts: malformed stream event"):
        await client.stream(REQUEST)


# -- settings from the environment -------------------------------------------------------


def test_unparsable_retry_settings_are_ignored_with_a_notice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CCX_MAX_RETRIES", "abc")
    monkeypatch.setenv("CCX_RETRY_BASE_DELAY_MS", "fast")
    monkeypatch.setenv("CCX_STREAM_STALL_TIMEOUT_S", "0")
    policy = RetryPolicy.from_env()
    assert policy == RetryPolicy()
    assert len(policy.warnings) == 3 and "CCX_MAX_RETRIES" in policy.warnings[0]
    events: list[Event] = []
    ModelClient(None, policy, events.append)
    assert [e.text for e in events if isinstance(e, Notice)] == policy.warnings


def test_valid_retry_settings_still_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CCX_MAX_RETRIES", "2")
    monkeypatch.setenv("CCX_RETRY_BASE_DELAY_MS", "5")
    monkeypatch.setenv("CCX_STREAM_STALL_TIMEOUT_S", "1.5")
    policy = RetryPolicy.from_env()
    assert (policy.max_attempts, policy.base_delay_s, policy.stall_timeout_s) == (3, 0.005, 1.5)
    assert policy.warnings == []


# -- closing -----------------------------------------------------------------------------


async def test_aclose_closes_only_a_client_it_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    owned = ModelClient()
    made = owned.client
    await owned.aclose()
    assert made.is_closed()

    given = anthropic.AsyncAnthropic(api_key="test")
    await ModelClient(given).aclose()
    assert not given.is_closed()
    await given.close()


async def test_a_response_keeps_only_blocks_ccx_knows_and_words(
    api: FakeApi, caplog: pytest.LogCaptureFixture
) -> None:
    """Every later request sends the response back: an unknown block type or a blank text
    block in it would be refused there, and in every request after."""
    thinking = {"type": "thinking", "thinking": "let me see", "signature": "sig_1"}
    redacted = {"type": "redacted_thinking", "data": "opaque"}
    api.add(
        Reply(
            content=[
                thinking,
                redacted,
                {"type": "brand_new_block", "data": {"x": 1}},
                {"type": "text", "text": " \n "},
                {"type": "text", "text": "Answer."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}},
            ]
        )
    )
    with caplog.at_level("WARNING", logger="agent.model.accumulator"):
        response = await client_for(api, []).stream(REQUEST)
    assert [block["type"] for block in response.content] == [
        "thinking", "redacted_thinking", "text", "tool_use",
    ]  # fmt: skip
    assert response.content[0] == thinking and response.content[1] == redacted
    assert "brand_new_block" in caplog.text


async def test_a_response_of_only_unknown_blocks_has_no_content(api: FakeApi) -> None:
    api.add(Reply(content=[{"type": "brand_new_block"}, {"type": "text", "text": ""}]))
    response = await client_for(api, []).stream(REQUEST)
    assert response.content == []
