"""The model's thinking in the transcript: one dim "∴ Thinking…" line that expands to the text.

It streams in collapsed (the status line says "Thinking…" meanwhile); a click,
enter or ctrl+o on the latest one shows what the model thought, as the
transcript toggle does for tool output.
"""

from __future__ import annotations

from rich.text import Text

from tui.fullscreen.widgets.expandable import Expandable

LABEL = "∴ Thinking…"


class ThinkingBlock(Expandable):
    DEFAULT_CSS = """
    ThinkingBlock {
        height: auto;
        padding: 0 1;
        color: $text-muted;
    }
    ThinkingBlock:focus {
        background: $boost;
    }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__(classes="thinking")
        self.text = text

    def append(self, text: str) -> None:
        had_text = bool(self.text.strip())
        self.text += text
        if not had_text and self.text.strip() and self.is_mounted:
            self.claim_latest()  # it has something to show now
        if self.expanded or not had_text:
            self.refresh_content()

    def can_expand(self) -> bool:
        return bool(self.text.strip())

    def hidden_lines(self) -> int:
        return len(self.text.strip().splitlines())

    def on_mount(self) -> None:
        self.claim_latest()
        self.refresh_content()

    def refresh_content(self) -> None:
        body = Text(LABEL, style="dim italic")
        body.append(self.marker(), style="dim")
        if self.expanded:
            for line in self.text.strip().splitlines():
                body.append(f"\n  {line}", style="dim italic")
        self.update(body)
