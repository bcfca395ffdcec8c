"""Rewinding: taking back one of the user's prompts and everything after it.

A rewind point is a prompt the user sent that is still in the conversation (older ones
went into a compaction's summary). Going back to one removes that prompt and all that
followed from the conversation (recorded in the transcript, so ``-c`` resumes the rewound
state), forgets the file reads and writes made since (the model never saw them), and,
when asked and file checkpoints hold them, puts back the files Edit and Write changed
since. Its text goes back to the front end's prompt. Both front ends open this with Esc
twice on an empty prompt; ``/rewind`` is the same as a command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.core.events import ContextUpdate
from agent.core.messages import Message
from tui.session.sdk_setup import prompt_uuids

if TYPE_CHECKING:
    from tools.file_checkpoints import FileCheckpoints
    from tui.session.runtime import Runtime


@dataclass(frozen=True)
class RewindPoint:
    """A prompt the conversation can go back to before; ``number`` 1 is the latest."""

    number: int
    uuid: str
    text: str  # what the user sent, to put back in the prompt
    files: tuple[str, ...] = ()  # what going back with the files would restore
    checkpoints: bool = False  # whether this session keeps file checkpoints at all


@dataclass(frozen=True)
class Rewound:
    point: RewindPoint
    removed: int  # messages that left the conversation
    restored: list[str]  # files put back


def prompt_text(message: Message) -> str:
    """The words the user sent (a skill's instructions, after them, are not)."""
    for block in message.content:
        if block["type"] == "text" and block["text"].strip():
            return block["text"]
    return ""


def rewind_points(
    messages: Sequence[Message], checkpoints: FileCheckpoints | None = None
) -> list[RewindPoint]:
    """The prompts the conversation can go back to before, latest first."""
    prompts = [m for m in messages if m.role == "user" and m.kind == "prompt" and prompt_text(m)]
    uuids = prompt_uuids(messages)
    points = []
    for number, message in enumerate(reversed(prompts), start=1):
        files = checkpoints.changed_since(message.uuid, uuids) if checkpoints is not None else []
        points.append(
            RewindPoint(
                number, message.uuid, prompt_text(message), tuple(files), checkpoints is not None
            )
        )
    return points


def rewind(runtime: Runtime, point: RewindPoint, files: bool = False) -> Rewound:
    """Go back to before ``point``'s prompt (and put its files back when ``files``); the new
    context figure is emitted at once. ValueError when the prompt is no longer there."""
    messages = runtime.agent.conversation.messages
    index = next((i for i, m in enumerate(messages) if m.uuid == point.uuid), None)
    if index is None:
        raise ValueError("that prompt is no longer in the conversation")
    if files and runtime.checkpoints is None:
        raise ValueError("this session keeps no file checkpoints: only the conversation rewinds")
    since = messages[index].timestamp
    restored: list[str] = []
    if files and runtime.checkpoints is not None:
        restored = runtime.checkpoints.rewind(point.uuid, prompt_uuids(messages))
    removed = runtime.agent.conversation.rewind(index)
    for path in runtime.file_state.paths():  # reads and writes since: the model never saw them
        state = runtime.file_state.peek(path)
        if state is not None and state.read_at >= since:
            runtime.file_state.delete(path)
    runtime.context.rewound(runtime.agent)
    runtime.emit(ContextUpdate(runtime.context.state(runtime.agent)))
    return Rewound(point, len(removed), restored)


def pick_point(points: Sequence[RewindPoint], words: Sequence[str]) -> RewindPoint | None:
    """The point ``/rewind N`` names (N counted from the latest prompt, 1 first)."""
    if not words or not words[0].isdigit():
        return None
    number = int(words[0])
    return next((p for p in points if p.number == number), None)


def first_line(text: str, width: int = 72) -> str:
    """A prompt in one line of at most ``width`` characters, for lists."""
    lines = text.strip().splitlines() or [""]
    line = lines[0]
    more = len(lines) > 1
    if len(line) > width or (more and len(line) > width - 2):
        return line[: width - 1].rstrip() + "…"
    return f"{line} …" if more else line
