"""Dialogs that fit the terminal: the scrolling body gives up rows so the choices stay in sight."""

from __future__ import annotations

from typing import Any

from textual.css.scalar import Scalar
from textual.screen import Screen
from textual.widget import Widget

MIN_BODY_ROWS = 3  # a bordered body still shows one line of what is asked
FOOTER_ROWS = 1  # the footer's meter stays in sight under a dialog


def fit_body(screen: Screen[Any], dialog: Widget, body: Widget, most: int) -> None:
    """Let ``body`` (a scrolling child of ``dialog``) have only the rows the rest of the dialog leaves free.

    The dialog itself stops above the footer, so the meter stays whole under it.
    """
    tallest = max(MIN_BODY_ROWS, screen.size.height - FOOTER_ROWS)
    if dialog.styles.max_height != Scalar.from_number(tallest):
        dialog.styles.max_height = tallest
    others = sum(child.outer_size.height for child in dialog.children if child is not body)
    free = tallest - dialog.styles.gutter.height - others
    rows = max(MIN_BODY_ROWS, min(most, free))
    if body.styles.max_height != Scalar.from_number(rows):
        body.styles.max_height = rows
