"""The prompt: multi-line input with history and slash-command completion.

Enter submits; a new line is shift+enter, alt+enter (or Esc then Enter),
ctrl+j, or a backslash before Enter. Readline's keys edit the current line:
ctrl+a / ctrl+e go to its start / end, ctrl+u / ctrl+k delete to them, ctrl+w
deletes the word before the cursor. Up/down on the first/last line walk the
history; tab completes (and cycles through) slash commands, whose matches
show under the input.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static, TextArea

from tui.commands.slash import interactive_completions

MAX_HINTS = 8
NEW_LINE_KEYS = frozenset({"shift+enter", "alt+enter", "ctrl+j"})
ESC_THEN_ENTER_S = 0.5  # Esc, then Enter this soon after: a new line (a slow Alt+Enter)
LOCAL_COMMANDS = list(interactive_completions().items())


class PromptInput(TextArea):
    """The text area itself; it posts PromptBox's messages."""

    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 12;
        border: round $primary 60%;
        padding: 0 1;
    }
    PromptInput:focus {
        border: round $primary;
    }
    """

    BINDINGS = [
        Binding("ctrl+a", "line_start", "Line start", show=False),
        Binding("ctrl+e", "line_end", "Line end", show=False),
        Binding("ctrl+u", "kill_to_line_start", "Delete to line start", show=False),
        Binding("ctrl+k", "kill_to_line_end", "Delete to line end", show=False),
        Binding("ctrl+w", "kill_word_before", "Delete the word before", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            placeholder="Ask ccx to do something · / for commands · shift+enter or ctrl+j for a new line",
            id="prompt-input",
        )
        self.prompt_history: list[str] = []
        self._history_index: int | None = None
        self._draft = ""
        self.matches: list[tuple[str, str]] = []
        self._cycle: int | None = None
        self.last_key_at = 0.0
        self.escape_at = float("-inf")

    def typed_within(self, seconds: float) -> bool:
        return time.monotonic() - self.last_key_at < seconds

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        if key == "tab" and self.matches:
            return True
        return super().check_consume_key(key, character)

    async def _on_key(self, event: events.Key) -> None:
        now = time.monotonic()
        self.last_key_at = now
        key = event.key
        if key == "escape":
            self.escape_at = now  # not stopped: Esc still interrupts a running turn
        if key == "enter" and now - self.escape_at <= ESC_THEN_ENTER_S:
            key = "alt+enter"
        if key == "enter":
            event.stop()
            event.prevent_default()
            if self._continued_line():
                return
            self.submit()
            return
        if key in NEW_LINE_KEYS:
            event.stop()
            event.prevent_default()
            self.escape_at = float("-inf")
            self.insert("\n")
            return
        if key == "tab" and self.matches:
            event.stop()
            event.prevent_default()
            self.complete()
            return
        self._cycle = None
        await super()._on_key(event)

    def _continued_line(self) -> bool:
        """A backslash just before the cursor: Enter replaces it with a new line."""
        row, column = self.cursor_location
        if column == 0 or self.document.get_line(row)[column - 1] != "\\":
            return False
        self.replace("\n", (row, column - 1), (row, column))
        return True

    def submit(self) -> None:
        text = self.text
        if not text:
            return
        if not text.strip():  # only whitespace: the app says why nothing is sent
            self.text = ""
            self.post_message(PromptBox.Submitted(text))
            return
        if len(self.matches) == 1 and " " not in text.strip():
            text = f"/{self.matches[0][0]}"  # a unique prefix of a command runs that command
        if not self.prompt_history or self.prompt_history[-1] != text:
            self.prompt_history.append(text)
        self._history_index = None
        self._cycle = None
        self.text = ""
        self.post_message(PromptBox.Submitted(text.strip()))

    def complete(self) -> None:
        self._cycle = 0 if self._cycle is None else (self._cycle + 1) % len(self.matches)
        name = self.matches[self._cycle][0]
        cycle, matches = self._cycle, self.matches
        self.text = f"/{name}"
        self.move_cursor(self.document.end)
        self._cycle, self.matches = cycle, matches

    def action_cursor_up(self, select: bool = False) -> None:
        if select or self.cursor_location[0] > 0 or not self.prompt_history:
            super().action_cursor_up(select)
            return
        if self._history_index is None:
            self._draft = self.text
            self._history_index = len(self.prompt_history)
        if self._history_index > 0:
            self._history_index -= 1
            self._show(self.prompt_history[self._history_index])

    def action_cursor_down(self, select: bool = False) -> None:
        last_row = self.document.line_count - 1
        if select or self._history_index is None or self.cursor_location[0] < last_row:
            super().action_cursor_down(select)
            return
        self._history_index += 1
        if self._history_index >= len(self.prompt_history):
            self._history_index = None
            self._show(self._draft)
        else:
            self._show(self.prompt_history[self._history_index])

    def action_line_start(self) -> None:
        self.move_cursor((self.cursor_location[0], 0))

    def action_line_end(self) -> None:
        row = self.cursor_location[0]
        self.move_cursor((row, len(self.document.get_line(row))))

    def action_kill_to_line_start(self) -> None:
        """To the start of the current line; at its start, the line break before it."""
        row, column = self.cursor_location
        self._kill((row, 0) if column else self.get_cursor_left_location())

    def action_kill_to_line_end(self) -> None:
        """To the end of the current line; at its end, the line break after it."""
        row, column = self.cursor_location
        end = len(self.document.get_line(row))
        self._kill((row, end) if column < end else self.get_cursor_right_location())

    def action_kill_word_before(self) -> None:
        """Back over blanks, then over the word before them (readline's ctrl+w)."""
        row, column = self.cursor_location
        line = self.document.get_line(row)[:column]
        start = len(line.rstrip())
        while start and not line[start - 1].isspace():
            start -= 1
        self._kill((row, start) if column else self.get_cursor_left_location())

    def _kill(self, to: tuple[int, int]) -> None:
        start, end = sorted(self.selection)
        if start == end:
            start, end = sorted((self.cursor_location, to))
        if start != end:
            self.delete(start, end, maintain_selection_offset=False)
            self.move_cursor(min(start, end))

    def action_delete_right(self) -> None:
        if not self.text:
            self.post_message(PromptBox.ExitRequested())
            return
        super().action_delete_right()

    def _show(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)


class PromptBox(Vertical):
    """The input and, under it, the slash commands matching what is typed."""

    DEFAULT_CSS = """
    PromptBox {
        height: auto;
    }
    PromptBox > #prompt-hints {
        height: auto;
        padding: 0 2;
        display: none;
    }
    PromptBox > #prompt-hints.-shown {
        display: block;
    }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class ExitRequested(Message):
        """ctrl+d on an empty prompt."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.commands: list[tuple[str, str]] = list(LOCAL_COMMANDS)

    def compose(self) -> ComposeResult:
        yield PromptInput()
        yield Static(id="prompt-hints")

    @property
    def input(self) -> PromptInput:
        return self.query_one(PromptInput)

    def set_commands(self, commands: list[tuple[str, str]]) -> None:
        known = {name for name, _ in commands}
        self.commands = [*commands, *(c for c in LOCAL_COMMANDS if c[0] not in known)]

    def seed_history(self, prompts: list[str]) -> None:
        self.input.prompt_history[:0] = [p for p in prompts if p.strip()]

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        prompt = self.input
        if prompt._cycle is not None:
            self._show_hints(prompt.matches, prompt._cycle)
            return
        text = prompt.text
        if text.startswith("/") and not any(c.isspace() for c in text):
            word = text[1:].lower()
            prompt.matches = [c for c in self.commands if c[0].startswith(word)]
        else:
            prompt.matches = []
        self._show_hints(prompt.matches, None)

    def _show_hints(self, matches: list[tuple[str, str]], selected: int | None) -> None:
        hints = self.query_one("#prompt-hints", Static)
        hints.set_class(bool(matches), "-shown")
        if not matches:
            hints.update("")
            return
        width = max(len(name) for name, _ in matches) + 3
        text = Text()
        for index, (name, help_text) in enumerate(matches[:MAX_HINTS]):
            style = "bold reverse" if index == selected else "bold"
            text.append(f"/{name}".ljust(width), style=style)
            text.append(help_text, style="dim")
            if index < min(len(matches), MAX_HINTS) - 1:
                text.append("\n")
        if len(matches) > MAX_HINTS:
            text.append(f"\n… {len(matches) - MAX_HINTS} more", style="dim")
        hints.update(text)
