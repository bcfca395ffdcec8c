"""A transcript block that expands to its details: a click, enter, or ctrl+o toggles it.

Blocks never take the keyboard on a click (typing stays in the prompt); Tab
still reaches them. The latest block with details carries the ctrl+o hint,
since ctrl+o (with no block focused) toggles that one.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.reactive import reactive
from textual.widgets import Static

HINT_EXPAND = "ctrl+o to expand"
HINT_COLLAPSE = "ctrl+o to collapse"


class Expandable(Static, can_focus=True):
    """A block with optional details; subclasses say what they are and render themselves."""

    FOCUS_ON_CLICK = False
    BINDINGS = [Binding("enter,space", "toggle", "Toggle details", show=False)]

    expanded: reactive[bool] = reactive(False)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.is_latest = False

    def can_expand(self) -> bool:
        """Whether there are details to show."""
        raise NotImplementedError

    def refresh_content(self) -> None:
        """Render the block for its current state."""
        raise NotImplementedError

    def hidden_lines(self) -> int:
        """How many lines the collapsed block leaves out."""
        raise NotImplementedError

    def marker(self) -> str:
        """The toggle's glyph, with "+N lines" when collapsed and the hint on the latest block."""
        if not self.can_expand():
            return ""
        if self.expanded:
            return f"  ▾ ({HINT_COLLAPSE})" if self.is_latest else "  ▾"
        words = f"+{self.hidden_lines()} lines"
        return f"  ▸ {words} ({HINT_EXPAND})" if self.is_latest else f"  ▸ {words}"

    def claim_latest(self) -> None:
        """Become the block ctrl+o toggles; the one before loses its hint."""
        owner = self.parent
        while owner is not None and not hasattr(owner, "latest_expandable"):
            owner = owner.parent  # the transcript, however deep the block sits
        if owner is None or not self.can_expand():
            return
        previous = owner.latest_expandable
        if previous is self:
            return
        owner.latest_expandable = self
        self.is_latest = True
        if isinstance(previous, Expandable):
            previous.is_latest = False
            previous.refresh_content()

    def on_click(self) -> None:
        if self.screen.selections:
            return  # the end of a drag that selected text: it is copied, the block stays
        self.action_toggle()

    # Not DOMNode's toggle of a named attribute: the block opens or closes itself.
    def action_toggle(self) -> None:  # type: ignore[override]
        if self.can_expand():
            self.expanded = not self.expanded

    def watch_expanded(self) -> None:
        self.refresh_content()
