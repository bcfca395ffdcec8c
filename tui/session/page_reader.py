"""WebFetch's page reader: the fast model answers the tool's prompt from the fetched page's text;
and ``FastModelCall``, the side call to the fast model it shares with WebSearch's searcher.

One streamed call through the official SDK, on the session's HTTP client but
with its own short retry policy and nothing shown on screen, counted under
the purpose ``web_fetch`` in /cost and the json result. A call that fails
raises, and the tool falls back to handing the page text to the session's
model (tools/web_fetch.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from agent.core.events import discard
from agent.core.messages import user_text
from agent.core.request import build_request
from agent.loop.cost import CostTracker
from agent.model.accumulator import StreamedResponse
from agent.model.catalog import fast_model
from agent.model.client import ModelClient, RetryPolicy
from tools.base import Tool
from tools.web_fetch import WebFetchTool

PURPOSE = "web_fetch"
READER_MAX_TOKENS = 4_096
READER_ATTEMPTS = 3  # a side call: the tool has a fallback, so it need not wait out a long outage
READER_SYSTEM = (
    "You read a single web page on behalf of a coding agent and answer its request from "
    "that page alone."
)
READER_GUIDANCE = (
    "Answer the request above from the page's content only, as briefly as the request "
    "allows; say so plainly when the page does not cover it. Keep any exact quotation short "
    "(a sentence or two, in quotation marks) and give the rest in your own words; never "
    "reproduce long passages, whole articles or song lyrics. Code, commands and API names "
    "may be copied exactly."
)


def reader_prompt(text: str, prompt: str, url: str) -> str:
    return f"The page {url}, as Markdown:\n<page>\n{text}\n</page>\n\n{prompt}\n\n{READER_GUIDANCE}"


class FastModelCall:
    """One side call to the fast model, nothing shown on screen: the SDK client and the
    costs looked up at call time (the client is made lazily: importing anthropic costs about
    a second at start-up; the costs belong to the live agent), a short retry policy (the
    caller has a fallback, so it need not wait out a long outage), the cost counted under
    ``purpose``. WebFetch's page reader and WebSearch's searcher are built on it."""

    def __init__(
        self, sdk_client: Callable[[], Any], costs: Callable[[], CostTracker], purpose: str
    ) -> None:
        self.sdk_client = sdk_client
        self.costs = costs
        self.purpose = purpose

    async def stream(
        self,
        system: str,
        prompt: str,
        max_tokens: int,
        tools: list[dict[str, Any]] | None = None,
    ) -> StreamedResponse:
        model = fast_model()
        policy = RetryPolicy.from_env()
        policy.max_attempts = min(policy.max_attempts, READER_ATTEMPTS)
        client = ModelClient(self.sdk_client(), policy=policy, emit=discard)
        request = build_request(
            model=model,
            system=[{"type": "text", "text": system}],
            tools=tools or [],
            messages=[user_text(prompt)],
            max_tokens=max_tokens,
        )
        started = time.perf_counter()
        response = await client.stream(request, stream_text=False)
        self.costs().add(
            response.model or model, response.usage, time.perf_counter() - started, self.purpose
        )
        return response


class PageReader:
    """Runs a WebFetch prompt over a page with the fast model; built once per session."""

    def __init__(self, sdk_client: Callable[[], Any], costs: Callable[[], CostTracker]) -> None:
        self.call = FastModelCall(sdk_client, costs, PURPOSE)

    async def __call__(self, text: str, prompt: str, url: str) -> str:
        response = await self.call.stream(
            READER_SYSTEM, reader_prompt(text, prompt, url), READER_MAX_TOKENS
        )
        answer = "".join(b["text"] for b in response.content if b["type"] == "text")
        if not answer.strip():
            raise ValueError(
                f"the fast model returned no text (stop reason {response.stop_reason})"
            )
        return answer.strip()


def connect_web_fetch(tools: Iterable[Tool[Any]], reader: PageReader) -> None:
    """Give the session's WebFetch tool its page reader."""
    for tool in tools:
        if isinstance(tool, WebFetchTool):
            tool.read_page = reader
