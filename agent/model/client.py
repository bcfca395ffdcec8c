"""The model client: one streamed Messages API call, with retries, backoff and a stall detector.

Everything goes through the official ``anthropic`` SDK (``AsyncAnthropic``, or the
SDK's Bedrock / Vertex clients), always streaming. The SDK's own retries are
off: this module retries 429 / 529 / 5xx / dropped connections / an ``error``
event mid-stream / a silent stream itself, so each attempt is visible to the
user as an event and a partial response is never kept.

``anthropic`` is imported lazily, and only as far as a call needs it
(``agent.model.sdk_import``): neither ``ccx --version`` nor the TUI's first paint may
wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agent.core.cancellation import raise_if_cancelling
from agent.core.events import ApiRetry, EventSink, Notice, ResponseDiscarded, discard
from agent.core.gc_pause import collection_paused
from agent.model.accumulator import Accumulator, StreamedResponse
from agent.model.api_key_helper import ApiKeyHelperError
from agent.model.sdk_import import import_sdk
from tools.surrogates import escape_value

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic, AsyncAnthropicBedrock, AsyncAnthropicVertex

    SdkClient = AsyncAnthropic | AsyncAnthropicBedrock | AsyncAnthropicVertex

log = logging.getLogger(__name__)

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
RETRYABLE_STREAM_ERRORS = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
PROMPT_TOO_LONG = re.compile(r"prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)", re.IGNORECASE)


class ApiError(Exception):
    """A model call that failed for good (after retries, or not retryable)."""

    def __init__(self, message: str, *, status: int | None = None, error_type: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type


class PromptTooLongError(ApiError):
    """The API refused the request because the prompt exceeds the context window."""

    def __init__(self, message: str, tokens: int | None, maximum: int | None):
        super().__init__(message, status=400, error_type="invalid_request_error")
        self.tokens = tokens
        self.maximum = maximum

    @property
    def gap(self) -> int | None:
        if self.tokens is None or self.maximum is None:
            return None
        return self.tokens - self.maximum


class OverloadedError(ApiError):
    """Retries ran out on 529 / overloaded errors; a fallback model may help."""


class StreamStalled(Exception):
    """No event arrived on the stream for longer than the stall timeout."""


class MalformedStream(Exception):
    """A stream event did not have the shape the API documents; retried like a dropped stream."""


@dataclass
class RetryPolicy:
    max_attempts: int = 10
    base_delay_s: float = 0.5
    max_delay_s: float = 32.0
    stall_timeout_s: float = 90.0
    # environment values that could not be used, for the client to show
    warnings: list[str] = field(default_factory=list, compare=False)

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """The defaults, overridden by the CCX_* variables; an unparsable value is ignored."""
        policy = cls()
        if (retries := _env_number(policy, "CCX_MAX_RETRIES", int)) is not None:
            policy.max_attempts = max(1, int(retries) + 1)
        if (base_ms := _env_number(policy, "CCX_RETRY_BASE_DELAY_MS", float)) is not None:
            policy.base_delay_s = max(0.0, base_ms) / 1000
        if (stall := _env_number(policy, "CCX_STREAM_STALL_TIMEOUT_S", float)) is not None:
            if stall > 0:
                policy.stall_timeout_s = stall
            else:
                policy.warnings.append(f"Ignoring CCX_STREAM_STALL_TIMEOUT_S={stall}: not positive")
        return policy

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), 60.0)
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return backoff * (1 + random.random() * 0.25)


def _env_number(policy: RetryPolicy, name: str, kind: type[int] | type[float]) -> float | None:
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    try:
        number = kind(value)
    except ValueError:
        policy.warnings.append(f"Ignoring {name}={value!r}: not a number")
        return None
    if number != number or number in (float("inf"), float("-inf")):  # nan, inf
        policy.warnings.append(f"Ignoring {name}={value!r}: not a finite number")
        return None
    return number


def import_sdk_meanwhile() -> None:
    """Start importing the SDK on a thread: a `-p` run needs it for its first request, and
    it takes ~0.3 s of CPU. While the session is built it shares the GIL, but whatever waits
    (git, MCP servers starting on the other core) no longer waits in line before it.
    ``make_client``'s own import waits for this one (the import system's module lock) and
    raises what it raised."""

    def run() -> None:
        with contextlib.suppress(Exception), collection_paused():
            import_sdk()

    # pydantic, which the session's own modules import too, first and whole on this thread:
    # two threads entering one package's circular imports from different ends would make
    # Python refuse one import as a deadlock.
    with collection_paused():
        from pydantic import BaseModel, Field  # noqa: F401
    threading.Thread(target=run, name="ccx-sdk-import", daemon=True).start()


def make_client(provider: str | None = None) -> SdkClient:
    """The SDK client for the configured provider; credentials and base URL come from the env."""
    with collection_paused():  # the SDK's import makes hundreds of classes that all live on
        anthropic = import_sdk()

    provider = provider or _provider_from_env()
    if provider == "bedrock":
        return anthropic.AsyncAnthropicBedrock(max_retries=0)
    if provider == "vertex":
        return anthropic.AsyncAnthropicVertex(max_retries=0)
    base_url = os.environ.get("ANTHROPIC_BASE_URL", "")
    proxied = any(os.environ.get(k) for k in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"))
    if base_url.startswith("http://") and not proxied:
        # Plain HTTP never uses TLS: skip loading the CA bundle (about 50-100 ms at start).
        http_client = anthropic.DefaultAsyncHttpxClient(verify=False)
        return anthropic.AsyncAnthropic(max_retries=0, timeout=600.0, http_client=http_client)
    return anthropic.AsyncAnthropic(max_retries=0, timeout=600.0)


def _provider_from_env() -> str:
    if os.environ.get("CLAUDE_CODE_USE_BEDROCK") or os.environ.get("CCX_USE_BEDROCK"):
        return "bedrock"
    if os.environ.get("CLAUDE_CODE_USE_VERTEX") or os.environ.get("CCX_USE_VERTEX"):
        return "vertex"
    return "anthropic"


class KeyProvider(Protocol):
    """Gives the key for the next request (ApiKeyHelper, StoredKey); ApiKeyHelperError
    when there is none."""

    async def key(self) -> str: ...

    def invalidate(self) -> None: ...


class ModelClient:
    """Streams one response per call; owns retry, backoff and stall detection."""

    def __init__(
        self,
        client: SdkClient | None = None,
        policy: RetryPolicy | None = None,
        emit: EventSink = discard,
    ) -> None:
        self._client = client
        self._owns_client = client is None
        self.policy = policy or RetryPolicy.from_env()
        self.emit = emit
        self.raw_events = False  # every raw stream event out as a StreamEvent (stream-json)
        # Where the key comes from when not the environment: apiKeyHelper, or /login's.
        self.key_helper: KeyProvider | None = None
        self._key: str | None = None  # the helper's key the client was given
        for warning in self.policy.warnings:
            log.warning("%s", warning)
            emit(Notice(warning, "warning"))

    @property
    def client(self) -> SdkClient:
        if self._client is None:
            self._client = make_client()
        return self._client

    async def ready_client(self) -> SdkClient:
        """The SDK client with a current key (the apiKeyHelper's, when there is one);
        ApiError when the helper gives none."""
        if self.key_helper is not None:
            try:
                key = await self.key_helper.key()
            except ApiKeyHelperError as exc:
                raise ApiError(str(exc), status=401, error_type="authentication_error") from exc
            if key != self._key:
                anthropic = import_sdk()
                client = self.client
                if not isinstance(client, anthropic.AsyncAnthropic):
                    raise ApiError("apiKeyHelper works only with the Anthropic API's own client")
                self._key = key
                self._client = client.with_options(api_key=key)
        return self.client

    async def aclose(self) -> None:
        """Close the HTTP client if this object made it (a client passed in is its caller's)."""
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            await client.close()

    async def stream(
        self, request: dict[str, Any], *, stream_text: bool = True
    ) -> StreamedResponse:
        """One response for ``request``, retrying transient failures."""
        import httpx2

        anthropic = import_sdk()

        attempt = 0
        escaped = False
        key_renewed = False
        while True:
            raise_if_cancelling()  # an interrupt caught on its way sends no request
            attempt += 1
            accumulator = Accumulator(
                self.emit if stream_text else discard, self.raw_events and stream_text
            )
            try:
                response = await self._stream_once(request, accumulator)
                response.request_escaped = escaped
                return response
            except UnicodeEncodeError:
                # The last line of defence: text that is not UTF-8 got past the escaping
                # where it enters the conversation. Sent escaped; the caller heals its copy.
                if escaped:
                    raise
                log.warning("the request held text that is not valid UTF-8; sending it escaped")
                request, escaped, attempt = escape_value(request), True, attempt - 1
                continue
            except anthropic.APIStatusError as exc:
                if exc.status_code == 401 and self.key_helper is not None and not key_renewed:
                    # The helper's key was refused: run it again once for a fresh one.
                    self._discard_partial(accumulator, "retrying")
                    self.key_helper.invalidate()
                    key_renewed, attempt = True, attempt - 1
                    continue
                error = _classify_status_error(exc)
                if error is not None:
                    self._discard_partial(accumulator, "the request failed")
                    raise error from exc
                reason = f"{exc.status_code} {getattr(exc, 'type', None) or ''}".strip()
                retry_after = _retry_after(exc)
                overloaded = _is_overloaded(exc)
            except (
                anthropic.APIConnectionError,
                httpx2.TransportError,
                StreamStalled,
                MalformedStream,
            ) as exc:
                reason = _transient_reason(exc)
                retry_after = None
                overloaded = False
            if attempt >= self.policy.max_attempts:
                self._discard_partial(accumulator, "the request failed")
                message = f"Gave up after {attempt} attempts: {reason}"
                if overloaded:
                    raise OverloadedError(message, status=529, error_type="overloaded_error")
                raise ApiError(message)
            self._discard_partial(accumulator, "retrying")
            delay = self.policy.delay(attempt, retry_after)
            self.emit(ApiRetry(attempt, self.policy.max_attempts, round(delay, 3), reason))
            await asyncio.sleep(delay)

    def _discard_partial(self, accumulator: Accumulator, reason: str) -> None:
        """Tell the front end to drop text it showed from an attempt that is not kept."""
        if accumulator.streamed and accumulator.emit is not discard:
            self.emit(ResponseDiscarded(reason))

    async def _stream_once(
        self, request: dict[str, Any], accumulator: Accumulator
    ) -> StreamedResponse:
        started = time.perf_counter()
        client = await self.ready_client()
        stream = await client.messages.create(**request, stream=True)
        try:
            async with asyncio.timeout(self.policy.stall_timeout_s) as deadline:
                async for event in stream:
                    deadline.reschedule(
                        asyncio.get_running_loop().time() + self.policy.stall_timeout_s
                    )
                    accumulator.feed(event)
            response = accumulator.result()
        except TimeoutError as exc:
            raise StreamStalled() from exc
        except (KeyError, ValueError, AttributeError, TypeError) as exc:
            log.warning("malformed stream event: %s: %s", type(exc).__name__, exc)
            raise MalformedStream(f"{type(exc).__name__}: {exc}") from exc
        finally:
            await stream.close()
        response.duration_s = time.perf_counter() - started
        return response


def _classify_status_error(exc: Any) -> ApiError | None:
    """A non-retryable error as ApiError, or None when the request should be retried."""
    status = exc.status_code
    error_type = getattr(exc, "type", None)
    message = getattr(exc, "api_message", None) or str(exc)
    if status == 200:  # an `error` event after the stream had started
        if error_type in RETRYABLE_STREAM_ERRORS:
            return None
        return ApiError(f"Stream error: {message}", status=status, error_type=error_type)
    if status in RETRYABLE_STATUS or status >= 500:
        return None
    if status in (400, 413) and (match := PROMPT_TOO_LONG.search(message)):
        return PromptTooLongError(message, int(match.group(1)), int(match.group(2)))
    if status == 413 or "prompt is too long" in message.lower():
        return PromptTooLongError(message, None, None)
    if status == 401:
        message = (
            f"Authentication failed ({message}). Check ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN "
            "or the apiKeyHelper setting, or store another key with /login."
        )
    return ApiError(message, status=status, error_type=error_type)


def _transient_reason(exc: Exception) -> str:
    if isinstance(exc, StreamStalled):
        return "stream stalled"
    if isinstance(exc, MalformedStream):
        return "malformed stream event"
    return "connection error"


def _is_overloaded(exc: Any) -> bool:
    return exc.status_code == 529 or getattr(exc, "type", None) == "overloaded_error"


def _retry_after(exc: Any) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        if value := headers.get("retry-after-ms"):
            return float(value) / 1000
        if value := headers.get("retry-after"):
            return float(value)
    except ValueError:
        return None
    return None
