"""Fixtures: a running FakeApi and real `anthropic` clients pointed at it."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import pytest
from anthropic.types import Message

from tui.fake_api import FakeApi, text_reply

MODEL = "claude-sonnet-5-5"
HELLO = [{"role": "user", "content": "Hello"}]
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
# Loading CA certificates costs ~30 ms a client; the loopback server never uses TLS.
_SSL_CONTEXT = ssl.create_default_context()


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # A proxy from the environment must never see these requests.
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture
def api() -> Iterator[FakeApi]:
    with FakeApi() as server:
        yield server


def make_client(api: FakeApi, **kw: Any) -> anthropic.Anthropic:
    """A sync client on the fake server: no retries, no proxies from the environment."""
    kw.setdefault("api_key", "test-key")
    kw.setdefault("max_retries", 0)
    http_client = anthropic.DefaultHttpxClient(verify=_SSL_CONTEXT, trust_env=False)
    return anthropic.Anthropic(base_url=api.url, http_client=http_client, **kw)


def make_async_client(api: FakeApi, **kw: Any) -> anthropic.AsyncAnthropic:
    kw.setdefault("api_key", "test-key")
    kw.setdefault("max_retries", 0)
    http_client = anthropic.DefaultAsyncHttpxClient(verify=_SSL_CONTEXT, trust_env=False)
    return anthropic.AsyncAnthropic(base_url=api.url, http_client=http_client, **kw)


@pytest.fixture
def client(api: FakeApi) -> Iterator[anthropic.Anthropic]:
    with make_client(api) as sync_client:
        yield sync_client


@pytest.fixture
async def aclient(api: FakeApi) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with make_async_client(api) as async_client:
        yield async_client


def refused_then_accepted(
    api: FakeApi, client: anthropic.Anthropic, bad: dict[str, Any], message: str,
    good: dict[str, Any],
) -> None:  # fmt: skip
    """``bad`` gets the API's 400 with ``message`` and never reaches the script; ``good``, the
    same request fixed, is answered."""
    api.add(text_reply("accepted"))
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.post("/v1/messages", cast_to=Message, body=bad)
    assert caught.value.type == "invalid_request_error"
    assert caught.value.api_message == message
    assert api.errors == [message]
    assert api.script_remaining == 1
    accepted = client.post("/v1/messages", cast_to=Message, body=good)
    assert accepted.content[0].text == "accepted"
    assert api.errors == [message]
