"""Putting the agent's question (a permission, a plan) on screen and sending the answer back."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.screen import ModalScreen

if TYPE_CHECKING:
    from tui.session.folder_trust import TrustQuestion


def ask_on_screen(
    app: App[Any],
    screen: ModalScreen[Any],
    answer: concurrent.futures.Future[Any],
    withdrawn: type[Message],
    answered: Callable[[Any], bool] | None = None,
) -> None:
    """Show ``screen``; its result resolves ``answer``. If the agent withdraws the question
    (the turn was interrupted and the future cancelled), the screen gets ``withdrawn()``.
    ``answered(value)`` sees the result first; False: it took care of it, nothing is sent."""

    def resolve(value: Any) -> None:
        if answered is not None and not answered(value):
            return
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


def show_permission(
    app: App[Any],
    request: Any,
    answer: concurrent.futures.Future[Any],
    options: Any,
    interrupt: Callable[[], None],
) -> None:
    """The permission dialog for ``request`` (a PermissionRequest), paths relative to the project.

    Allowed, the status line says the call runs; Esc (``"interrupt"``) stops the whole turn
    through ``interrupt``, as Esc does while the agent works: no later call is asked about.
    """
    from tui.fullscreen.screens.permission import INTERRUPT, PermissionScreen
    from tui.fullscreen.widgets.status_line import StatusLine
    from tui.fullscreen.widgets.transcript import Transcript

    status, transcript = app.query_one(StatusLine), app.query_one(Transcript)

    def answered(value: Any) -> bool:
        if value == INTERRUPT:
            interrupt()
            return False
        if value in ("allow", "always"):
            transcript.tool_asking(request.tool_use_id, False)
            status.show(f"Running {request.summary or request.tool_name}…")
        else:
            status.show("Thinking…")
        return True

    screen = PermissionScreen(request, options.cwd if options else None)
    status.show(f"Waiting for permission to use {request.tool_name}…")
    transcript.tool_asking(request.tool_use_id, True)
    ask_on_screen(app, screen, answer, PermissionScreen.Withdrawn, answered)


def show_trust(
    app: App[Any], question: TrustQuestion, answer: concurrent.futures.Future[str]
) -> None:
    """The trust question; "exit" quits the app."""
    from tui.fullscreen.screens.trust import TrustScreen
    from tui.fullscreen.widgets.status_line import StatusLine

    def exit_if_declined(future: concurrent.futures.Future[str]) -> None:
        if not future.cancelled() and future.result() == "exit":
            app.exit(0)

    answer.add_done_callback(exit_if_declined)
    app.query_one(StatusLine).show("Waiting for your answer: trust this folder?", hint="")
    ask_on_screen(app, TrustScreen(question), answer, TrustScreen.Withdrawn)


def show_plan(app: App[Any], plan: str, answer: concurrent.futures.Future[Any]) -> None:
    """ExitPlanMode's question: approve the plan or keep planning."""
    from tui.fullscreen.screens.plan_approval import PlanApprovalScreen
    from tui.fullscreen.widgets.status_line import StatusLine

    app.query_one(StatusLine).show("Waiting for plan approval…")
    ask_on_screen(app, PlanApprovalScreen(plan), answer, PlanApprovalScreen.Withdrawn)
