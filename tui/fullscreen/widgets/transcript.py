"""The conversation view: prompts, streamed replies, tool blocks, notices and errors.

A resumed session mounts only its last ``PAGE`` entries, with a button at
the top that loads earlier ones. When the conversation starts after a
compaction, what that compaction summarized is still in the transcript: the
same button (or scrolling to the top) reads it back one compacted segment at a
time (``earlier``: the bridge's reader), and each compaction's marker says how
many messages it summarized and kept.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Button, Static

from tui.fullscreen.widgets.compaction_block import CompactionBlock
from tui.fullscreen.widgets.reply import HistoryReply, StreamingReply
from tui.fullscreen.widgets.thinking_block import ThinkingBlock
from tui.fullscreen.widgets.tool_block import ToolBlock
from tui.words import relative

if TYPE_CHECKING:
    from agent.core.events import SubagentEvent, SubagentFinished
    from tui.fullscreen.history import EarlierEntries, Entry
    from tui.fullscreen.widgets.expandable import Expandable

# Reads the segment a compaction summarized before a point of the transcript (None: before
# the live conversation); None when there is none.
EarlierReader = Callable[[int | None], "concurrent.futures.Future[EarlierEntries | None]"]

PAGE = 100
LOAD_COMPACTED = "↑ Earlier conversation, compacted: load it from the transcript"
LOADING = "Reading the earlier conversation…"
NEW_OUTPUT = "↓ new output below (ctrl+end)"
LINE_STYLES = {
    "error": "red",
    "warning": "yellow",
    "notice": "dim",
    "info": "dim",
    "interrupted": "bold red",
}


class UserPrompt(Static):
    DEFAULT_CSS = """
    UserPrompt {
        height: auto;
        padding: 0 1;
        margin: 0 0 1 0;
        background: $boost;
    }
    UserPrompt.-queued {
        color: $text-muted;
        text-style: italic;
    }
    """

    # A pasted megabyte would take the screen seconds to lay out: its middle is left out.
    SHOWN_HEAD_CHARS = 4_000
    SHOWN_TAIL_CHARS = 1_000

    def __init__(self, text: str, queued: bool = False) -> None:
        super().__init__(self._body(text, queued), classes="-queued" if queued else "")
        self.prompt = text

    @property
    def queued(self) -> bool:
        return self.has_class("-queued")

    def sent(self) -> None:
        """Its turn came: it reads as said, no longer dim with a "queued" label."""
        if self.queued:
            self.remove_class("-queued")
            self.update(self._body(self.prompt, False))

    def _body(self, text: str, queued: bool) -> Text:
        body = Text("> ", style="bold")
        body.append(shown_prompt(text, self.SHOWN_HEAD_CHARS, self.SHOWN_TAIL_CHARS))
        if queued:
            body.append("  · queued, sent when ccx is free (esc takes it back)", style="bold")
        return body


class NewOutputHint(Static):
    """Shown over the transcript's last row while the user reads further up and output arrives."""

    DEFAULT_CSS = """
    NewOutputHint {
        dock: bottom;
        width: auto;
        height: 1;
        padding: 0 1;
        background: $primary-muted;
        color: $text;
        display: none;
    }
    NewOutputHint.-shown {
        display: block;
    }
    """

    def __init__(self) -> None:
        super().__init__(NEW_OUTPUT, id="new-output")

    def on_click(self) -> None:
        self.parent.scroll_end(animate=False)  # type: ignore[union-attr]


def shown_prompt(text: str, head: int, tail: int) -> str:
    """``text``, or its first ``head`` and last ``tail`` characters with a note between."""
    if len(text) <= head + tail:
        return text
    hidden = len(text) - head - tail
    return f"{text[:head]}\n… ({hidden:,} characters not shown) …\n{text[-tail:]}"


class Transcript(VerticalScroll):
    FOCUS_ON_CLICK = False  # a click in the transcript leaves the keyboard with the prompt
    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    Transcript > .line {
        height: auto;
        padding: 0 1;
    }
    Transcript > #load-earlier {
        width: 100%;
        margin: 0 0 1 0;
    }
    """

    def __init__(
        self,
        *,
        typing: Callable[[], bool] = lambda: False,
        earlier: EarlierReader | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._typing = typing
        self._read_earlier = earlier
        self._compacted = False  # the transcript holds conversation before what is mounted
        self._cursor: int | None = None  # where to read it from (None: before the live one)
        self._reading = False
        self._drawn = 0  # counts the times the history is drawn anew: a late read is dropped
        self._reply: StreamingReply | None = None
        self._thinking: ThinkingBlock | None = None
        self._tools: dict[str, ToolBlock] = {}
        self._earlier: list[Entry] = []
        self.latest_expandable: Expandable | None = None  # what ctrl+o toggles
        self.cwd: Path | None = None  # the project: paths inside it are shown relative to it

    def on_mount(self) -> None:
        self.mount(NewOutputHint())
        self.anchor()

    # -- following the output ------------------------------------------------------------

    @property
    def following(self) -> bool:
        """Whether new output scrolls into view (the user has not scrolled up to read)."""
        return not (self._anchored and self._anchor_released)

    def follow(self) -> None:
        """Back to the end, following what comes next (a prompt was sent)."""
        self.scroll_end(animate=False)

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        if new.height > old.height and not self.following and self.max_scroll_y > self.scroll_y:
            self._hint(True)  # output arrived below where the user reads: it stays put

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.following or new >= self.max_scroll_y:
            self._hint(False)
        if new <= 0 < old and (self._earlier or self._compacted) and not self._reading:
            self.run_worker(self.load_earlier(), group="earlier")  # scrolled to the top

    def _hint(self, shown: bool) -> None:
        for hint in self.query_children(NewOutputHint):
            hint.set_class(shown, "-shown")

    # -- live events ---------------------------------------------------------------------

    def add_user(self, text: str, queued: bool = False) -> UserPrompt:
        widget = UserPrompt(text, queued)
        self.mount(widget)
        self.follow()  # a send shows the new turn, wherever the user had scrolled
        return widget

    def add_line(self, text: str, kind: str = "info") -> Static:
        widget = Static(Text(text, style=LINE_STYLES.get(kind, "")), classes=f"line -{kind}")
        self.mount(widget)
        return widget

    def add(self, widget: Widget) -> Widget:
        self.mount(widget)
        return widget

    def append_thinking(self, text: str) -> None:
        """The model's thinking as it streams: one collapsed block per response's thinking."""
        if self._reply is not None:
            self.end_text()
        if self._thinking is None:
            self._thinking = ThinkingBlock()
            self.mount(self._thinking)
        self._thinking.append(text)

    def append_text(self, text: str) -> None:
        self._thinking = None
        if self._reply is None:
            self._reply = StreamingReply(self._typing)
            self.mount(self._reply)
        self._reply.append(text)

    def end_text(self) -> None:
        if self._reply is not None:
            self._reply.flush()
        self._reply = None
        self._thinking = None

    def discard_text(self) -> None:
        """Remove the reply being streamed: its response was thrown away and is retried."""
        thinking, self._thinking = self._thinking, None
        if thinking is not None:
            thinking.remove()
        reply, self._reply = self._reply, None
        if reply is not None:
            reply.cancel()
            reply.remove()

    def tool_started(
        self, tool_use_id: str, name: str, tool_input: dict[str, Any], label: str = ""
    ) -> None:
        block = ToolBlock(tool_use_id, name, tool_input, label=label)
        self._tools[tool_use_id] = block
        self.mount(block)

    def tool_finished(
        self, tool_use_id: str, is_error: bool, display: str, preview: str, meta: dict[str, Any]
    ) -> None:
        block = self._tools.pop(tool_use_id, None)
        if block is not None:
            block.finish(is_error, relative(display, self.cwd), relative(preview, self.cwd), meta)

    def subagent_event(self, event: SubagentEvent | SubagentFinished) -> None:
        """A subagent's event, drawn in the block of the Agent call that started it."""
        block = self._tools.get(event.tool_use_id)
        if block is not None:
            block.subagent(event)

    def tool_asking(self, tool_use_id: str, waiting: bool) -> None:
        block = self._tools.get(tool_use_id)
        if block is not None:
            block.asking(waiting)

    def tool_progress(self, tool_use_id: str, lines: int) -> None:
        block = self._tools.get(tool_use_id)
        if block is not None:
            block.output_lines = lines
            block.refresh_content()

    def tools_interrupted(self) -> None:
        """The turn stopped: every call still open shows it was interrupted, at once."""
        for block in self._tools.values():
            block.interrupt()
        self._tools.clear()

    def tool_denied(self, tool_use_id: str, reason: str) -> None:
        block = self._tools.pop(tool_use_id, None)
        if block is not None:
            block.deny(reason)

    async def clear_all(self) -> None:
        self.end_text()
        self._tools.clear()
        self._earlier = []
        self._compacted, self._cursor = False, None
        self._drawn += 1
        self.latest_expandable = None
        keep = ("welcome", "new-output")
        await self.remove_children([child for child in self.children if child.id not in keep])

    # -- history -------------------------------------------------------------------------

    async def load_history(self, entries: list[Entry]) -> None:
        """Mount the last PAGE entries; keep the rest for "load earlier". A conversation that
        opens with a compaction's summary has more in the transcript, read on demand."""
        self._earlier = list(entries[:-PAGE]) if len(entries) > PAGE else []
        self._compacted = self._read_earlier is not None and bool(entries)
        self._compacted = self._compacted and entries[0].kind == "summary"
        self._cursor = None
        self._drawn += 1
        shown = entries[-PAGE:]
        widgets = [history_widget(entry) for entry in shown]
        first = next(
            (child for child in self.children if child.id not in ("welcome", "new-output")), None
        )
        if self._earlier or self._compacted:
            widgets.insert(0, self._load_button())
        if widgets:
            await self.mount_all(widgets, before=first)
        self.scroll_end(animate=False, immediate=True)

    def _load_button(self) -> Button:
        return Button(self._button_label(), id="load-earlier", variant="default")

    def _button_label(self) -> str:
        if self._earlier:
            return f"↑ Load earlier messages ({len(self._earlier)} more)"
        return LOAD_COMPACTED

    async def load_earlier(self) -> None:
        """The next page of what is held; when all is mounted, the segment before it, read
        from the transcript. What the user was reading stays where it is on the screen."""
        drawn = self._drawn
        if not self._earlier and self._compacted and not self._reading:
            await self._read_segment()
        if not self._earlier or drawn != self._drawn:
            return
        page, self._earlier = self._earlier[-PAGE:], self._earlier[:-PAGE]
        button = self.query_one("#load-earlier", Button)
        widgets = [history_widget(entry) for entry in page]
        height, y = self.virtual_size.height, self.scroll_y
        await self.mount_all(widgets, after=button)
        if self._earlier or self._compacted:
            button.label = self._button_label()
        else:
            await button.remove()
        self.call_after_refresh(
            lambda: self.scroll_to(y=y + self.virtual_size.height - height, animate=False)
        )

    async def _read_segment(self) -> None:
        assert self._read_earlier is not None
        button = self.query_one("#load-earlier", Button)
        self._reading, button.label = True, LOADING
        drawn = self._drawn
        try:
            segment = await asyncio.wrap_future(self._read_earlier(self._cursor))
        finally:
            self._reading = False
        if drawn != self._drawn:  # cleared or redrawn meanwhile (/clear, /resume, a rewind)
            return
        if segment is None:  # nothing more, or it cannot be read now (the log says why)
            self._compacted = False
            await button.remove()
            return
        self._compacted, self._cursor = segment.before is not None, segment.before
        self._earlier = list(segment.entries)
        marker = next(iter(self.query_children(CompactionBlock)), None)
        if marker is not None:
            marker.compacted_here(segment.summarized, segment.kept)
        button.label = self._button_label()

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "load-earlier":
            event.stop()
            await self.load_earlier()


def history_widget(entry: Entry) -> Widget:
    """A light widget for a stored entry: replies render as Rich Markdown in one Static."""
    if entry.kind == "user":
        return UserPrompt(entry.text)
    if entry.kind == "assistant":
        return HistoryReply(entry.text)
    if entry.kind == "thinking":
        return ThinkingBlock(entry.text)
    if entry.kind == "tool" and entry.tool is not None:
        return ToolBlock.from_history(entry.tool)
    if entry.kind == "summary":
        return CompactionBlock.from_summary(entry.text)
    return Static(
        Text(entry.text, style=LINE_STYLES.get(entry.kind, "dim")), classes=f"line -{entry.kind}"
    )
