"""Where `ccx demo`'s tour stands, read from the request alone: the scripted model is stateless.

The tour's progress is the number of tool-calling assistant messages since the
latest summary (with the calls clearing folded away, which its notes count), plus
the count that summary recorded ("Tour progress: N steps
done, automatic compaction at step M"), so the tour carries on across
compactions, interrupts and `continue`. What the user last typed comes from the
latest plain user message, or from a summary's <user-request> after a compaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from compaction.fold import Fold
from compaction.read_state import REREAD_OPENING
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from tui.fake_api import RecordedRequest

PROGRESS = re.compile(
    r"Tour progress: (\d+) steps? done, automatic compaction at step (\d+|pending)"
)
USER_REQUEST = re.compile(r"<user-request>\n(.*?)\n</user-request>", re.DOTALL)
MACHINERY = (
    "<system-reminder>",
    "[Request interrupted",
    "Your last response was cut off",
    "Contents of ",
    "The current plan, from",
    "Background tasks still running",
    "[Summarize ",
    REREAD_OPENING,
)
# Only an automatic compaction's summary message tells the model to go straight on.
AUTO_COMPACTION_MARK = "Continue the work from where it stopped"


def message_texts(message: dict[str, Any]) -> list[str]:
    """The text blocks of a request's message (a plain string content is one)."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"] for b in content if b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def message_blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The blocks of one ``kind`` (tool_use, tool_result, ...) of a request's message."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def is_summary_request(request: RecordedRequest) -> bool:
    return SUMMARY_MARK in request.last_user_text()


def latest_prompt(messages: list[dict[str, Any]]) -> str | None:
    """What the user last typed (from a summary's <user-request> after a compaction)."""
    for message in reversed(messages):
        if message.get("role") != "user" or message_blocks(message, "tool_result"):
            continue
        for text in message_texts(message):
            if "<summary>" in text:
                found = USER_REQUEST.search(text)
                return found.group(1) if found else None
            if (
                text.strip()
                and not text.lstrip().startswith(MACHINERY)
                and SUMMARY_MARK not in text
            ):
                return text
    return None


@dataclass(frozen=True)
class Progress:
    done: int  # tool-calling tour steps so far
    compacted_at: int | None  # steps done at the first automatic compaction
    fresh: bool  # a summary was just put in place and nothing has been said since


def tour_progress(messages: list[dict[str, Any]]) -> Progress:
    """Steps recorded by the latest summary plus the tool calls made after it.

    A manual /compact does not end the reading phase: the tour goes on until
    the context fills and compacts by itself.
    """
    start, base, compacted_at, summarized = 0, 0, None, False
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") != "user":
            continue
        for text in message_texts(messages[index]):
            if found := PROGRESS.search(text):
                start, base, summarized = index, int(found.group(1)), True
                if found.group(2) != "pending":
                    compacted_at = int(found.group(2))
                elif AUTO_COMPACTION_MARK in text:  # this summary is the automatic compaction
                    compacted_at = base
                break
        if summarized:
            break
    later = [m for m in messages[start:] if m.get("role") == "assistant"]
    calls = sum(1 for message in later if message_blocks(message, "tool_use"))
    calls += sum(folded_calls(m) for m in messages[start:] if m.get("role") == "user")
    return Progress(base + calls, compacted_at, summarized and not later)


def folded_calls(message: dict[str, Any]) -> int:
    """The calls the fold notes in a user message count (each tour step makes one call)."""
    folds = (Fold.parse(text) for text in message_texts(message))
    return sum(sum(fold.calls.values()) for fold in folds if fold is not None)


def answered_since_last_call(messages: list[dict[str, Any]]) -> bool:
    """True when a text-only assistant reply follows the last tool-calling one."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return not message_blocks(message, "tool_use")
    return False


def tool_result_of(messages: list[dict[str, Any]], tool: str) -> dict[str, Any] | None:
    ids = {
        block.get("id")
        for message in messages
        if message.get("role") == "assistant"
        for block in message_blocks(message, "tool_use")
        if block.get("name") == tool
    }
    for message in reversed(messages):
        for block in message_blocks(message, "tool_result"):
            if block.get("tool_use_id") in ids:
                return block
    return None
