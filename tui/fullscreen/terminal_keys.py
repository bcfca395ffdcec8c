"""Naming the Enter keys Textual's terminal parser loses, so the prompt can tell a new line from a send.

Textual reads Esc then Enter (what Alt+Enter sends, and what tmux forwards for
it) as a plain Enter, and xterm's modifyOtherKeys shift+enter (``ESC [27;2;13~``,
also tmux's form with extended keys on) as a key named ``shift+\\r``. Kitty's
``ESC [13;2u`` it already names shift+enter. The parser below names all of them
as kitty's are: shift+enter, alt+enter, ctrl+enter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from textual import events
from textual._xterm_parser import XTermParser

ESC_ENTER = "\x1b\r"
_MODIFIED_ENTER = re.compile(r"\x1b\[27;(\d+);13~")  # xterm's modifyOtherKeys
_MODIFIER_BITS = ((4, "ctrl"), (2, "alt"), (1, "shift"))  # as the key names sort them


def modified_enter(parameter: int) -> str:
    """The key name for Enter with an xterm modifier parameter (1 + the modifier bits)."""
    bits = parameter - 1
    names = sorted(name for bit, name in _MODIFIER_BITS if bits & bit)
    return "+".join([*names, "enter"])


class KeyParser(XTermParser):
    """Textual's parser, with the Enter keys it loses named."""

    def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        # ``alt`` with a lone CR: the parser gave up waiting after ESC and reissues CR as alt.
        if sequence == ESC_ENTER or (alt and sequence == "\r"):
            yield events.Key("alt+enter", None)
            return
        if match := _MODIFIED_ENTER.fullmatch(sequence):
            yield events.Key(modified_enter(int(match.group(1))), None)
            return
        yield from super()._sequence_to_key_events(sequence, alt)


def use_key_parser() -> None:
    """Make Textual's Linux driver read keys with KeyParser.

    The driver builds its parser from its module's ``XTermParser`` name in its
    input thread and offers no other hook, so the name is pointed at the subclass.
    """
    try:
        from textual.drivers import linux_driver
    except ImportError:  # no termios (Windows): Textual's own driver and parser
        return
    linux_driver.XTermParser = KeyParser  # type: ignore[misc]
