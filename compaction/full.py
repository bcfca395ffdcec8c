"""Full compaction's model call: one turn on a fork of the conversation that yields the summary.

The fork sends the same system prompt and tools as the main loop, and the
conversation as it is, so the request reads the main conversation's cached
prefix; only the summary prompt at the end is new. It must answer in text:
a reply that calls a tool is a failure. When the summary request itself is
too long, the oldest API rounds are dropped (enough to cover the reported
gap, else a fifth) and the call retried, up to three times.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from agent.core.messages import Message, TextBlock, user_text
from agent.core.request import build_request
from agent.core.thinking import side_request
from agent.model.client import ApiError, ModelClient, PromptTooLongError
from compaction.grouping import drop_oldest_groups
from compaction.summary import (
    FROM_MARK,
    PartialMode,
    format_summary,
    has_summary_section,
    strip_media,
    summary_prompt,
)

SUMMARY_MAX_OUTPUT = 20_000
MAX_PTL_RETRIES = 3


class CompactionError(Exception):
    """The summary could not be made; the conversation is left as it was."""


@dataclass
class SummaryResult:
    summary: str
    usage: dict[str, int]
    attempts: int = 1
    dropped_messages: int = 0
    duration_s: float = 0.0
    truncated: bool = False
    model: str | None = None


def summary_request_messages(
    messages: list[Message],
    instructions: str | None,
    partial: PartialMode | None,
    pivot: int | None,
) -> list[Message]:
    """What the summarizer sees: the conversation (or its older part) plus the summary prompt."""
    if partial == "up_to":
        assert pivot is not None
        conversation = list(messages[:pivot])
    elif partial == "from":
        assert pivot is not None
        conversation = [*messages[:pivot], user_text(FROM_MARK, kind="meta"), *messages[pivot:]]
    else:
        conversation = list(messages)
    conversation = strip_media([m for m in conversation if m.kind != "attachment"])
    return [*conversation, user_text(summary_prompt(instructions, partial), kind="meta")]


async def summarize(
    client: ModelClient,
    *,
    model: str,
    system: list[TextBlock],
    tools: list[dict[str, Any]],
    messages: list[Message],
    instructions: str | None = None,
    partial: PartialMode | None = None,
    pivot: int | None = None,
    max_output: int = SUMMARY_MAX_OUTPUT,
    request_extra: dict[str, Any] | None = None,
    output_limit: int | None = None,
) -> SummaryResult:
    """The summary; ``output_limit`` (the model's, default ``max_output``) bounds the room a
    thinking budget adds to ``max_output`` (agent.core.thinking.side_request)."""
    started = time.perf_counter()
    request_messages = summary_request_messages(messages, instructions, partial, pivot)
    prompt = request_messages[-1]
    dropped = 0
    for attempt in range(1, MAX_PTL_RETRIES + 2):
        extra, max_tokens = side_request(
            request_messages, request_extra or {}, max_output, output_limit or max_output
        )
        request = build_request(
            model=model,
            system=system,
            tools=tools,
            messages=request_messages,
            max_tokens=max_tokens,
            extra=extra,
        )
        try:
            response = await client.stream(request, stream_text=False)
        except PromptTooLongError as error:
            if attempt > MAX_PTL_RETRIES:
                raise CompactionError(
                    f"the conversation is too long to summarize: {error.message}"
                ) from error
            trimmed = drop_oldest_groups(request_messages[:-1], error.gap)
            if trimmed is None:
                raise CompactionError("the conversation is too long to summarize") from error
            dropped += len(request_messages) - 1 - len(trimmed)
            request_messages = [*trimmed, prompt]
            continue
        except ApiError as error:
            raise CompactionError(f"the summary request failed: {error.message}") from error
        if any(block["type"] == "tool_use" for block in response.content):
            raise CompactionError(
                "the summarizer tried to call a tool instead of writing a summary"
            )
        text = "".join(block["text"] for block in response.content if block["type"] == "text")
        truncated = response.stop_reason == "max_tokens"
        if truncated and not has_summary_section(text):
            raise CompactionError(
                "the summary was cut at the output limit before any of it was written"
            )
        summary = format_summary(text)
        if not summary:
            raise CompactionError("the summarizer returned no summary")
        return SummaryResult(
            summary=summary,
            usage=response.usage,
            attempts=attempt,
            dropped_messages=dropped,
            duration_s=time.perf_counter() - started,
            truncated=truncated,
            model=response.model,
        )
    raise CompactionError(
        "the summary request kept failing"
    )  # pragma: no cover - loop always returns
