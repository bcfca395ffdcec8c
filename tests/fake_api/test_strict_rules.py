"""Block types, images, cache breakpoints, metadata, models and the SDK's own request types.

Each rule: the bad request is refused in the API's words, the fixed one is accepted.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import anthropic
import httpx2
import pytest

from tests.fake_api.conftest import HELLO, MODEL, make_client, refused_then_accepted
from tests.fake_api.test_validation import assistant, request, text, use, user
from tui.fake_api import FakeApi, text_reply
from tui.fake_api.sdk_types import check_sdk_types

EPHEMERAL = {"type": "ephemeral"}
MEDIA_TYPES = "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"


def image(media_type: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": "AAAA"}}


def pdf(media_type: str, data: str) -> dict[str, Any]:
    return {
        "type": "document",
        "source": {"type": "base64", "media_type": media_type, "data": data},
    }


PDF_DATA = base64.b64encode(b"%PDF-1.4\n%%EOF\n").decode()


def result(tool_id: str, content: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


def tool_loop(*content: Any) -> list[dict[str, Any]]:
    return [user("Look"), assistant(use("toolu_a")), user(result("toolu_a", list(content)))]


CASES = [
    (
        "unknown content block type",
        request(messages=[user(text("Hi"), {"type": "ccx_note", "text": "x"})]),
        "messages.0.content.1: Input tag 'ccx_note' found using 'type' does not match any of "
        "the expected tags: 'text', 'image', 'document', 'search_result', 'thinking', "
        "'redacted_thinking', 'tool_use', 'tool_result', 'server_tool_use', "
        "'web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result', "
        "'bash_code_execution_tool_result', 'text_editor_code_execution_tool_result', "
        "'tool_search_tool_result', 'mcp_tool_use', 'mcp_tool_result', 'container_upload', "
        "'compaction'",
        request(messages=[user(text("Hi"))]),
    ),
    (
        "image in a media type the API does not take",
        request(messages=[user(image("image/svg+xml"), text("What is this?"))]),
        f"messages.0.content.0.image.source.base64.media_type: {MEDIA_TYPES}",
        request(messages=[user(image("image/png"), text("What is this?"))]),
    ),
    (
        "bmp image inside a tool result",
        request(messages=tool_loop(text("the screenshot"), image("image/bmp"))),
        f"messages.2.content.0.tool_result.content.1.image.source.base64.media_type: {MEDIA_TYPES}",
        request(messages=tool_loop(text("the screenshot"), image("image/webp"))),
    ),
    (
        "a document in a media type other than PDF",
        request(messages=tool_loop(text("PDF a.pdf"), pdf("application/msword", PDF_DATA))),
        "messages.2.content.0.tool_result.content.1.document.source.base64.media_type: "
        "Input should be 'application/pdf'",
        request(messages=tool_loop(text("PDF a.pdf"), pdf("application/pdf", PDF_DATA))),
    ),
    (
        "a document whose bytes are not a PDF",
        request(messages=[user(pdf("application/pdf", "aGVsbG8gd29ybGQ="), text("Sum it up"))]),
        "messages.0.content.0.document.source.base64.data: The PDF specified was not valid.",
        request(messages=[user(pdf("application/pdf", PDF_DATA), text("Sum it up"))]),
    ),
    (
        "unknown block type inside a tool result",
        request(messages=tool_loop({"type": "audio", "data": "x"})),
        "messages.2.content.0.tool_result.content.0: Input tag 'audio' found using 'type' does "
        "not match any of the expected tags: 'text', 'image', 'document', 'search_result', "
        "'tool_reference'",
        request(messages=tool_loop(text("the sound, described"))),
    ),
    (
        "whitespace-only text inside a tool result",
        request(messages=tool_loop(text(" \n"))),
        "messages.2.content.0.content: text content blocks must contain non-whitespace text",
        request(messages=tool_loop(text("(no output)"))),
    ),
    (
        "cache_control on an empty text block",
        request(messages=[user(text("Run it"), text("", cache_control=EPHEMERAL))]),
        "messages.0.content.1.text: cache_control cannot be set for empty text blocks",
        request(messages=[user(text("Run it", cache_control=EPHEMERAL))]),
    ),
    (
        "cache_control on an empty system block",
        request(system=[text("You are ccx."), text("", cache_control=EPHEMERAL)]),
        "system.1.text: cache_control cannot be set for empty text blocks",
        request(system=[text("You are ccx.", cache_control=EPHEMERAL)]),
    ),
    (
        "whitespace-only system block",
        request(system=[text("You are ccx."), text("  \n")]),
        "system: text content blocks must contain non-whitespace text",
        request(system=[text("You are ccx.")]),
    ),
    (
        "metadata with a key besides user_id",
        request(metadata={"user_id": "u1", "session": "s"}),
        "metadata.session: Extra inputs are not permitted",
        request(metadata={"user_id": "u1"}),
    ),
    (
        "metadata user_id not a string",
        request(metadata={"user_id": 42}),
        "metadata.user_id: Input should be a valid string",
        request(metadata={"user_id": "42"}),
    ),
    (
        "metadata user_id over 256 characters",
        request(metadata={"user_id": "u" * 257}),
        "metadata.user_id: String should have at most 256 characters",
        request(metadata={"user_id": "u" * 256}),
    ),
    (
        "a top-level field the API does not have",
        request(max_thinking_tokens=8000),
        "max_thinking_tokens: Extra inputs are not permitted",
        request(),
    ),
    (
        "a field a text block does not have",
        request(messages=[user(text("Hi", citation="x"))]),
        "messages.0.content.0.text.citation: Extra inputs are not permitted",
        request(messages=[user(text("Hi"))]),
    ),
    (
        "a tool with a field tools do not have",
        request(tools=[{"name": "Read", "input_schema": {"type": "object"}, "mutating": True}]),
        "tools.0.mutating: Extra inputs are not permitted",
        request(tools=[{"name": "Read", "input_schema": {"type": "object"}}]),
    ),
    (
        "a stop_sequences that is not a list of strings",
        request(stop_sequences=[1]),
        "stop_sequences.0: Input should be a valid string",
        request(stop_sequences=["\n\nHuman:"]),
    ),
    (
        "a 200K model over its window without the 1M beta",
        request(model="claude-sonnet-4-5", messages=[user("x" * 800_004)]),
        "prompt is too long: 200001 tokens > 200000 maximum",
        request(model="claude-sonnet-4-5", messages=[user("x" * 800_000)]),
    ),
]


@pytest.mark.refusal_expected
@pytest.mark.parametrize(
    ("bad", "message", "good"),
    [pytest.param(bad, message, good, id=name) for name, bad, message, good in CASES],
)
def test_rule_refuses_bad_and_accepts_fixed_request(
    api: FakeApi,
    client: anthropic.Anthropic,
    bad: dict[str, Any],
    message: str,
    good: dict[str, Any],
) -> None:
    refused_then_accepted(api, client, bad, message, good)


def test_a_200k_model_gets_1m_with_the_long_context_beta(api: FakeApi) -> None:
    api.add(text_reply("read it all"))
    big = [user("x" * 3_000_000)]  # 750K tokens
    headers = {"anthropic-beta": "context-1m-2025-08-07"}
    with make_client(api, default_headers=headers) as client:
        message = client.messages.create(model="claude-sonnet-4-5", max_tokens=10, messages=big)
    assert message.content[0].text == "read it all"
    assert api.errors == []


@pytest.mark.refusal_expected
def test_the_long_context_beta_does_not_widen_a_model_without_it(api: FakeApi) -> None:
    headers = {"anthropic-beta": "context-1m-2025-08-07"}
    big = [user("x" * 1_000_000)]  # 250K tokens
    too_long = pytest.raises(anthropic.BadRequestError, match="prompt is too long: 250000 tokens")
    with make_client(api, default_headers=headers) as client, too_long:
        client.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=big)


@pytest.mark.refusal_expected
@pytest.mark.parametrize("model", ["opusplan", "sonnet[1m]", "best", "fable", "claude-opus-4-9"])
def test_model_names_the_api_does_not_know_are_404(
    api: FakeApi, client: anthropic.Anthropic, model: str
) -> None:
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.messages.create(model=model, max_tokens=10, messages=HELLO)
    assert caught.value.type == "not_found_error"
    assert caught.value.api_message == f"model: {model}"
    with pytest.raises(anthropic.NotFoundError, match=re.escape(f"model: {model}")):
        client.models.retrieve(model)


def test_fable_is_listed_with_its_limits(client: anthropic.Anthropic) -> None:
    info = client.models.retrieve("claude-fable-5-2")
    assert (info.max_input_tokens, info.max_tokens) == (1_000_000, 128_000)
    assert info.display_name == "Claude Fable 5.2"


def test_a_refused_request_is_counted_and_a_scripted_fault_is_not() -> None:
    from tui.fake_api import Fault, accounting

    before_requests, before_refusals = accounting.totals()
    with FakeApi([Fault(529)]) as api, make_client(api) as client:
        with pytest.raises(anthropic.InternalServerError):
            client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
        assert api.errors == []
    requests, refusals = accounting.totals()
    assert (requests - before_requests, refusals - before_refusals) == (1, 0)


@pytest.mark.refusal_expected
def test_a_refusal_is_counted_with_its_message() -> None:
    from tui.fake_api import accounting

    _, mark = accounting.totals()
    with FakeApi() as api, make_client(api) as client, pytest.raises(anthropic.BadRequestError):
        client.messages.create(model=MODEL, max_tokens=10, messages=[user(" ")])
    (refusal,) = accounting.refusals_since(mark)
    assert (refusal.path, refusal.status) == ("/v1/messages", 400)
    assert refusal.message == "messages: text content blocks must contain non-whitespace text"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (request(stream=True), None),
        (request(temperature=0.2), "temperature: Extra inputs are not permitted"),  # gone from the SDK
        (request(tool_choice={"type": "auto", "disable_parallel_tool_use": "maybe"}), "tool_choice.auto.disable_parallel_tool_use: Input should be a valid boolean, unable to interpret input"),
        (request(messages=[user(text("Hi")), assistant(text("Hello", cache_control={"type": "persistent"}))]), "messages.1.content.0.text.cache_control.type: Input should be 'ephemeral'"),
        (request(messages=[user(use("toolu_a"))]), None),  # shape only: pairing is another rule
    ],
)  # fmt: skip
def test_the_sdk_types_check_in_the_apis_words(body: dict[str, Any], message: str | None) -> None:
    rejection = check_sdk_types(body)
    assert (rejection and rejection.message) == message


def test_every_request_ccx_style_clients_send_passes_the_sdk_types() -> None:
    """What the SDK itself builds from typed arguments passes its own types here."""
    with FakeApi([text_reply("ok")] * 2) as api, make_client(api) as client:
        client.messages.create(
            model=MODEL,
            max_tokens=2_000,
            system=[{"type": "text", "text": "You are ccx.", "cache_control": EPHEMERAL}],
            messages=[user(text("Hi", cache_control=EPHEMERAL))],
            tools=[
                {"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}}
            ],
            tool_choice={"type": "auto"},
            thinking={"type": "adaptive", "display": "summarized"},
            output_config={"effort": "high"},
            metadata={"user_id": "user_abc"},
        )
        with client.messages.stream(model=MODEL, max_tokens=10, messages=HELLO) as stream:
            stream.until_done()
    assert api.errors == []


@pytest.mark.refusal_expected
def test_an_unknown_endpoint_is_a_refusal(api: FakeApi) -> None:
    with httpx2.Client(base_url=api.url, trust_env=False) as http:
        answer = http.post("/v1/complete", json={}, headers={"x-api-key": "k"})
    assert answer.status_code == 404
    assert api.errors == ["fake_api: no such endpoint: POST /v1/complete"]
