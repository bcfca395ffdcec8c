"""Copying for the user: the OSC 52 sequence a terminal puts on its clipboard, and the words
both front ends say after /copy or a copied selection."""

from __future__ import annotations

import base64


def osc52(text: str) -> str:
    """The escape sequence that asks the terminal to put ``text`` on the system clipboard."""
    return f"\x1b]52;c;{base64.b64encode(text.encode('utf-8')).decode('ascii')}\a"


def copied_words(text: str, what: str = "the last reply") -> str:
    """What was put on the clipboard, and how much of it."""
    lines = text.count("\n") + 1
    plural = "s" if lines != 1 else ""
    return f"Copied {what} to the clipboard ({len(text):,} characters, {lines} line{plural})."
