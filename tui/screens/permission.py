"""The permission ask: allow once, always allow (saved as a rule), or deny."""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.widgets.tool_block import diff_text

if TYPE_CHECKING:
    from agent.loop.tool_runner import PermissionRequest

CONTENT_HEAD_LINES = 20
ANSWERS = ("allow", "always", "deny")


def edit_diff(tool_input: dict[str, Any]) -> str:
    path = str(tool_input.get("file_path", "file"))
    old = str(tool_input.get("old_string", ""))
    new = str(tool_input.get("new_string", ""))
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path.lstrip('/')}",
        tofile=f"b/{path.lstrip('/')}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def permission_preview(tool_name: str, tool_input: dict[str, Any]) -> Text:
    """What the call would do: the command, the diff, or the head of the new content."""
    if tool_name == "Bash":
        text = Text("$ ", style="bold")
        text.append(str(tool_input.get("command", "")), style="bold")
        if tool_input.get("description"):
            text.append(f"\n{tool_input['description']}", style="dim")
        return text
    if tool_name == "Edit":
        return diff_text(edit_diff(tool_input))
    if tool_name == "Write":
        content = str(tool_input.get("content", ""))
        lines = content.splitlines()
        text = Text(f"{tool_input.get('file_path', '')}\n", style="bold")
        text.append("\n".join(lines[:CONTENT_HEAD_LINES]), style="green")
        if len(lines) > CONTENT_HEAD_LINES:
            text.append(f"\n… {len(lines) - CONTENT_HEAD_LINES} more lines", style="dim italic")
        return text
    body = json.dumps(tool_input, indent=2, ensure_ascii=False)
    return Text(body if len(body) < 2_000 else body[:2_000] + "\n…")


class PermissionScreen(ModalScreen[str]):
    """Dismissed with "allow", "always" or "deny"; Esc denies."""

    DEFAULT_CSS = """
    PermissionScreen {
        align: center middle;
    }
    PermissionScreen > #permission-dialog {
        width: 90%;
        max-width: 110;
        height: auto;
        max-height: 90%;
        border: thick $warning;
        background: $surface;
        padding: 1 2;
    }
    PermissionScreen #permission-title {
        text-style: bold;
        margin-bottom: 1;
    }
    PermissionScreen #permission-preview {
        height: auto;
        max-height: 24;
        border: round $primary 40%;
        padding: 0 1;
    }
    PermissionScreen #permission-reason {
        color: $text-muted;
        margin: 1 0;
    }
    PermissionScreen OptionList {
        height: auto;
        border: none;
    }
    """

    BINDINGS = [
        Binding("1,y", "answer('allow')", "Allow once"),
        Binding("2,a", "answer('always')", "Always allow"),
        Binding("3,n,escape", "answer('deny')", "Deny"),
    ]

    class Withdrawn(Message):
        """The turn that asked was interrupted; the question no longer stands."""

    def __init__(self, request: PermissionRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        rule = str(request.suggestion)
        with Vertical(id="permission-dialog"):
            yield Static(
                f"Allow {request.tool_name}? {request.summary}", id="permission-title", markup=False
            )
            with VerticalScroll(id="permission-preview"):
                yield Static(permission_preview(request.tool_name, request.tool_input))
            yield Static(f"Why ccx asks: {request.reason}", id="permission-reason", markup=False)
            yield OptionList(
                Option("1. Yes, allow once  (y)", id="allow"),
                Option(f"2. Yes, and always allow {rule} in this project  (a)", id="always"),
                Option("3. No, deny  (n / esc)", id="deny"),
                id="permission-options",
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_answer(event.option.id or "deny")

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer if answer in ANSWERS else "deny")

    def on_permission_screen_withdrawn(self, _event: Withdrawn) -> None:
        self.dismiss("deny")
