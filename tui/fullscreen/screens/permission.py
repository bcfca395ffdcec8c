"""The permission ask: allow once, always allow (saved as a rule), or deny."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tools.paths import short_path
from tui.call_preview import CONTENT_HEAD_LINES, edit_diff
from tui.fullscreen.screens.fit import fit_body
from tui.fullscreen.widgets.tool_block import diff_text

if TYPE_CHECKING:
    from agent.loop.tool_runner import PermissionRequest

MAX_PREVIEW_ROWS = 24
ANSWERS = ("allow", "always", "deny")
INTERRUPT = "interrupt"  # Esc: not an answer to this call, the end of the turn


def _without_file_lines(diff: str) -> str:
    lines = diff.splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith(("--- ", "+++ ")))


def permission_preview(tool_name: str, tool_input: dict[str, Any], cwd: Path | None = None) -> Text:
    """What the call would do: the command, the diff, or the head of the new content."""
    if tool_name == "Bash":
        text = Text("$ ", style="bold")
        text.append(str(tool_input.get("command", "")), style="bold")
        if tool_input.get("description"):
            text.append(f"\n{tool_input['description']}", style="dim")
        return text
    if tool_name == "Edit":  # the title names the file: its ---/+++ lines would only take rows
        return diff_text(_without_file_lines(edit_diff(tool_input, cwd)))
    if tool_name == "Write":
        content = str(tool_input.get("content", ""))
        lines = content.splitlines()
        shown = short_path(str((cwd or Path.cwd()) / str(tool_input.get("file_path", ""))), cwd)
        text = Text(f"{shown}\n", style="bold")
        text.append("\n".join(lines[:CONTENT_HEAD_LINES]), style="green")
        if len(lines) > CONTENT_HEAD_LINES:
            text.append(f"\n… {len(lines) - CONTENT_HEAD_LINES} more lines", style="dim italic")
        return text
    if tool_name == "WebFetch":  # where it goes, and what it will ask of the page
        text = Text(str(tool_input.get("url", "")), style="bold")
        text.append(f"\n{str(tool_input.get('prompt', ''))[:1_000]}", style="dim")
        return text
    body = json.dumps(tool_input, indent=2, ensure_ascii=False)
    return Text(body if len(body) < 2_000 else body[:2_000] + "\n…")


class PermissionScreen(ModalScreen[str]):
    """Dismissed with "allow", "always" or "deny"; Esc with "interrupt" (the turn stops).

    The dialog fits the terminal at any height: the preview scrolls inside and
    gives up rows first, so the three choices and their keys stay in sight. The
    keyboard scrolls it (PageUp/PageDown, shift+arrows or left/right; up/down pick).
    """

    DEFAULT_CSS = """
    PermissionScreen {
        align: center middle;
    }
    PermissionScreen > #permission-dialog {
        width: 100%;
        max-width: 110;
        height: auto;
        max-height: 100%;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    PermissionScreen #permission-title {
        text-style: bold;
    }
    PermissionScreen #permission-preview {
        height: auto;
        max-height: 24;
        overflow-x: hidden;
        border: round $primary 40%;
        padding: 0 1;
    }
    PermissionScreen #permission-reason {
        color: $text-muted;
    }
    PermissionScreen OptionList, PermissionScreen OptionList:focus {
        height: auto;
        border: none;
        padding: 0;
    }
    """

    BINDINGS = [
        Binding("1,y", "answer('allow')", "Allow once"),
        Binding("2,a", "answer('always')", "Always allow"),
        Binding("3,n", "answer('deny')", "Deny"),
        Binding("escape", "answer('interrupt')", "Stop the turn"),
        # Priority: the choices' list would otherwise take these to page through three options.
        Binding("pageup", "scroll_preview('page_up')", "Scroll up", show=False, priority=True),
        Binding(
            "pagedown", "scroll_preview('page_down')", "Scroll down", show=False, priority=True
        ),
        Binding("shift+up,left", "scroll_preview('up')", "Scroll up", show=False),
        Binding("shift+down,right", "scroll_preview('down')", "Scroll down", show=False),
    ]

    class Withdrawn(Message):
        """The turn that asked was interrupted; the question no longer stands."""

    def __init__(self, request: PermissionRequest, cwd: Path | None = None) -> None:
        super().__init__()
        self.request = request
        self.cwd = cwd
        self.answered = False

    def compose(self) -> ComposeResult:
        request = self.request
        rule, reason = self._relative(str(request.suggestion)), self._relative(request.reason)
        with Vertical(id="permission-dialog"):
            yield Static(
                f"Allow {request.tool_name}? {request.summary}", id="permission-title", markup=False
            )
            with VerticalScroll(id="permission-preview"):
                yield Static(permission_preview(request.tool_name, request.tool_input, self.cwd))
            yield Static(f"Why ccx asks: {reason}", id="permission-reason", markup=False)
            yield OptionList(
                Option("1. Yes, allow once  (y)", id="allow"),
                Option(f"2. Yes, and always allow {rule} in this project  (a)", id="always"),
                Option("3. No, deny  (n)", id="deny"),
                id="permission-options",
            )

    def _relative(self, text: str) -> str:
        """``text`` with paths inside the project as the user reads them: relative to it."""
        if self.cwd is None:
            return text
        for prefix in (f"/{self.cwd}{os.sep}", f"{self.cwd}{os.sep}"):  # "//abs" is a rule's form
            text = text.replace(prefix, "")
        return text

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.call_after_refresh(self._fit_preview)
        self.set_interval(0.2, self._say_it_scrolls)

    def on_resize(self, _event: Resize) -> None:
        self.call_after_refresh(self._fit_preview)

    def _fit_preview(self) -> None:
        dialog = self.query_one("#permission-dialog")
        preview = self.query_one("#permission-preview", VerticalScroll)
        fit_body(self, dialog, preview, MAX_PREVIEW_ROWS)

    def _say_it_scrolls(self) -> None:  # on a timer: the layout settles some frames later
        preview = self.query_one("#permission-preview", VerticalScroll)
        preview.border_subtitle = "PgUp/PgDn to scroll" if preview.max_scroll_y > 0 else ""

    def action_scroll_preview(self, where: str) -> None:
        preview = self.query_one("#permission-preview", VerticalScroll)
        {
            "page_up": preview.scroll_page_up,
            "page_down": preview.scroll_page_down,
            "up": preview.scroll_up,
            "down": preview.scroll_down,
        }[where](animate=False)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_answer(event.option.id or "deny")

    def action_answer(self, answer: str) -> None:
        if self.answered:
            return
        self.answered = True
        self.dismiss(answer if answer in (*ANSWERS, INTERRUPT) else "deny")

    def on_permission_screen_withdrawn(self, _event: Withdrawn) -> None:
        self.action_answer("deny")  # gone already if Esc here is what stopped the turn
