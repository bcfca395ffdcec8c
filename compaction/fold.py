"""Folding: old tool rounds whose results were cleared leave the prompt, with a note.

After a clear, what is left of an old round is its call and a marker, 40 to 90
tokens read again at every later request; a long tool loop piles up hundreds of
them (on the spotter replays of bench/economics.py, 7-9K tokens a request at a
120K window, a tenth of what a session costs). A clear rewrites the prompt from
its change point anyway, so folding rounds after that point costs no extra
cache write, and what is rewritten gets shorter.

A round folds when

- the response is tool calls, with or without words beside them, and no
  thinking (a clear drops earlier thinking where it rewrites; the continued
  loop's response keeps its own and never folds);
- the next message answers exactly those calls and nothing else, each result a
  marker that names no saved output, or one too small to be worth clearing
  that is not a Read's (a small file's text stays in view);
- it lies after the clear's change point and after the last compaction's
  messages, its results no newer than the newest result this clear replaces
  (nothing the clear protects, no recent small result), and holds no message
  something finds by its uuid (where the session notes end, where the
  compaction an undo goes back to ends);
- the message before it holds the results of an earlier round, in that span
  too: it takes the note (never a prompt: what the user typed stays as typed).

The note (``FOLD_PREFIX``) says how many calls went, by tool, and which files
they edited (relative to the session's folder); a run that grows next to a
note adds to it.

The transcript keeps every folded message, as it keeps cleared results; the
continued tool loop is never touched (its response is the last one, after the
newest cleared result). Pure: ``fold_rounds`` returns the new list and where
each old index went (for the cache anchors).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from agent.core.messages import ContentBlock, Message, text_block
from compaction.markers import CLEARED_PREFIX, SAVED_MARK

EDIT_TOOLS = frozenset({"Edit", "Write", "NotebookEdit"})
FOLD_PREFIX = "[Folded to save context: "
NOTE = re.compile(r"^\[Folded to save context: \d+ earlier calls? \((?P<tools>[^)]*)\)")
FILES = re.compile(r" Edited: (?P<files>.*)\.\]$")


@dataclass
class Fold:
    """What one run of folded rounds held: the calls by tool and the files they edited."""

    calls: Counter[str] = field(default_factory=Counter)
    edited: list[str] = field(default_factory=list)

    def add(self, response: Message, base: str | None = None) -> None:
        """Count ``response``'s calls; an edited file is named relative to ``base`` (the
        session's folder) when it is inside it."""
        for use in response.tool_uses():
            name = str(use.get("name"))
            self.calls[name] += 1
            tool_input = use.get("input") or {}
            path = tool_input.get("file_path") or tool_input.get("notebook_path")
            if name not in EDIT_TOOLS or not isinstance(path, str):
                continue
            if base and path.startswith(base.rstrip("/") + "/"):
                path = path[len(base.rstrip("/")) + 1 :]
            if path not in self.edited:
                self.edited.append(path)

    def merged(self, later: Fold) -> Fold:
        edited = self.edited + [p for p in later.edited if p not in self.edited]
        return Fold(self.calls + later.calls, edited)

    def note(self) -> str:
        total = sum(self.calls.values())
        tools = ", ".join(f"{name} {count}" for name, count in sorted(self.calls.items()))
        plural = "s" if total != 1 else ""
        files = f" Edited: {', '.join(self.edited)}." if self.edited else ""
        return (
            f"{FOLD_PREFIX}{total} earlier call{plural} ({tools}) and your words beside "
            f"them; their results had been cleared.{files}]"
        )

    @classmethod
    def parse(cls, text: str) -> Fold | None:
        """The fold a note says, or None when ``text`` is no fold note."""
        match = NOTE.match(text)
        if match is None:
            return None
        calls: Counter[str] = Counter()
        for part in match.group("tools").split(", "):
            name, _, count = part.rpartition(" ")
            if name and count.isdigit():
                calls[name] += int(count)
        files = FILES.search(text)
        return cls(calls, files.group("files").split(", ") if files else [])


@dataclass(frozen=True)
class Folded:
    messages: list[Message]
    moved: dict[int, int]  # old index -> new index (a folded one: the message with its note)
    rounds: int = 0
    tokens: float = 0.0  # what folding freed, less the notes


def fold_rounds(
    messages: list[Message],
    start: int,
    end: int,
    *,
    estimate_message: Callable[[Message], float],
    estimate_block: Callable[[Mapping[str, Any]], float],
    min_tokens: float,
    base: str | None = None,
    keep: frozenset[str] = frozenset(),
) -> Folded:
    """Fold the rounds of ``messages[start:end + 1]`` that may fold (see the module docstring).

    ``start``: the first message the clear rewrites (at or after the last compaction's
    messages); ``end``: the message holding the newest result it clears; ``base``: the
    session's folder, that the note names edited files relative to; ``keep``: uuids of
    messages that must stay (where session notes end, where an undo finds a compaction).
    """
    out: list[Message] = []
    origin: list[int] = []  # the old index of each message in ``out``
    moved: dict[int, int] = {}
    notes: dict[int, Fold] = {}  # position in ``out`` -> what folded there
    index = 0
    while index < len(messages):
        message = messages[index]
        if (
            out
            and origin[-1] >= start
            and out[-1].kind == "tool_result"
            and index + 1 <= end
            and index + 1 < len(messages) - 1
            and message.uuid not in keep
            and messages[index + 1].uuid not in keep
            and _foldable(message, messages[index + 1], estimate_block, min_tokens)
        ):
            position = len(out) - 1
            notes.setdefault(position, Fold()).add(message, base)
            moved[index] = moved[index + 1] = position
            index += 2
            continue
        moved[index] = len(out)
        out.append(message)
        origin.append(index)
        index += 1
    if not notes:
        return Folded(messages, {i: i for i in range(len(messages))})
    before = sum(estimate_message(m) for m in messages)
    for position, fold in notes.items():
        out[position] = _with_note(out[position], fold)
    freed = before - sum(estimate_message(m) for m in out)
    calls = sum(sum(f.calls.values()) for f in notes.values())
    return Folded(out, moved, calls, freed)


def _foldable(
    response: Message,
    answer: Message,
    estimate_block: Callable[[Mapping[str, Any]], float],
    min_tokens: float,
) -> bool:
    if response.role != "assistant" or answer.role != "user":
        return False
    uses = response.tool_uses()
    if not uses or any(b["type"] not in ("tool_use", "text") for b in response.content):
        return False  # no call, or thinking (the loop's, or one no clear has dropped)
    results = answer.tool_results()
    if len(results) != len(answer.content):
        return False
    if {r["tool_use_id"] for r in results} != {u["id"] for u in uses}:
        return False
    reads = {u["id"] for u in uses if u.get("name") == "Read"}
    return all(_gone(r, estimate_block, min_tokens, r["tool_use_id"] in reads) for r in results)


def _gone(
    block: Mapping[str, Any],
    estimate_block: Callable[[Mapping[str, Any]], float],
    floor: float,
    read: bool,
) -> bool:
    """A result that may fold: a marker naming no saved output, or a small result of a call
    other than a Read (a small file's text is never cleared, so it stays in view)."""
    content = block.get("content")
    if isinstance(content, str) and content.startswith(CLEARED_PREFIX):
        return SAVED_MARK not in content
    return not read and estimate_block(block) < floor and not _has_image(content)


def _has_image(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") == "image" for p in content
    )


def _with_note(message: Message, fold: Fold) -> Message:
    """``message`` with one fold note at its end, counting what an earlier note there did."""
    content: list[ContentBlock] = list(message.content)
    last = content[-1] if content else None
    if last is not None and last["type"] == "text":
        earlier = Fold.parse(last["text"])
        if earlier is not None:
            fold = earlier.merged(fold)
            content.pop()
    content.append(text_block(fold.note()))
    return replace(message, content=content)


def remap(anchors: tuple[int, ...], moved: dict[int, int]) -> tuple[int, ...]:
    """The anchors at their new indices (a folded one at the message that took its note)."""
    out: list[int] = []
    for anchor in anchors:
        new = moved.get(anchor)
        if new is not None and new not in out:
            out.append(new)
    return tuple(out)
