"""What comes back after a compaction: recent files, invoked skills, the plan, and the rest.

A summary paraphrases; the model's next step usually needs exact text. So the
files it read most recently are re-read from disk now (not copied from the
old results, which may be stale), within a budget, and the skills it invoked
come back from their files. The decisions are pure: ``choose_files`` and
``fit_text`` take plain data, and the caller does the reading.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from agent.core.messages import ContentBlock, Message, text_block
from compaction.result_index import is_cleared
from tools.file_state import FileState, normalize_path

MAX_FILES = 5
FILE_TOKENS = 5_000
FILES_BUDGET = 50_000
SKILL_TOKENS = 5_000
SKILLS_BUDGET = 25_000
CHARS_PER_TOKEN = 4
# A restored file's text opens with these words around its path (``restored_file_paths`` reads it back).
RESTORED_OPENING = "Contents of "
RESTORED_AFTER_PATH = ", re-read from disk after the compaction"


@dataclass
class RestoredItem:
    kind: str  # "file", "skill", "plan", "plan_mode", "jobs", "tasks", "agents", "hook", ...
    label: str  # a path or a name, for the result line
    text: str
    tokens: int
    cut: bool = False
    # A file's text as read for ``text`` and its mtime then: the file-state cache records exactly that.
    content: str | None = None
    mtime: float | None = None


@dataclass
class Restoration:
    items: list[RestoredItem] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[RestoredItem]:
        return [item for item in self.items if item.kind == kind]

    @property
    def tokens(self) -> int:
        return sum(item.tokens for item in self.items)

    def message(self) -> Message | None:
        """One user message (kind "attachment") carrying every restored item."""
        if not self.items:
            return None
        blocks: list[ContentBlock] = [text_block(item.text) for item in self.items]
        return Message(role="user", content=blocks, kind="attachment")

    def summary(self) -> dict[str, list[str]]:
        return {
            "files": [i.label for i in self.of_kind("file")],
            "skills": [i.label for i in self.of_kind("skill")],
            "plan": [i.label for i in self.of_kind("plan")],
            "other": [i.kind for i in self.items if i.kind not in ("file", "skill", "plan")],
        }


def tokens_of(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def visible_read_paths(
    messages: Iterable[Message], resolve: Callable[[str], str] = normalize_path
) -> set[str]:
    """Files whose Read output is still in these messages (not cleared), as cache keys.

    ``resolve`` turns a Read's ``file_path`` into the key the file-state cache
    uses (relative paths against the session's directory).
    """
    reads: dict[str, str] = {}
    shown: set[str] = set()
    for message in messages:
        for block in message.content:
            if block["type"] == "tool_use" and block["name"] == "Read":
                path = (block.get("input") or {}).get("file_path")
                if isinstance(path, str):
                    reads[block["id"]] = path
            elif (
                block["type"] == "tool_result"
                and block["tool_use_id"] in reads
                and not is_cleared(block)
                and not block.get("is_error")
            ):
                shown.add(resolve(reads[block["tool_use_id"]]))
    return shown


def restored_file_paths(message: Message) -> list[str]:
    """The files an attachment message (a compaction's restored items) carries, as restored."""
    if message.kind != "attachment":
        return []
    paths = []
    for block in message.content:
        if block["type"] != "text" or not block["text"].startswith(RESTORED_OPENING):
            continue
        first = block["text"].split("\n", 1)[0]
        path, found, _rest = first[len(RESTORED_OPENING) :].rpartition(RESTORED_AFTER_PATH)
        if found and path:
            paths.append(path)
    return paths


def visible_skill_names(messages: Iterable[Message]) -> set[str]:
    """Skills whose loaded text is still in these messages (a Skill call answered, not cleared),
    case-folded: a compaction that keeps them need not restore them again."""
    calls: dict[str, str] = {}
    shown: set[str] = set()
    for message in messages:
        for block in message.content:
            if block["type"] == "tool_use" and block["name"] == "Skill":
                name = (block.get("input") or {}).get("skill")
                if isinstance(name, str):
                    calls[block["id"]] = name.strip().lstrip("/").casefold()
            elif (
                block["type"] == "tool_result"
                and block["tool_use_id"] in calls
                and not is_cleared(block)
                and not block.get("is_error")
            ):
                shown.add(calls[block["tool_use_id"]])
    return shown


def choose_files(
    snapshot: dict[str, FileState],
    *,
    visible: set[str],
    excluded: set[str],
    max_files: int = MAX_FILES,
) -> list[str]:
    """The most recently read files worth restoring, newest first."""
    ordered = sorted(snapshot.items(), key=lambda item: item[1].read_at, reverse=True)
    chosen = []
    for path, _state in ordered:
        if path in visible or path in excluded:
            continue
        chosen.append(path)
        if len(chosen) == max_files:
            break
    return chosen


def fit_text(text: str, max_tokens: int) -> tuple[str, bool]:
    """The head of ``text`` within ``max_tokens``, cut at a line end; and whether it was cut."""
    limit = max_tokens * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text, False
    head = text[:limit]
    if "\n" in head:
        head = head[: head.rindex("\n")]
    return head, True


def restore_files(
    paths: list[str],
    read_file: Callable[[str], tuple[str, float] | None],
    *,
    per_file: int = FILE_TOKENS,
    budget: int = FILES_BUDGET,
) -> list[RestoredItem]:
    items = []
    spent = 0
    for path in paths:
        read = read_file(path)
        if read is None:
            continue
        text, mtime = read
        numbered = "\n".join(f"{n}\t{line}" for n, line in enumerate(text.splitlines(), start=1))
        body, cut = fit_text(numbered, min(per_file, budget - spent))
        if not body:
            break
        note = " (only the start fits; Read the file with offset for the rest)" if cut else ""
        rendered = f"{RESTORED_OPENING}{path}{RESTORED_AFTER_PATH}{note}:\n{body}"
        tokens = tokens_of(rendered)
        items.append(RestoredItem("file", path, rendered, tokens, cut, text, mtime))
        spent += tokens
        if spent >= budget:
            break
    return items


def restore_skills(
    invoked: list[tuple[str, str, str]],
    *,
    per_skill: int = SKILL_TOKENS,
    budget: int = SKILLS_BUDGET,
) -> list[RestoredItem]:
    """Invoked skills (name, path, body), newest first, each cut at the top with a pointer to the rest."""
    items = []
    spent = 0
    for name, path, body in invoked:
        room = min(per_skill, budget - spent)
        if room <= 0:
            break
        head, cut = fit_text(body, room)
        note = (
            f"\n[The rest of this skill was cut to save context; Read {path} for all of it.]"
            if cut
            else ""
        )
        rendered = f'The skill "{name}" was invoked earlier in this session ({path}):\n{head}{note}'
        tokens = tokens_of(rendered)
        items.append(RestoredItem("skill", name, rendered, tokens, cut))
        spent += tokens
    return items


def text_item(kind: str, label: str, text: str) -> RestoredItem:
    return RestoredItem(kind, label, text, tokens_of(text))


def read_file_now(path: str, max_bytes: int = 2_000_000) -> tuple[str, float] | None:
    """The file's text as it is on disk now and its mtime, or None if it is gone, huge or binary.

    The mtime is taken before the read, so a change during it shows as a stale entry later.
    """
    try:
        stat = os.stat(path)
        if stat.st_size > max_bytes:
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace"), stat.st_mtime
