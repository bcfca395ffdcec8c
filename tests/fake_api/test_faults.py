"""Faults reach the real SDK as the exceptions a client must handle; the server survives them."""

from __future__ import annotations

import threading
import time

import anthropic
import httpx2
import pytest

from tests.fake_api.conftest import HELLO, MODEL, make_async_client, make_client
from tui.fake_api import Drop, FakeApi, Fault, Stall, StreamError, text_reply


@pytest.mark.parametrize(
    ("status", "exception", "error_type"),
    [
        (400, anthropic.BadRequestError, "invalid_request_error"),
        (401, anthropic.AuthenticationError, "authentication_error"),
        (403, anthropic.PermissionDeniedError, "permission_error"),
        (404, anthropic.NotFoundError, "not_found_error"),
        (413, anthropic.ContentTooLargeError, "request_too_large"),
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (503, anthropic.ServiceUnavailableError, "api_error"),
        (529, anthropic.OverloadedError, "overloaded_error"),
    ],
)
def test_fault_reaches_the_sdk_as_its_exception(
    api: FakeApi, client: anthropic.Anthropic, status: int, exception: type, error_type: str
) -> None:
    api.add(Fault(status))
    with (
        pytest.raises(exception) as caught,
        client.messages.stream(model=MODEL, max_tokens=10, messages=HELLO) as stream,
    ):
        stream.get_final_message()
    error = caught.value
    assert error.status_code == status and error.type == error_type
    assert error.body["type"] == "error" and error.body["error"]["type"] == error_type
    assert error.request_id == error.body["request_id"]
    assert api.requests[0].status == status
    assert api.errors == []  # a scripted fault is not a validation error


def test_rate_limit_carries_retry_after(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(Fault(429, retry_after=7, headers={"anthropic-ratelimit-tokens-remaining": "0"}))
    with pytest.raises(anthropic.RateLimitError) as caught:
        client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.response.headers["anthropic-ratelimit-tokens-remaining"] == "0"


def test_sdk_retries_honour_retry_after(api: FakeApi) -> None:
    api.add(Fault(529, retry_after=0.01), text_reply("after retry"))
    with make_client(api, max_retries=1) as client:
        message = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert message.content[0].text == "after retry"
    assert [request.status for request in api.requests] == [529, 200]


def test_prompt_too_long_has_the_api_wording(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(Fault.prompt_too_long(213_000, 200_000))
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert caught.value.type == "invalid_request_error"
    assert caught.value.api_message == "prompt is too long: 213000 tokens > 200000 maximum"


async def test_stream_error_raises_api_status_error_mid_stream(
    api: FakeApi, aclient: anthropic.AsyncAnthropic
) -> None:
    api.add(StreamError(after_events=3))
    texts: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as caught:
        async with aclient.messages.stream(model=MODEL, max_tokens=10, messages=HELLO) as stream:
            async for text in stream.text_stream:
                texts.append(text)
    error = caught.value
    assert type(error) is anthropic.APIStatusError  # status 200 maps to no subclass
    assert error.status_code == 200
    assert error.type == "overloaded_error" and error.api_message == "Overloaded"
    assert error.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    assert texts == ["This answer "]  # message_start, block start, one delta, then the error


def test_stream_error_with_sync_client_and_custom_type(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    api.add(StreamError(after_events=1, error_type="api_error", message="Internal server error"))
    api.add(text_reply("the connection is still usable"))
    stream = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO, stream=True)
    with pytest.raises(anthropic.APIStatusError) as caught:
        list(stream)
    assert caught.value.type == "api_error"
    after = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert after.content[0].text == "the connection is still usable"


def test_stream_error_on_a_non_streaming_request_is_an_http_error(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    api.add(StreamError())
    with pytest.raises(anthropic.OverloadedError):
        client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)


async def test_drop_breaks_the_connection_mid_stream(
    api: FakeApi, aclient: anthropic.AsyncAnthropic
) -> None:
    api.add(Drop(after_events=4), text_reply("a new connection works"))
    texts: list[str] = []
    with pytest.raises(anthropic.APIConnectionError, match="incomplete chunked read") as caught:
        async with aclient.messages.stream(model=MODEL, max_tokens=10, messages=HELLO) as stream:
            async for text in stream.text_stream:
                texts.append(text)
    assert texts == ["This answer ", "is cut off p"]
    assert isinstance(caught.value.__cause__, httpx2.RemoteProtocolError)
    again = await aclient.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert again.content[0].text == "a new connection works"
    assert api.connections_accepted == 2


def test_drop_with_sync_client_and_non_streaming(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(Drop(), Drop())
    # mid-stream the SDK wraps the transport error, as it does before any response
    with pytest.raises(anthropic.APIConnectionError) as caught:
        list(client.messages.create(model=MODEL, max_tokens=10, messages=HELLO, stream=True))
    assert isinstance(caught.value.__cause__, httpx2.TransportError)
    with pytest.raises(anthropic.APIConnectionError):
        client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)


def test_stall_is_detected_by_a_client_read_timeout(api: FakeApi) -> None:
    api.add(Stall(after_events=2, seconds=30))
    timeout = httpx2.Timeout(5.0, read=0.2)
    with make_client(api, timeout=timeout) as client:
        stream = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO, stream=True)
        received = []
        started = time.perf_counter()
        with pytest.raises(anthropic.APITimeoutError):
            for event in stream:
                received.append(event.type)
    assert 0.15 < time.perf_counter() - started < 2
    assert received == ["message_start", "content_block_start"]
    started = time.perf_counter()
    api.stop()  # interrupts the 30 s stall at once
    assert time.perf_counter() - started < 1


def test_short_stall_then_the_stream_goes_on(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(Stall(after_events=1, seconds=0.1, reply=text_reply("complete anyway")))
    started = time.perf_counter()
    with client.messages.stream(model=MODEL, max_tokens=10, messages=HELLO) as stream:
        assert stream.get_final_text() == "complete anyway"
    assert time.perf_counter() - started >= 0.1


def test_stall_before_a_non_streaming_response_times_out(api: FakeApi) -> None:
    api.add(Stall(seconds=30))
    with (
        make_client(api, timeout=httpx2.Timeout(5.0, read=0.2)) as client,
        pytest.raises(anthropic.APITimeoutError),
    ):
        client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)


def _fake_api_threads() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name != "MainThread"}


def test_stop_is_prompt_and_leaves_no_threads() -> None:
    before = _fake_api_threads()
    api = FakeApi([text_reply("idle connection"), Stall(seconds=60)]).start()
    client = make_client(api, timeout=httpx2.Timeout(30.0))
    client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)  # leaves a pooled connection
    outcome: list[BaseException] = []

    def stalled_request() -> None:
        try:
            with make_client(api, timeout=httpx2.Timeout(30.0)) as other:
                list(other.messages.create(model=MODEL, max_tokens=10, messages=HELLO, stream=True))
        except BaseException as exc:  # the stop cuts the stream
            outcome.append(exc)

    waiter = threading.Thread(target=stalled_request)
    waiter.start()
    while len(api.requests) < 2:
        time.sleep(0.005)
    started = time.perf_counter()
    api.stop()
    assert time.perf_counter() - started < 1
    waiter.join(5)
    client.close()
    assert not waiter.is_alive() and outcome
    assert _fake_api_threads() == before
    api.stop()  # a second stop is harmless


def test_client_disconnects_leave_stderr_silent(capfd: pytest.CaptureFixture[str]) -> None:
    long_reply = text_reply("word " * 400, chunk_chars=5, tokens_per_s=20_000)
    with FakeApi([long_reply, Drop(), text_reply("fine")]) as api:
        with make_client(api) as client:
            stream = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO, stream=True)
            next(iter(stream))
            stream.close()  # hang up mid-stream: the server's next write fails
        with make_client(api) as client, pytest.raises(anthropic.APIConnectionError):
            list(client.messages.create(model=MODEL, max_tokens=10, messages=HELLO, stream=True))
        with make_client(api) as client:
            client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""
    assert api.errors == []


async def test_async_faults_and_retries(api: FakeApi) -> None:
    api.add(Fault(500, retry_after=0.01), text_reply("second attempt"))
    async with make_async_client(api, max_retries=1) as client:
        message = await client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert message.content[0].text == "second attempt"


def test_a_client_killed_while_sending_made_no_request(api: FakeApi) -> None:
    """Headers and half a body, then the client dies: not a request the API would refuse."""
    import socket

    host, port = api.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: k\r\n"
            b'anthropic-version: 2023-06-01\r\ncontent-length: 500\r\n\r\n{"model": "cla'
        )
        sock.shutdown(socket.SHUT_WR)
        assert sock.recv(100) == b""  # closed without an answer
    api.add(text_reply("the next client is served"))
    with make_client(api) as client:
        message = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
    assert message.content[0].text == "the next client is served"
    assert len(api.requests) == 1 and api.errors == []
