"""Streamed text in the plain REPL, wrapped at word boundaries as it arrives.

The terminal would break a long line wherever the edge falls, mid-word. The
wrapper holds back only the word being typed (until a space or a newline ends
it), so a word that would cross the edge starts the next line instead; a word
longer than a whole line is broken where it must be.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator

from rich.cells import cell_len


class StreamWrapper:
    """Feed streamed text in; get back what to print, with newlines where words wrap."""

    def __init__(self, width: Callable[[], int], column: int = 0) -> None:
        self.width = width
        self.column = column
        self.word = ""

    def feed(self, text: str) -> str:
        out: list[str] = []
        for char in text:
            if char == "\n":
                out.append(self._flush())
                out.append("\n")
                self.column = 0
            elif char in " \t":
                out.append(self._flush())
                if self.column + 1 > self.width():
                    out.append("\n")  # the space that ends a full line becomes its newline
                    self.column = 0
                else:
                    out.append(char)
                    self.column += 1
            else:
                self.word += char
                if cell_len(self.word) >= self.width():
                    out.append(self._flush())  # longer than a line: break it here
        return "".join(out)

    def end(self) -> str:
        """What is still held back (the last word), once the stream is over."""
        text = self._flush()
        self.column = 0
        return text

    def _flush(self) -> str:
        word, self.word = self.word, ""
        if not word:
            return ""
        width = cell_len(word)
        prefix = ""
        if self.column > 0 and self.column + width > self.width():
            prefix, self.column = "\n", 0
        self.column += width  # at most the width: feed() breaks a word that fills a line
        return prefix + word


@contextlib.contextmanager
def no_control_echo() -> Iterator[None]:
    """While a turn streams, the terminal does not echo ``^C`` into the text (tty ECHOCTL off)."""
    try:
        import termios

        fd = sys.stdin.fileno()
        if not os.isatty(fd):
            raise OSError
        saved = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError, AttributeError):
        yield
        return
    quiet = list(saved)
    quiet[3] &= ~termios.ECHOCTL
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        yield
    finally:
        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)
