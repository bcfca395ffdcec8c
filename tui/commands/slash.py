"""The one rule for "is this line a slash command", shared by every front end and headless.

A line whose first word is ``/name`` (a letter, then letters, digits, ``_``,
``-``, ``.`` or ``:``, which custom commands' namespaces use) is a command, known or not: an unknown one is answered "Unknown
command", never sent to the model. Anything else (``/etc/hosts is odd``, a
lone ``/``) is a prompt. A line with no words (``is_blank``) is neither:
it is refused with ``BLANK_PROMPT``. Kept free of heavy imports: the full-screen app reads
it before the session is built.
"""

from __future__ import annotations

import re

from agent.core.sendable import BLANK_PROMPT as BLANK_PROMPT  # what a blank line is told

COMMAND_WORD = re.compile(r"/([A-Za-z][\w.:-]*)")
EXIT_NAMES = ("exit", "quit")
# Commands the interactive front ends answer themselves (the session driver never sees them).
INTERACTIVE_COMMANDS = (
    ("/resume [id]", "Resume another session of this folder (a list to choose from without an id)"),
)


def command_name(line: str) -> str | None:
    """The command's name, lower-cased (``"/Compact x"`` -> ``"compact"``); None for a prompt."""
    words = line.split(maxsplit=1)
    if not words:
        return None
    match = COMMAND_WORD.fullmatch(words[0])
    return match.group(1).lower() if match else None


def is_blank(line: str) -> bool:
    """A line with no words (nothing, or only whitespace): never sent to the model."""
    return not line.strip()


def is_command(line: str) -> bool:
    return command_name(line) is not None


def is_exit(line: str) -> bool:
    return command_name(line) in EXIT_NAMES


def interactive_completions() -> dict[str, str]:
    """The front ends' own commands for completion: name -> help."""
    return {usage.split()[0].lstrip("/"): words for usage, words in INTERACTIVE_COMMANDS}
