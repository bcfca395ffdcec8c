"""Rewinding in the full-screen app: Esc twice on an idle, empty prompt (or a bare /rewind)
opens the picker of earlier prompts; the choice runs as ``/rewind N [files]``, and the
rewound conversation is drawn again with the prompt's text back in the input."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App

    from tui.fullscreen.agent_messages import ConversationRewound
    from tui.fullscreen.bridge import AgentBridge
    from tui.fullscreen.widgets.prompt_box import PromptInput
    from tui.fullscreen.widgets.status_line import StatusLine
    from tui.fullscreen.widgets.transcript import Transcript

REWIND_PRESS_S = 0.8  # esc twice within this on an idle, empty prompt: the rewind picker


class RewindFlow:
    def __init__(
        self,
        app: App[Any],
        bridge: AgentBridge,
        *,
        cwd: Callable[[], Path | None],
        status: Callable[[], StatusLine],
        prompt: Callable[[], PromptInput],
        transcript: Callable[[], Transcript],
        idle: Callable[[], bool],  # the session is ready and nothing runs or waits
        run_command: Callable[[str], None],  # queue a slash command (not echoed)
    ) -> None:
        self.app, self.bridge, self.cwd = app, bridge, cwd
        self.status, self.prompt, self.transcript = status, prompt, transcript
        self.idle, self.run_command = idle, run_command
        self.last_escape = float("-inf")

    def escape(self) -> None:
        """Esc on an idle, empty prompt; a second one soon after opens the picker."""
        if self.prompt().text or not self.idle():
            return
        now = time.monotonic()
        if now - self.last_escape > REWIND_PRESS_S:
            self.last_escape = now
            self.status().note("Esc again to rewind to an earlier prompt", 1.5)
            return
        self.last_escape = float("-inf")
        self.open()

    def open(self) -> None:
        self.app.run_worker(self._open(), exclusive=True, group="rewind")

    async def _open(self) -> None:
        from textual.screen import ModalScreen

        from tui.fullscreen.screens.rewind import RewindScreen

        points = await asyncio.wrap_future(self.bridge.rewind_points())
        if not self.idle():  # /rewind typed while ccx works, or a prompt sent since
            self.status().note("Finish or stop (esc) the turn to rewind", 3.0)
            return
        if isinstance(self.app.screen, ModalScreen):
            return  # a dialog opened meanwhile
        if not points:
            self.status().note("No prompt to rewind to yet", 3.0)
            return
        self.app.push_screen(RewindScreen(points, self.cwd()), self._chosen)

    def _chosen(self, choice: tuple[int, bool] | None) -> None:
        if choice is not None:  # run as a command, not echoed: its result line says it all
            number, files = choice
            self.run_command(f"/rewind {number}{' files' * files}")

    async def show(self, message: ConversationRewound) -> None:
        """The conversation drawn as it now is, the prompt's text back in the input."""
        transcript = self.transcript()
        await transcript.clear_all()
        await transcript.load_history(message.history)
        prompt = self.prompt()
        if not prompt.text:
            prompt.text = message.text
            prompt.move_cursor(prompt.document.end)
