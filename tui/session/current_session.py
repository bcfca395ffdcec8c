"""The transcript a session writes now and the context manager over its conversation.

Both are replaced together when /clear starts a new conversation
(``Runtime.clear_conversation``); everything else reads them from here, so
nothing holds on to the old ones.
"""

from __future__ import annotations

from agent.sessions.session import Session
from tui.session.context_setup import ContextParts, build_context_manager


class CurrentSession:
    """The session being recorded, and its context manager (``restart`` replaces both)."""

    def __init__(self, session: Session, parts: ContextParts, model: str) -> None:
        self.parts = parts
        self.session = session
        self.context = build_context_manager(parts, session, model)

    def restart(self, session: Session, model: str) -> None:
        """Record into ``session`` from now on, with a fresh context manager for ``model``."""
        self.session = session
        counter = self.context.counter  # what this API's counts taught stays
        self.context = build_context_manager(self.parts, session, model)
        if counter.observations:
            self.context.counter.seed(counter.calibration)
