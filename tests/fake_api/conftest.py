"""Fixtures: a running FakeApi and real `anthropic` clients pointed at it."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import pytest

from agent.fake_api import FakeApi

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
