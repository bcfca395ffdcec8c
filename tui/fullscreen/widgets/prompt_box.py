"""The prompt: multi-line input with history and slash-command completion.

Enter submits; shift+enter or ctrl+j starts a new line; up/down on the
first/last line walk the history; tab completes (and cycles through)
slash commands, whose matches show under the input.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static, TextArea

from tui.commands.slash import interactive_completions

MAX_HINTS = 8
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

    def typed_within(self, seconds: float) -> bool:
        return time.monotonic() - self.last_key_at < seconds

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        if key == "tab" and self.matches:
            return True
        return super().check_consume_key(key, character)

    async def _on_key(self, event: events.Key) -> None:
        self.last_key_at = time.monotonic()
        key = event.key
        if key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key == "tab" and self.matches:
            event.stop()
            event.prevent_default()
            self.complete()
            return
        self._cycle = None
        await super()._on_key(event)

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
