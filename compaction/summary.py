"""The words of a full compaction: the request to the summarizer and the message that replaces history."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

from agent.core.messages import ContentBlock, Message, ToolResultPart, text_block

PROMPTS = Path(__file__).with_name("prompts")
# Words every summary request carries, by which a gateway or the fake API can tell one apart.
SUMMARY_REQUEST_MARK = "This turn is only for writing a summary"
PartialMode = Literal["from", "up_to"]
FROM_MARK = "[Summarize from here: the messages after this point are the ones to summarize.]"

# An analysis left unclosed ends where the summary starts, or else at the end of the reply.
_ANALYSIS = re.compile(r"<analysis>.*?(?:</analysis>|(?=<summary>)|$)", re.DOTALL | re.IGNORECASE)
_SUMMARY = re.compile(r"<summary>(.*?)(</summary>|$)", re.DOTALL | re.IGNORECASE)


def summary_prompt(instructions: str | None = None, partial: PartialMode | None = None) -> str:
    name = {"from": "partial_from.md", "up_to": "partial_up_to.md"}.get(partial or "", "summary.md")
    prompt = (PROMPTS / name).read_text(encoding="utf-8").strip()
    if instructions and instructions.strip():
        prompt += (
            "\n\nThe user gave these instructions for this summary; follow them, they take "
            f"precedence over the guidance above where they differ:\n{instructions.strip()}"
        )
    return prompt


def format_summary(reply: str) -> str:
    """The summary without its scratch analysis; the reply itself when it has no tags."""
    without_analysis = _ANALYSIS.sub("", reply)
    match = _SUMMARY.search(without_analysis)
    text = match.group(1) if match else without_analysis
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def has_summary_section(reply: str) -> bool:
    """Whether the reply has a <summary> with something in it, outside the analysis."""
    match = _SUMMARY.search(_ANALYSIS.sub("", reply))
    return match is not None and bool(match.group(1).strip())


def summary_message_text(
    summary: str,
    *,
    transcript_path: Path | str | None,
    latest_request: str | None,
    auto: bool,
    partial: PartialMode | None = None,
    user_messages: str | None = None,
) -> str:
    """The message that stands for what was summarized; ``user_messages`` is the block of the
    user's earlier messages, verbatim (``compaction.user_messages``)."""
    if partial == "from":
        opening = "The messages above are kept as they were. What came after them was summarized:"
    elif partial == "up_to":
        opening = "The start of this session was summarized; the messages after this one are kept as they were."
    else:
        opening = (
            "This session continues an earlier conversation that grew too long for the context "
            "window. Here is a summary of it."
        )
    parts = [opening]
    if transcript_path:
        parts.append(
            f"The complete transcript is saved at {transcript_path}; Read or Grep it when you need "
            "exact details that the summary leaves out."
        )
    parts.append(f"<summary>\n{summary}\n</summary>")
    if user_messages:
        parts.append(user_messages)
    if latest_request:
        parts.append(
            f"The user's most recent request, verbatim:\n<user-request>\n{latest_request}\n</user-request>"
        )
    if auto:
        parts.append(
            "Continue the work from where it stopped. Do not recap and do not ask the user to "
            "confirm anything: go straight on with the next step."
        )
    return "\n\n".join(parts)


def latest_user_request(messages: Sequence[Message]) -> str | None:
    """The last thing the user typed (not tool results, not ccx's own reminders)."""
    for message in reversed(messages):
        if message.role == "user" and message.kind == "prompt":
            text = message.text().strip()
            if text:
                return _strip_reminders(text)
    return None


def _strip_reminders(text: str) -> str:
    return re.sub(r"<system-reminder>.*?</system-reminder>", "", text, flags=re.DOTALL).strip()


def strip_media(messages: list[Message]) -> list[Message]:
    """Images become "[image]" and documents "[document]", inside tool results too."""
    out = []
    for message in messages:
        if not any(_has_media(block) for block in message.content):
            out.append(message)
            continue
        content = [_without_media(block) for block in message.content]
        out.append(replace(message, content=content))
    return out


def _has_media(block: ContentBlock) -> bool:
    if block["type"] == "image" or block["type"] == "document":
        return True
    if block["type"] != "tool_result":
        return False
    content = block.get("content")
    return isinstance(content, list) and any(_is_media(b) for b in content)


def _without_media(block: ContentBlock) -> ContentBlock:
    if block["type"] == "image" or block["type"] == "document":
        return text_block(f"[{block['type']}]")
    if block["type"] != "tool_result":
        return block
    content = block.get("content")
    if isinstance(content, list):
        replaced: list[ToolResultPart] = [
            text_block(f"[{b['type']}]") if _is_media(b) else b for b in content
        ]
        return {**block, "content": replaced}
    return block


def _is_media(part: ToolResultPart) -> bool:
    # read with get: a loaded transcript's tool results may hold parts of other types
    return part.get("type") in ("image", "document")


def latest_request(messages: Sequence[Message]) -> str | None:
    """The user's latest typed request; after an earlier compaction, the one its summary carried."""
    request = latest_user_request(messages)
    if request:
        return request
    for message in reversed(messages):
        if message.kind == "summary":
            text = message.text()
            start, end = text.find("<user-request>\n"), text.find("\n</user-request>")
            if start >= 0 and end > start:
                return text[start + len("<user-request>\n") : end]
    return None
