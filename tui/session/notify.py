"""How the parts of a session tell the user something: a notice on the session's event sink.

The session's builders and parts take a ``Notify`` rather than the whole
event sink when all they do is say something (a warning unless told otherwise).
"""

from __future__ import annotations

from typing import Protocol

from agent.core.events import EventSink, Notice, NoticeLevel


class Notify(Protocol):
    def __call__(self, text: str, level: NoticeLevel = "warning") -> None: ...


def notifier(emit: EventSink) -> Notify:
    """``emit`` as a ``Notify``: each call one ``Notice``."""

    def notify(text: str, level: NoticeLevel = "warning") -> None:
        emit(Notice(text, level))

    return notify
