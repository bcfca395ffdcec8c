"""The prompt: multi-line input with history and slash-command completion.

Enter submits; a new line is shift+enter, alt+enter (or Esc then Enter),
ctrl+j, or a backslash before Enter. Readline's keys edit the current line:
ctrl+a / ctrl+e go to its start / end, ctrl+u / ctrl+k delete to them, ctrl+w
deletes the word before the cursor. Up/down on the first/last line walk the
history; tab completes (and cycles through) slash commands, whose matches
show under the input. ``@`` and a few letters list the project's files and
directories that match (tui.path_match), best first: up/down move, tab or enter
put ``@path`` in the prompt (a directory with its ``/``, listing what it holds).
A long paste shows as ``[Pasted text #1 +N lines]`` (tui.pasted_text),
Backspace deletes it whole, and the prompt sent holds the pasted text.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static, TextArea

from tui.commands.slash import interactive_completions
from tui.fullscreen.widgets.history_search import HistorySearch
from tui.pasted_text import Pastes, normalized, should_fold

if TYPE_CHECKING:
    from tui.project_index import ProjectIndex

MAX_HINTS = 8
NEW_LINE_KEYS = frozenset({"shift+enter", "alt+enter", "ctrl+j"})
ESC_THEN_ENTER_S = 0.5  # Esc, then Enter this soon after: a new line (a slow Alt+Enter)
LOCAL_COMMANDS = list(interactive_completions().items())
FILE_MATCHES = 30  # paths kept for the list (it shows MAX_HINTS, scrolling)


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
        self.kind: Literal["command", "file"] = "command"  # what matches holds
        self.selected = 0  # the highlighted one of matches
        self.keep_matches = False  # the text just changed by tab: the list stays as it was
        self.hints_closed = False  # esc closed the list (until the text changes)
        self.search: HistorySearch | None = None
        self.last_key_at = 0.0
        self.escape_at = float("-inf")
        self.pastes = Pastes()

    def typed_within(self, seconds: float) -> bool:
        return time.monotonic() - self.last_key_at < seconds

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        if key == "tab" and self.hints_shown:
            return True
        return super().check_consume_key(key, character)

    @property
    def hints_shown(self) -> bool:
        return bool(self.matches) and not self.hints_closed

    async def _on_key(self, event: events.Key) -> None:
        now = time.monotonic()
        self.last_key_at = now
        key = event.key
        handled = self._search_key(event) if self.search is not None else False
        if not handled and self.hints_shown:
            handled = self._hints_key(key)
        if not handled and key == "ctrl+r":
            self._start_search()
            handled = True
        if handled:
            event.stop()
            event.prevent_default()
            return
        if key == "enter" and now - self.escape_at <= ESC_THEN_ENTER_S:
            key = "alt+enter"
        # Esc then Enter with nothing between them (no key, no change of the text); the
        # Esc itself goes on to the app (it interrupts a running turn)
        self.escape_at = now if key == "escape" else float("-inf")
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
            self.insert("\n")
            return
        await super()._on_key(event)

    def _hints_key(self, key: str) -> bool:
        """Up/down move the highlighted entry, tab fills it in (enter too for a path), esc
        closes the list."""
        if key in ("up", "down"):
            step = 1 if key == "down" else -1
            self.selected = (self.selected + step) % len(self.matches)
            self._box().refresh_hints()
            return True
        if key == "tab" or (key == "enter" and self.kind == "file"):
            self.complete()
            return True
        if key == "escape":
            self.hints_closed = True
            self._box().refresh_hints()
            return True
        return False

    def _start_search(self) -> None:
        if self.search is None:
            self.search = HistorySearch(list(self.prompt_history), self.text)
        else:
            self.search.older()
            self._show_match()
        self._box().refresh_hints()

    def _search_key(self, event: events.Key) -> bool:
        """ctrl+r's keys: typing narrows, ctrl+r goes further back, enter keeps, esc cancels.
        Any other key keeps the match and then does what it does."""
        search = self.search
        assert search is not None
        key = event.key
        if key == "ctrl+r":
            return False  # _start_search looks further back
        if key == "backspace":
            search.erase()
            self._show_match()
        elif event.is_printable and event.character:
            search.type(event.character)
            self._show_match()
        else:
            self.search = None
            if key == "escape":
                self._show(search.draft)
            self._box().match_completions()  # the text kept may start a command
            return key in ("escape", "enter")
        self._box().refresh_hints()
        return True

    def _show_match(self) -> None:
        assert self.search is not None
        match = self.search.match
        self._show(match if match is not None else self.search.draft)

    def _box(self) -> PromptBox:
        parent = self.parent
        assert isinstance(parent, PromptBox)
        return parent

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
        if (
            self.hints_shown
            and self.kind == "command"
            and not any(c.isspace() for c in text.strip())
        ):
            text = f"/{self.matches[self.selected][0]}"  # the highlighted command runs
        if not self.prompt_history or self.prompt_history[-1] != text:
            self.prompt_history.append(text)
        self._history_index = None
        self.text = ""
        shown = text.strip()
        self.post_message(PromptBox.Submitted(self.pastes.expand(shown), shown))

    def complete(self) -> None:
        """Fill in the highlighted entry; for a command, tab again moves on to the next one."""
        if self.kind == "file":
            self._complete_path(self.matches[self.selected][0])
            return
        if self.text == f"/{self.matches[self.selected][0]}":
            self.selected = (self.selected + 1) % len(self.matches)
        self.keep_matches = True
        self.text = f"/{self.matches[self.selected][0]}"
        self.move_cursor(self.document.end)

    def file_word(self) -> tuple[int, int, str] | None:
        """(row, column of the ``@``, what follows it) when the cursor ends an ``@`` word."""
        row, column = self.cursor_location
        line = self.document.get_line(row)[:column]
        at = line.rfind("@")
        if at < 0 or (at and not line[at - 1].isspace()):
            return None
        word = line[at + 1 :]
        return None if any(c.isspace() for c in word) else (row, at, word)

    def _complete_path(self, path: str) -> None:
        """The ``@`` word becomes ``@path``: a file's with a blank after it, a directory's
        ending in ``/`` so the list goes on with what it holds."""
        word = self.file_word()
        if word is None:
            return
        row, at, typed = word
        mention = f'@"{path}"' if any(c.isspace() for c in path) else f"@{path}"
        if not path.endswith("/"):
            mention += " "
        result = self.replace(mention, (row, at), (row, at + 1 + len(typed)))
        self.move_cursor(result.end_location)

    async def _on_paste(self, event: events.Paste) -> None:
        """A long paste goes in folded; a short one as TextArea puts it."""
        text = normalized(event.text)
        if self.read_only or not should_fold(text):
            return  # TextArea's handler inserts it
        event.stop()
        event.prevent_default()
        result = self.replace(self.pastes.fold(text), *self.selection)
        self.move_cursor(result.end_location)
        self.focus()

    def action_delete_left(self) -> None:
        """Backspace after a paste's placeholder deletes all of it."""
        start, end = self.selection
        if start == end:
            row, column = end
            length = self.pastes.ending_at(self.document.get_line(row)[:column])
            if length is not None:
                self.delete((row, column - length), end, maintain_selection_offset=False)
                return
        super().action_delete_left()

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
        """``text`` is what is sent; ``shown`` what the prompt showed (pastes folded)."""

        def __init__(self, text: str, shown: str | None = None) -> None:
            super().__init__()
            self.text = text
            self.shown = shown if shown is not None else text

    class ExitRequested(Message):
        """ctrl+d on an empty prompt."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.commands: list[tuple[str, str]] = list(LOCAL_COMMANDS)
        self.file_index: ProjectIndex | None = None  # set by the app once the session is up
        self._files_due = False  # a file match is scheduled for after the next refresh

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
        """Earlier prompts, oldest first, before this session's; ones already there are skipped."""
        known = set(self.input.prompt_history)
        self.input.prompt_history[:0] = [p for p in prompts if p.strip() and p not in known]

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        prompt = self.input
        prompt.escape_at = float("-inf")  # Esc then Enter: only with nothing between them
        if prompt.search is not None or prompt.keep_matches:
            prompt.keep_matches = False
            self.refresh_hints()
            return
        self.match_completions()

    def match_completions(self) -> None:
        """Paths for an ``@`` word at the cursor (matched after the keystroke is drawn),
        else the slash commands."""
        if self.input.file_word() is not None:
            if not self._files_due:
                self._files_due = True
                self.call_after_refresh(self.match_files)
            return
        self.match_commands()

    def files_changed(self) -> None:
        """The file list was (re)built: an open ``@`` list is matched again."""
        if self.input.kind == "file":
            self.match_files()

    def match_files(self) -> None:
        """The project's paths best matching the ``@`` word at the cursor."""
        self._files_due = False
        prompt = self.input
        word = prompt.file_word()
        if word is None:
            self.match_commands()
            return
        index = self.file_index
        paths = index.match(word[2], FILE_MATCHES) if index is not None else None
        prompt.kind = "file"
        prompt.matches = [(path, "") for path in paths or ()]
        prompt.selected = 0
        prompt.hints_closed = False
        self.refresh_hints(indexing=paths is None)

    def match_commands(self) -> None:
        """The commands the text starts (a `/` and no blank), the exact one highlighted."""
        prompt = self.input
        prompt.kind = "command"
        text = prompt.text
        word = text[1:].lower()
        if text.startswith("/") and not any(c.isspace() for c in text):
            prompt.matches = [c for c in self.commands if c[0].startswith(word)]
        else:
            prompt.matches = []
        exact = [i for i, (name, _) in enumerate(prompt.matches) if name.lower() == word]
        prompt.selected = exact[0] if exact else 0
        prompt.hints_closed = False
        self.refresh_hints()

    def refresh_hints(self, *, indexing: bool = False) -> None:
        """Under the input: ctrl+r's search, else the commands or paths matching what is
        typed (or that the file list is still being made)."""
        prompt = self.input
        hints = self.query_one("#prompt-hints", Static)
        if prompt.search is not None:
            hints.set_class(True, "-shown")
            hints.update(search_line(prompt.search))
            return
        if indexing:
            hints.set_class(True, "-shown")
            hints.update(Text("listing the project's files…", style="dim"))
            return
        matches = prompt.matches if prompt.hints_shown else []
        hints.set_class(bool(matches), "-shown")
        if not matches:
            hints.update("")
        elif prompt.kind == "file":
            hints.update(path_list([path for path, _ in matches], prompt.selected))
        else:
            hints.update(command_list(matches, prompt.selected))


def search_line(search: HistorySearch) -> Text:
    text = Text()
    text.append("search prompts: ", style="bold")
    text.append(search.query)
    text.append("▏")
    if search.failed or (search.query and search.match is None):
        text.append("  no match", style="bold red")
    text.append("  ctrl+r older · enter keep · esc cancel", style="dim")
    return text


def path_list(paths: list[str], selected: int) -> Text:
    """Like command_list: the highlighted path reversed, directories bold."""
    first = max(0, selected - MAX_HINTS + 1)
    shown = paths[first : first + MAX_HINTS]
    text = Text()
    if first:
        text.append(f"… {first} more\n", style="dim")
    for index, path in enumerate(shown, first):
        style = "bold" if path.endswith("/") else ""
        text.append(f"@{path}", style=f"{style} reverse" if index == selected else style)
        if index < first + len(shown) - 1:
            text.append("\n")
    rest = len(paths) - first - len(shown)
    if rest > 0:
        text.append(f"\n… {rest} more", style="dim")
    return text


def command_list(matches: list[tuple[str, str]], selected: int) -> Text:
    """At most MAX_HINTS rows, scrolled to keep the highlighted one in sight."""
    first = max(0, selected - MAX_HINTS + 1)
    shown = matches[first : first + MAX_HINTS]
    width = max(len(name) for name, _ in matches) + 3
    text = Text()
    if first:
        text.append(f"… {first} more\n", style="dim")
    for index, (name, help_text) in enumerate(shown, first):
        style = "bold reverse" if index == selected else "bold"
        text.append(f"/{name}".ljust(width), style=style)
        text.append(help_text, style="dim")
        if index < first + len(shown) - 1:
            text.append("\n")
    rest = len(matches) - first - len(shown)
    if rest > 0:
        text.append(f"\n… {rest} more", style="dim")
    return text
