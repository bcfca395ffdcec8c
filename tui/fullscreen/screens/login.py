"""/login in the full-screen app: a masked field for the API key; Enter stores it, Esc cancels.

The key is checked and stored by tui.session.login; a refused key keeps the
dialog open with the reason, so nothing typed is lost and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tui.session.login import LOGIN_PROMPT, login


class LoginScreen(ModalScreen[str | None]):
    """Dismissed with what to show once the key is stored; None when cancelled."""

    DEFAULT_CSS = """
    LoginScreen {
        align: center middle;
    }
    LoginScreen > #login-dialog {
        width: 100%;
        max-width: 90;
        height: auto;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    LoginScreen #login-problem {
        color: $error;
    }
    LoginScreen #login-keys {
        color: $text-muted;
    }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, cwd: Path) -> None:
        super().__init__()
        self.cwd = cwd

    def compose(self) -> ComposeResult:
        with Vertical(id="login-dialog"):
            yield Static("[b]Log in with an API key[/b]")
            yield Static(LOGIN_PROMPT)
            yield Input(password=True, placeholder="sk-ant-…", id="login-key")
            yield Static("", id="login-problem")
            yield Static("Store (enter) · cancel (esc)", id="login-keys")

    def on_mount(self) -> None:
        self.query_one("#login-key", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        key = event.value.strip()
        if not key:
            self.dismiss(None)
            return
        try:
            self.dismiss(login(key, self.cwd))
        except (ValueError, OSError) as error:
            self.query_one("#login-problem", Static).update(f"Not stored: {error}")

    def action_cancel(self) -> None:
        self.dismiss(None)


def log_in(app: App[Any], cwd: Path, say: Callable[[str, str], object]) -> None:
    """Open the dialog; ``say(text, kind)`` puts its outcome in the transcript."""

    def done(said: str | None) -> None:
        say(said or "Login cancelled: nothing stored.", "info" if said else "warning")

    app.push_screen(LoginScreen(cwd), done)
