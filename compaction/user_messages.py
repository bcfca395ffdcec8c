"""Every message the user typed, carried verbatim through any compaction (SPEC 3.5, beyond the reference).

A summary paraphrases, and what users lose to it first is exactly what they
typed: corrections, constraints, "not that file". So the summary message of
every compaction (full, partial, session memory) carries the user's own
messages word for word, oldest first, in a ``<user-messages>`` block, within
a budget scaled to the window (``budget_for``: 5% of the effective window).
What the user typed means prompts: not tool results, not ccx's reminders.

Sources, in order: the earlier summaries being replaced (their blocks, so the
messages survive compaction after compaction) and the prompt messages being
replaced. Prompts the compaction keeps verbatim anyway (kept messages) are
not repeated. The latest request keeps its own ``<user-request>`` block as
before, so it is not listed twice.

When they do not fit, the first message (the session's task, which every
later message refines) stays and the oldest after it are left out, newest
kept; the block says how many were left out, counted across compactions,
and that the transcript holds them. A single message over the budget keeps
its start, with a marker saying how much was cut.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agent.core.context_state import ContextLimits
from agent.core.messages import Message

SHARE = 0.05  # of the effective window
CHARS_PER_TOKEN = 4
_BLOCK = re.compile(r'<user-messages omitted="(\d+)">\n(.*?)\n</user-messages>', re.DOTALL)
_ONE = re.compile(r"<user-message>\n(.*?)\n</user-message>", re.DOTALL)
_REQUEST = re.compile(r"<user-request>\n(.*?)\n</user-request>", re.DOTALL)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


@dataclass(frozen=True)
class UserMessages:
    texts: list[str]  # oldest first, the ones that fit
    omitted: int  # left out, here and in earlier compactions

    def render(self, transcript_path: object = None) -> str | None:
        if not self.texts and not self.omitted:
            return None
        where = f" ({transcript_path})" if transcript_path else ""
        head = (
            "Every message the user typed in this session before the latest, verbatim, oldest first"
        )
        if self.omitted:
            head += (
                f"; {self.omitted} of them, after the first, are left out here to save room, and "
                f"the transcript{where} holds them all"
            )
        body = "\n".join(f"<user-message>\n{text}\n</user-message>" for text in self.texts)
        return f'{head}:\n<user-messages omitted="{self.omitted}">\n{body}\n</user-messages>'


def budget_for(limits: ContextLimits) -> int:
    """Tokens the user's messages may take in a summary message."""
    return int(limits.effective * SHARE)


def typed_text(message: Message) -> str | None:
    """What the user typed in a prompt message, without ccx's reminders; None for anything else."""
    if message.role != "user" or message.kind != "prompt":
        return None
    text = _REMINDER.sub("", message.text()).strip()
    return text or None


def collect(replaced: Sequence[Message], kept: Iterable[Message]) -> tuple[list[str], int]:
    """The user's messages from what a compaction replaces, oldest first, and the count an
    earlier compaction left out. Prompts among ``kept`` are skipped (they stay visible)."""
    kept_ids = {message.uuid for message in kept}
    texts: list[str] = []
    omitted = 0
    for message in replaced:
        if message.uuid in kept_ids:
            continue
        if message.kind == "summary":
            block_texts, block_omitted = _from_summary(message.text())
            texts += block_texts
            omitted += block_omitted
        elif (text := typed_text(message)) is not None:
            texts.append(text)
    return texts, omitted


def _from_summary(text: str) -> tuple[list[str], int]:
    """The messages an earlier summary message carried, its latest request last."""
    texts: list[str] = []
    omitted = 0
    if block := _BLOCK.search(text):
        omitted = int(block.group(1))
        texts = _ONE.findall(block.group(2))
    if request := _REQUEST.search(text):
        texts.append(request.group(1))
    return texts, omitted


def fit(texts: list[str], budget_tokens: int, omitted: int = 0) -> UserMessages:
    """The first message, then the newest that fit in ``budget_tokens`` (see the module docstring)."""
    if not texts:
        return UserMessages([], omitted)
    room = budget_tokens * CHARS_PER_TOKEN
    first = _cut(texts[0], room)
    room -= len(first)
    newest: list[str] = []
    for text in reversed(texts[1:]):
        if len(text) > room:
            break
        newest.append(text)
        room -= len(text)
    left_out = len(texts) - 1 - len(newest)
    return UserMessages([first, *reversed(newest)], omitted + left_out)


def _cut(text: str, room: int) -> str:
    if len(text) <= room:
        return text
    keep = max(0, room - 120)
    return f"{text[:keep]}\n[... {len(text) - keep:,} more characters of this message are in the transcript]"


def for_summary(
    replaced: Sequence[Message],
    kept: Iterable[Message],
    latest: str | None,
    limits: ContextLimits,
) -> UserMessages:
    """What a summary message carries besides the latest request (which has its own block)."""
    texts, omitted = collect(replaced, kept)
    if latest is not None and texts and texts[-1] == latest:
        texts = texts[:-1]  # the latest request is quoted on its own
    budget = budget_for(limits) - len(latest or "") // CHARS_PER_TOKEN
    return fit(texts, max(0, budget), omitted)
