"""What the agent thread posts to the app: agent events, readiness, job ends, questions.

Textual messages built on the agent thread and handled on the UI's; their
payloads are plain values the UI may read without touching the Runtime.
"""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from agent.core.events import Event
    from agent.loop.tool_runner import PermissionRequest
    from tui.fullscreen.history import Entry
    from tui.session.driver import LineResult
    from tui.session.folder_trust import TrustQuestion
    from tui.session.views import StatusSnapshot


@dataclass(frozen=True)
class Ready:
    session_id: str
    status: StatusSnapshot
    commands: list[tuple[str, str]]
    history: list[Entry] = field(default_factory=list)
    resumed: bool = False
    fallback_reason: str | None = None
    history_shown_early: bool = False  # HistoryLoaded came first


class AgentEvent(Message):
    """One event from the agent loop (text deltas arrive batched)."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class ArgumentsParsed(Message):
    """The command line, parsed after the first paint; ``error`` when it was refused."""

    def __init__(self, parsed: Any, error: str | None, exit_code: int) -> None:
        super().__init__()
        self.parsed = parsed
        self.error = error
        self.exit_code = exit_code


class HistoryLoaded(Message):
    """A resumed session's history, read before the runtime is built so it is drawn sooner."""

    def __init__(self, history: list[Entry]) -> None:
        super().__init__()
        self.history = history


class RuntimeReady(Message):
    def __init__(self, ready: Ready) -> None:
        super().__init__()
        self.ready = ready


class RuntimeFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class StatusChanged(Message):
    """The driver's status snapshot: after every job, a compaction, a change of mode."""

    def __init__(self, status: StatusSnapshot) -> None:
        super().__init__()
        self.status = status


class StatusCommandText(Message):
    """The statusLine command printed a new first line ("" when it failed or printed none)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class ConversationRewound(Message):
    """``/rewind`` went back: the conversation as it now is, and the prompt's text to put
    back in the input (posted before the job's JobFinished)."""

    def __init__(self, history: list[Entry], text: str) -> None:
        super().__init__()
        self.history = history
        self.text = text


class JobFinished(Message):
    """A line ended: ``outcome`` is "done", "interrupted" or "error" (``error`` says what)."""

    def __init__(
        self,
        job_id: int,
        kind: str,
        outcome: str,
        result: LineResult | None = None,
        error: str | None = None,
    ) -> None:
        super().__init__()
        self.job_id = job_id
        self.kind = kind
        self.outcome = outcome
        self.result = result
        self.error = error


class BackgroundJobEnded(Message):
    """A background job (``tools.jobs``) ended: an idle app tells the model at once."""

    def __init__(self, job_id: str) -> None:
        super().__init__()
        self.job_id = job_id


class PermissionAsked(Message):
    def __init__(self, request: PermissionRequest, answer: concurrent.futures.Future[str]) -> None:
        super().__init__()
        self.request = request
        self.answer = answer


class PlanApprovalAsked(Message):
    def __init__(self, plan: str, answer: concurrent.futures.Future[bool]) -> None:
        super().__init__()
        self.plan = plan
        self.answer = answer


class TrustAsked(Message):
    """The project configures things that run; ``answer`` gets "trust", "untrusted" or "exit"."""

    def __init__(self, question: TrustQuestion, answer: concurrent.futures.Future[str]) -> None:
        super().__init__()
        self.question = question
        self.answer = answer
