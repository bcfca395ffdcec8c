"""Long pastes folded in the prompt: ``[Pasted text #1 +120 lines]`` stands for the text.

A paste of more than ``FOLD_LINES`` line breaks or ``FOLD_CHARS`` characters is
kept aside and the prompt shows a placeholder, so the editor stays light however
large the paste (a 1 MB log) and the prompt stays readable. Sending the prompt
sends the pasted text in each placeholder's place; a placeholder the user edited
no longer stands for anything and goes as typed. Pastes are numbered from 1 for
the whole session, so one recalled from the history still stands for its text.
Both front ends use this module.
"""

from __future__ import annotations

import re

FOLD_LINES = 2  # more line breaks than this: folded
FOLD_CHARS = 800  # or more characters than this
PLACEHOLDER = re.compile(r"\[Pasted text #(\d+)(?: \+(\d+) lines)?\]")


def normalized(text: str) -> str:
    """A paste's line breaks as the prompt holds them (terminals send \\r)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def should_fold(text: str) -> bool:
    return len(text) > FOLD_CHARS or text.count("\n") > FOLD_LINES


def placeholder(number: int, text: str) -> str:
    breaks = text.count("\n")
    return f"[Pasted text #{number} +{breaks} lines]" if breaks else f"[Pasted text #{number}]"


class Pastes:
    """The session's folded pastes, by number."""

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}

    def fold(self, text: str) -> str:
        """Keep ``text``; the placeholder that stands for it."""
        number = len(self.texts) + 1
        self.texts[number] = text
        return placeholder(number, text)

    def expand(self, prompt: str) -> str:
        """``prompt`` with each intact placeholder replaced by its paste."""

        def paste(match: re.Match[str]) -> str:
            text = self.texts.get(int(match.group(1)))
            return (
                text
                if text is not None and match.group() == placeholder(int(match.group(1)), text)
                else match.group()
            )

        return PLACEHOLDER.sub(paste, prompt) if self.texts else prompt

    def ending_at(self, line: str) -> int | None:
        """The length of the intact placeholder ``line`` ends with (the text before the
        cursor), so Backspace deletes it whole; None when it ends with none."""
        if not line.endswith("]") or not self.texts:
            return None
        start = line.rfind("[Pasted text #")
        if start < 0:
            return None
        match = PLACEHOLDER.fullmatch(line, start)
        if match is None:
            return None
        text = self.texts.get(int(match.group(1)))
        if text is None or match.group() != placeholder(int(match.group(1)), text):
            return None
        return len(line) - start
