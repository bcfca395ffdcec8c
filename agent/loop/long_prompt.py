"""A user message too long to send whole: saved to a file, sent as a pointer with its head and tail.

One message larger than the context can hold (a 30 MB stream-json line, a huge piped
prompt or paste) would make every later request too long, so the session could never
answer again. A message whose text is over a quarter of the effective window (the model's,
or the smaller one the session's compaction works against, e.g. ``--autocompact``;
estimated at 4 characters a token), or over ``MAX_BYTES`` (far under the API's 32 MB
request limit), is therefore never sent whole: its text is saved in the session's folder
(``user-messages/<message id>.txt``, the text blocks joined by blank lines) and the model
gets, in place of its text blocks, the file's path and size and the message's first
``HEAD_CHARS`` and last ``TAIL_CHARS`` characters, told to Read or Grep the file for the
rest. Other blocks (images) stay as they are. The conversation and the transcript hold
what was sent; the file holds the whole. A message that cannot be saved is not sent
(``PromptNotSaved``), so nothing is lost either way.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from agent.core.context_state import ContextLimits, ModelWindow
from agent.core.messages import ContentBlock, TextBlock, text_block
from tools.atomic_file import atomic_write

WINDOW_SHARE = 4  # a message may take up to a quarter of the effective window
MAX_BYTES = 1 << 20
CHARS_PER_TOKEN = 4
HEAD_CHARS = 8_000
TAIL_CHARS = 4_000
READ_LINE_CHARS = 2_000  # Read cuts longer lines (tools.read_text.MAX_LINE_CHARS)
FOLDER = "user-messages"


class PromptNotSaved(Exception):
    """The message is too long to send whole and could not be saved; nothing was sent."""


@dataclass(frozen=True)
class PromptLimit:
    tokens: int  # estimated tokens of one message's text
    max_bytes: int = MAX_BYTES

    @classmethod
    def for_model(cls, limits: ModelWindow, window: int | None = None) -> PromptLimit:
        """A share of the effective window: the model's, or ``window`` when smaller (the
        window compaction keeps the context within, e.g. ``--autocompact``)."""
        return cls(ContextLimits.for_model(limits, window).effective // WINDOW_SHARE)

    def exceeded_by(self, text: str) -> bool:
        # Characters bound bytes from below: only a text near the limits is encoded.
        if len(text) > self.max_bytes or estimated_tokens(text) > self.tokens:
            return True
        return len(text) * 4 > self.max_bytes and _size(text) > self.max_bytes


def estimated_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def fit_prompt(
    content: list[ContentBlock], limit: PromptLimit, folder: Path, message_id: str
) -> list[ContentBlock]:
    """``content`` as it may be sent: itself, or (its text over ``limit``) its text saved to
    ``folder`` and its text blocks replaced by one pointer block. PromptNotSaved when the text
    is too long and cannot be saved."""
    texts = [block["text"] for block in content if block["type"] == "text"]
    text = "\n\n".join(texts)
    if not texts or not limit.exceeded_by(text):
        return content
    # The id may come from a client (stream-json): only a plain one names the file.
    name = message_id if re.fullmatch(r"[A-Za-z0-9_-]{1,100}", message_id) else uuid.uuid4()
    path = folder / FOLDER / f"{name}.txt"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text.encode("utf-8", "surrogatepass"))
    except OSError as exc:
        raise PromptNotSaved(
            f"This message is too long to send whole ({_size(text):,} bytes, about "
            f"{estimated_tokens(text):,} tokens) and could not be saved to {path}: {exc}. "
            "Nothing was sent."
        ) from None
    pointer: TextBlock | None = text_block(pointer_text(text, path, limit))
    out: list[ContentBlock] = []
    for block in content:  # the pointer where the first text block was
        if block["type"] != "text":
            out.append(block)
        elif pointer is not None:
            out.append(pointer)
            pointer = None
    return out


def pointer_text(text: str, path: Path, limit: PromptLimit) -> str:
    """What the model gets in place of the message: where it is, how big, its head and tail."""
    lines = text.count("\n") + (not text.endswith("\n"))
    head_end = _head_end(text)
    tail_start = _tail_start(text, head_end)
    first_cut = text.count("\n", 0, head_end) + 1
    last_start = text.count("\n", 0, tail_start) + 1
    long_lines = any(len(line) > READ_LINE_CHARS for line in text.split("\n"))
    read_hint = (
        f" Read's offset and limit count lines, and it cuts lines over {READ_LINE_CHARS:,} "
        "characters, so use Bash (`cut -c`, `head -c`, `tail -c`) for those."
        if long_lines
        else " Read's offset and limit count lines."
    )
    return (
        f"[This message was too long to send whole: {_size(text):,} bytes, {lines:,} lines, "
        f"about {estimated_tokens(text):,} tokens (one message may take about "
        f"{limit.tokens:,} here). The whole message is saved in {path}. Its first "
        f"{head_end:,} and last {len(text) - tail_start:,} characters follow; Read that "
        f"file in parts or Grep it for the rest.{read_hint}]\n\n"
        f"--- the beginning (line 1 to {first_cut:,}) ---\n{text[:head_end]}\n"
        f"--- {tail_start - head_end:,} characters not shown ---\n"
        f"--- the end (line {last_start:,} to {lines:,}) ---\n{text[tail_start:]}"
    )


def _head_end(text: str) -> int:
    """Where the head ends: after ``HEAD_CHARS``, or the last line break in its second half."""
    cut = text.rfind("\n", HEAD_CHARS // 2, HEAD_CHARS)
    return cut if cut != -1 else HEAD_CHARS


def _tail_start(text: str, head_end: int) -> int:
    """Where the tail starts: ``TAIL_CHARS`` from the end, or after the first line break in
    its first half; never inside the head."""
    start = max(len(text) - TAIL_CHARS, head_end)
    cut = text.find("\n", start, start + TAIL_CHARS // 2)
    return cut + 1 if cut != -1 else start


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
