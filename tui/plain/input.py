"""Where the plain REPL's input comes from: a prompt_toolkit prompt, or lines piped on stdin.

The prompt has history (a file under the config directory; ctrl+r searches it, Esc
gives back what was typed), multi-line input (shift+enter, Alt+Enter or Esc-Enter,
ctrl+j, or a trailing backslash), completion of slash commands and of the project's paths
after ``@`` (tui.project_index, listed at the first ``@``), long pastes folded to
``[Pasted text #N +L lines]`` and sent whole (tui.pasted_text), Shift-Tab to cycle the
permission mode, Esc twice on an empty prompt to rewind, and a bottom toolbar with the
model, the mode and the context meter. Ctrl-C clears a line with text and quits on an
empty one; Ctrl-D quits. Permission questions take one key: y / a / n (Esc and Ctrl-C
answer no, Ctrl-C also interrupts the turn).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, ThreadedCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.filters import is_searching
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.key_binding.bindings.search import abort_search
from prompt_toolkit.keys import Keys
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from tui.pasted_text import Pastes, normalized, should_fold

if TYPE_CHECKING:
    from tui.project_index import ProjectIndex

REWIND_LINE = "/rewind"  # what Esc twice on an empty prompt reads as
PermissionReply = Literal["allow", "always", "deny", "interrupt"]
REPLIES: dict[str, PermissionReply] = {
    "y": "allow",
    "yes": "allow",
    "1": "allow",
    "a": "always",
    "always": "always",
    "2": "always",
    "n": "deny",
    "no": "deny",
    "3": "deny",
}

STYLE = Style.from_dict(
    {
        "bottom-toolbar": "noreverse bg:#1c1c1c #bcbcbc",
        "toolbar.model": "#87afff",
        "toolbar.mode": "#d7afff",
        "meter.ok": "#5fd75f",
        "meter.warning": "#ffd75f",
        "meter.error": "#ff5f5f bold",
        "meter.blocking": "#ff5f5f bold",
        "prompt": "bold",
    }
)


class LineSource(Protocol):
    interactive: bool

    async def read_prompt(self) -> str:
        """The next prompt; EOFError or KeyboardInterrupt when the user quits."""
        ...

    async def read_permission(self) -> PermissionReply:
        """The answer to the permission question just printed."""
        ...

    def prefill(self, text: str) -> None:
        """Start the next prompt with ``text`` in it (a rewound prompt, given back)."""
        ...

    async def read_secret(self) -> str:
        """A line typed without being shown and kept in no history (/login's key)."""
        ...


def parse_reply(text: str) -> PermissionReply | None:
    return REPLIES.get(text.strip().lower())


class SlashCommandCompleter(Completer):
    """Completes `/name` at the start of the input from the command table."""

    def __init__(self, commands: dict[str, str]) -> None:
        self.commands = commands  # name -> help

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or any(c.isspace() for c in text):
            return
        typed = text[1:].lower()
        for name, help_text in self.commands.items():
            if name.lower().startswith(typed):
                yield Completion("/" + name, start_position=-len(text), display_meta=help_text)


class PathCompleter(Completer):
    """Completes an ``@`` word before the cursor from the project's paths (best first)."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        before = document.text_before_cursor
        at = before.rfind("@")
        word = before[at + 1 :]
        if at < 0 or (at and not before[at - 1].isspace()) or any(c.isspace() for c in word):
            return
        for path in self.index.match(word) or ():
            mention = f'@"{path}"' if any(c.isspace() for c in path) else f"@{path}"
            yield Completion(mention, start_position=-len(word) - 1, display=path)


class PromptCompleter(Completer):
    """Slash commands at the start, paths after an ``@``."""

    def __init__(self, commands: Completer, paths: Completer | None) -> None:
        self.parts = [commands, *([paths] if paths is not None else [])]

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        for part in self.parts:
            yield from part.get_completions(document, complete_event)


def toolbar_fragments(
    model: str, mode: str, meter: str | None, level: str, warning: str | None
) -> FormattedText:
    fragments: list[tuple[str, str]] = [
        ("class:toolbar.model", f" {model}"),
        ("", " · "),
        ("class:toolbar.mode", mode),
    ]
    if meter:
        fragments += [("", " · "), (f"class:meter.{level}", meter)]
    if warning:
        fragments += [("", "\n "), (f"class:meter.{level}", warning)]
    return FormattedText(fragments)


def use_shift_enter() -> None:
    """Read shift+enter as Alt+Enter (a new line): kitty's form is unknown to prompt_toolkit and
    xterm's modifyOtherKeys form it reads as Enter. Its table of sequences is the documented
    place to add keys."""
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.keys import Keys

    for sequence in ("\x1b[13;2u", "\x1b[27;2;13~", "\x1b[13;3u", "\x1b[27;3;13~"):
        ANSI_SEQUENCES[sequence] = (Keys.Escape, Keys.ControlM)


def prompt_bindings(on_cycle_mode: Callable[[], None], pastes: Pastes | None = None) -> KeyBindings:
    bindings = KeyBindings()
    pastes = pastes if pastes is not None else Pastes()

    @bindings.add(Keys.BracketedPaste)
    def _paste(event: KeyPressEvent) -> None:
        text = normalized(event.data)
        event.current_buffer.insert_text(pastes.fold(text) if should_fold(text) else text)

    @bindings.add("backspace")
    def _backspace(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        folded = pastes.ending_at(buffer.document.current_line_before_cursor)
        buffer.delete_before_cursor(folded or event.arg)

    @bindings.add("escape", "enter")  # Alt+Enter, and shift+enter (see use_shift_enter)
    @bindings.add("c-j")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("enter", filter=~is_searching)  # while ctrl+r searches, Enter keeps the match
    def _submit(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and state.current_completion is not None:
            buffer.apply_completion(state.current_completion)
            return
        if (
            buffer.document.text_before_cursor.endswith("\\")
            and buffer.document.is_cursor_at_the_end
        ):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
            return
        buffer.validate_and_handle()

    # Esc in a ctrl+r search brings back what was typed (as ctrl+g), as in the full-screen app
    bindings.add("escape", filter=is_searching, eager=True)(abort_search)

    @bindings.add("escape", "escape", filter=~is_searching)
    def _rewind(event: KeyPressEvent) -> None:
        """Esc twice on an empty prompt: go back to an earlier prompt (the REPL asks which)."""
        if not event.current_buffer.text:
            event.app.exit(result=REWIND_LINE)

    @bindings.add("c-c")
    def _clear_or_quit(event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt())

    @bindings.add("s-tab")
    def _cycle_mode(event: KeyPressEvent) -> None:
        on_cycle_mode()
        event.app.invalidate()

    return bindings


def permission_bindings() -> KeyBindings:
    bindings = KeyBindings()

    def answer(reply: PermissionReply) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            event.app.exit(result=reply)

        return handler

    for key, reply in (("y", "allow"), ("a", "always"), ("n", "deny")):
        bindings.add(key)(answer(reply))  # type: ignore[arg-type]
    bindings.add("escape", eager=True)(answer("deny"))
    bindings.add("c-c")(answer("interrupt"))
    bindings.add("c-d")(answer("deny"))
    return bindings


class PromptSource:
    """Input from a terminal (or, in tests, a prompt_toolkit pipe input)."""

    interactive = True

    def __init__(
        self,
        commands: dict[str, str],
        toolbar: Callable[[], Any],
        on_cycle_mode: Callable[[], None],
        history_path: Path | None = None,
        pt_input: Input | None = None,
        pt_output: Output | None = None,
        files: ProjectIndex | None = None,
    ) -> None:
        use_shift_enter()
        self.pastes = Pastes()
        paths = PathCompleter(files) if files is not None else None
        history: History = InMemoryHistory()
        if history_path is not None:
            try:
                history_path.parent.mkdir(parents=True, exist_ok=True)
                history = FileHistory(str(history_path))
            except OSError:
                pass  # no writable config directory: history for this session only
        self.session: PromptSession[str] = PromptSession(
            message=[("class:prompt", "> ")],
            history=history,
            completer=ThreadedCompleter(PromptCompleter(SlashCommandCompleter(commands), paths)),
            complete_while_typing=True,
            bottom_toolbar=toolbar,
            key_bindings=prompt_bindings(on_cycle_mode, self.pastes),
            prompt_continuation=lambda width, _line, _soft: "… ".rjust(width),
            style=STYLE,
            input=pt_input,
            output=pt_output,
        )
        self._default = ""  # the next prompt's starting text
        self.secret: PromptSession[str] = PromptSession(
            message="  key › ", is_password=True, style=STYLE, input=pt_input, output=pt_output
        )
        self.question: PromptSession[str] = PromptSession(
            message="  y/a/n › ",
            key_bindings=permission_bindings(),
            style=STYLE,
            input=pt_input,
            output=pt_output,
        )

    async def read_prompt(self) -> str:
        """The line typed (after any text put back by a rewind), each folded paste in it
        given back whole."""
        default, self._default = self._default, ""
        return self.pastes.expand(await self.session.prompt_async(default=default))

    def prefill(self, text: str) -> None:
        self._default = text

    async def read_secret(self) -> str:
        return await self.secret.prompt_async()

    async def read_permission(self) -> PermissionReply:
        while True:
            try:
                text = await self.question.prompt_async()
            except KeyboardInterrupt:
                return "interrupt"
            except EOFError:
                return "deny"
            if text in ("allow", "always", "deny", "interrupt"):
                return text  # type: ignore[return-value]
            reply = parse_reply(text)
            if reply is not None:
                return reply


class PipedSource:
    """Input piped on stdin: one prompt a line (a trailing backslash continues it)."""

    interactive = False

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdin

    async def _line(self) -> str | None:
        line = await asyncio.get_running_loop().run_in_executor(None, self.stream.readline)
        return line if line else None

    async def read_prompt(self) -> str:
        parts: list[str] = []
        while True:
            line = await self._line()
            if line is None:
                if parts:
                    return "\n".join(parts)
                raise EOFError
            text = line.rstrip("\n")
            if text.endswith("\\"):
                parts.append(text[:-1])
                continue
            parts.append(text)
            return "\n".join(parts)

    async def read_permission(self) -> PermissionReply:
        line = await self._line()
        return (parse_reply(line) if line is not None else None) or "deny"

    def prefill(self, text: str) -> None:
        """Piped lines come as they are: nothing to put before them."""

    async def read_secret(self) -> str:
        line = await self._line()
        return line.rstrip("\n") if line is not None else ""
