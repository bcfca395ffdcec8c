"""A transient one-line status under the transcript: thinking, retrying, starting."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class StatusLine(Widget):
    """A spinner, a message and the time since it was set; hidden when empty.

    Its height never changes, so each spinner frame is a repaint of one line,
    never a re-layout of the screen.
    """

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
        color: $text-muted;
        display: none;
    }
    StatusLine.-shown {
        display: block;
    }
    """

    message: reactive[str] = reactive("", repaint=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._since = time.monotonic()
        self._frame = 0
        self._hint = ""
        self._note = False  # a note (no spinner, no clock) that clears itself
        self._counting = False  # a count-down (a retry's wait) rather than a clock
        self._deadline = 0.0
        self._words: Callable[[float], str] = str

    def on_mount(self) -> None:
        self._timer = self.set_interval(0.1, self._tick, pause=not self.message)

    def show(self, message: str, hint: str = "esc to interrupt") -> None:
        if message != self.message:
            self._since = time.monotonic()
        self._hint, self._note, self._counting = hint, False, False
        self.message = message

    def count_down(self, words: Callable[[float], str], seconds: float) -> None:
        """Show ``words(seconds_left)``, redrawn each tick until something else is shown."""
        self._deadline = time.monotonic() + seconds
        self._words = words
        self.show(words(seconds), hint="esc to interrupt")
        self._counting = True

    def note(self, message: str, seconds: float) -> None:
        """Say ``message`` for ``seconds``, unless something else is shown by then."""
        if self.message and not self._note:
            return  # a turn's status outranks a note
        self._note, self._hint = True, ""
        self.message = message
        self.set_timer(seconds, lambda: self._end_note(message))

    def _end_note(self, message: str) -> None:
        if self._note and self.message == message:
            self.clear()

    def clear(self) -> None:
        self.message = ""

    def watch_message(self, message: str) -> None:
        self.set_class(bool(message), "-shown")
        timer = getattr(self, "_timer", None)
        if timer is not None:
            if message:
                timer.resume()
            else:
                timer.pause()
        self.refresh()

    def _tick(self) -> None:
        self._frame += 1
        if self._counting:
            self.message = self._words(max(0.0, self._deadline - time.monotonic()))
        self.refresh()

    def render(self) -> Text:
        if not self.message:
            return Text()
        if self._note:
            return Text(self.message, style="bold")
        text = Text()
        text.append(f"{SPINNER[self._frame % len(SPINNER)]} ", style="bold cyan")
        text.append(self.message)
        suffix = "" if self._counting else f"{time.monotonic() - self._since:.0f}s"
        if self._hint:
            suffix += f" · {self._hint}" if suffix else self._hint
        if suffix:
            text.append(f" ({suffix})", style="dim")
        return text
