"""The assistant's replies as Markdown: streamed, or stored in one piece.

Textual's Markdown widget builds a widget per block (lists, list items and
code fences nest further), and a Static holding Rich's Markdown re-parses it
on every measure and paint: at 2,000 tokens/s either keeps the UI busy and
keystrokes wait ~0.5 s (measured with bench/tui_streaming.py). Here a reply
is one line-API widget painting from lines rendered once per width; while it
streams, each run of complete blocks is rendered once and frozen, and the
open tail is re-rendered at most five times a second, on a worker thread;
while the user types, updates wait for a pause (up to a second), because
every update re-lays out and repaints the scrolling transcript.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

if TYPE_CHECKING:
    from rich.console import Console
    from textual.selection import Selection

FREEZE_CHARS = 400
APPLY_INTERVAL_S = 0.2  # each apply costs a layout + repaint (~15-40 ms): five a second
MAX_DEFER_S = 1.0  # while the user types, updates wait for a pause, but never longer than this
FENCES = ("```", "~~~")


def settled_length(text: str) -> int:
    """How much of ``text`` is complete blocks: up to its last blank line outside a code fence."""
    settled, position, fence = 0, 0, None
    for line in text.splitlines(keepends=True):
        position += len(line)
        stripped = line.strip()
        if fence is None and stripped.startswith(FENCES):
            fence = stripped[:3]
        elif fence is not None and stripped.startswith(fence):
            fence = None
        elif fence is None and not stripped and line.endswith("\n"):
            settled = position
    return settled


# The code blocks' colours: the app sets it from its theme before anything is rendered.
CODE_THEME = {"name": "monokai"}


def render_markdown(console: Console, source: str, width: int) -> list[Strip]:
    from rich.markdown import Markdown as RichMarkdown  # 70 ms to import: not before first paint

    if not source.strip():
        return []
    options = console.options.update_width(max(1, width))
    markdown = RichMarkdown(source, code_theme=CODE_THEME["name"], hyperlinks=False)
    return [Strip(line, width) for line in console.render_lines(markdown, options, pad=True)]


class MarkdownLines(Widget):
    """Markdown painted from lines rendered once per width (a stored reply)."""

    DEFAULT_CSS = """
    MarkdownLines {
        height: auto;
    }
    """

    def __init__(self, source: str = "", *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.source = source
        self._lines: list[Strip] = []
        self._width = -1

    def lines(self, width: int) -> list[Strip]:
        if width != self._width:
            self._lines = render_markdown(self.app.console, self.source, width)
            self._width = width
        return self._lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(width))

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        lines = self.lines(width)
        if y >= len(lines):
            return Strip.blank(width)
        line = lines[y]
        selection = self.text_selection
        span = selection.get_span(y) if selection is not None else None
        if span is not None:
            start, end = span
            end = line.cell_length if end == -1 else min(end, line.cell_length)
            if start < end:
                before, chosen, after = line.divide([start, end, line.cell_length])
                style = self.screen.get_component_rich_style("screen--selection")
                line = Strip.join([before, chosen.apply_style(style), after])
        return line.apply_offsets(0, y)  # where a drag starts and ends, for selecting

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected part of the reply as it is shown (a drag across it copies this)."""
        lines = self.lines(self.content_size.width)
        return selection.extract("\n".join(line.text.rstrip() for line in lines)), "\n"


class HistoryReply(MarkdownLines):
    DEFAULT_CSS = """
    HistoryReply {
        padding: 0 1;
        margin: 0 0 1 0;
    }
    """


class StreamingReply(MarkdownLines):
    """A reply as it streams; ``source`` is everything received so far.

    Updates are rendered on a worker thread and swapped in when ready, so
    the UI thread only lays out lines that already exist.
    """

    DEFAULT_CSS = """
    StreamingReply {
        padding: 0 1;
        margin: 0 0 1 0;
    }
    """

    class Rendered(Message):
        def __init__(
            self, width: int, shown: int, chunk: str, lines: list[Strip], tail: list[Strip]
        ):
            super().__init__()
            self.width, self.shown, self.chunk = width, shown, chunk
            self.chunk_lines, self.tail_lines = lines, tail

    def __init__(self, typing: Callable[[], bool] = lambda: False) -> None:
        super().__init__()
        self._typing = typing  # typing has priority: a keystroke must not wait for a re-layout
        self._applied_at = time.monotonic()
        self._shown = 0  # source[:_shown] is laid out
        self._frozen = 0  # source[:_frozen] is complete blocks, in _chunks
        self._chunks: list[str] = []
        self._frozen_lines: list[Strip] = []  # the chunks rendered at _width
        self._rendering = False
        self._finished = False  # the reply ended: show the rest without waiting for the user
        self._scheduled: Timer | None = None

    def append(self, text: str) -> None:
        self.source += text
        self._schedule()

    def flush(self) -> None:
        """Show everything received now (the reply ended)."""
        self._finished = True
        if self._scheduled is not None:
            self._scheduled.stop()
            self._scheduled = None
        self._apply()

    def cancel(self) -> None:
        """Render nothing more: the reply is being discarded."""
        self._finished = True
        if self._scheduled is not None:
            self._scheduled.stop()
            self._scheduled = None

    def _schedule(self) -> None:
        if self._scheduled is None and not self._rendering:
            self._scheduled = self.set_timer(APPLY_INTERVAL_S, self._apply)

    def _apply(self) -> None:
        self._scheduled = None
        shown = len(self.source)
        if self._rendering or shown == self._shown:
            return
        waited = time.monotonic() - self._applied_at
        if not self._finished and self._typing() and waited < MAX_DEFER_S:
            self._schedule()
            return
        self._applied_at = time.monotonic()
        width = self.content_size.width
        if width <= 0 or width != self._width:
            self._shown = shown  # not laid out at this width yet: lines() renders it all
            self._width = -1
            self.refresh(layout=True)
            return
        pending = self.source[self._frozen : shown]
        cut = settled_length(pending) if len(pending) >= FREEZE_CHARS else 0
        self._rendering = True
        console = self.app.console

        def render() -> None:
            chunk_lines = _chunk_lines(console, pending[:cut], width) if cut else []
            tail = render_markdown(console, pending[cut:], width)
            self.post_message(self.Rendered(width, shown, pending[:cut], chunk_lines, tail))

        self.run_worker(render, thread=True, group="render", exit_on_error=False)

    def on_streaming_reply_rendered(self, message: Rendered) -> None:
        message.stop()
        self._rendering = False
        if message.width == self._width:
            if message.chunk:
                self._chunks.append(message.chunk)
                self._frozen += len(message.chunk)
                self._frozen_lines += message.chunk_lines
            self._shown = message.shown
            self._lines = self._frozen_lines + message.tail_lines
            self.refresh(layout=True)
        if self._shown < len(self.source):
            if self._finished:
                self._apply()
            else:
                self._schedule()

    def lines(self, width: int) -> list[Strip]:
        if width != self._width:
            console = self.app.console
            self._frozen_lines = [
                line for chunk in self._chunks for line in _chunk_lines(console, chunk, width)
            ]
            tail = self.source[self._frozen : self._shown]
            self._lines = self._frozen_lines + render_markdown(console, tail, width)
            self._width = width
        return self._lines


def _chunk_lines(console: Console, chunk: str, width: int) -> list[Strip]:
    lines = render_markdown(console, chunk, width)
    return [*lines, Strip.blank(width)]  # the blank line between blocks
