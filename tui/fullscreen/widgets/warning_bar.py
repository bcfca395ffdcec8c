"""The context warning bar: hidden while all is well, yellow at warning, red at error."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

if TYPE_CHECKING:
    from compaction.thresholds import ContextState


class WarningBar(Static):
    """Says what will happen to the context and offers /compact; shows the circuit breaker."""

    DEFAULT_CSS = """
    WarningBar {
        height: auto;
        padding: 0 1;
        display: none;
    }
    WarningBar.-shown {
        display: block;
    }
    WarningBar.-warning {
        background: $warning 30%;
        color: $text;
    }
    WarningBar.-error {
        background: $error 45%;
        color: $text;
        text-style: bold;
    }
    """

    state: reactive[ContextState | None] = reactive(None)

    def watch_state(self, state: ContextState | None) -> None:
        text = None
        severe = False
        if state is not None:
            from compaction.thresholds import warning_text

            text = warning_text(state)
            severe = state.level in ("error", "blocking") or state.circuit_open
        shown = bool(text)
        self.set_class(shown, "-shown")
        self.set_class(shown and not severe, "-warning")
        self.set_class(shown and severe, "-error")
        self.update(Text(f"⚠ {text}") if text else "")
