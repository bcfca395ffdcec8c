"""Putting the agent's question (a permission, a plan) on screen and sending the answer back."""

from __future__ import annotations

import concurrent.futures
from typing import Any

from textual.app import App
from textual.message import Message
from textual.screen import ModalScreen


def ask_on_screen(
    app: App[Any],
    screen: ModalScreen[Any],
    answer: concurrent.futures.Future[Any],
    withdrawn: type[Message],
) -> None:
    """Show ``screen``; its result resolves ``answer``. If the agent withdraws the question
    (the turn was interrupted and the future cancelled), the screen gets ``withdrawn()``."""

    def resolve(value: Any) -> None:
        if not answer.done():
            try:
                answer.set_result(value)
            except concurrent.futures.InvalidStateError:
                pass  # cancelled by an interrupt at the same moment

    def on_done(future: concurrent.futures.Future[Any]) -> None:
        if future.cancelled():
            screen.post_message(withdrawn())  # thread-safe: this runs on the agent thread

    answer.add_done_callback(on_done)
    app.push_screen(screen, resolve)
