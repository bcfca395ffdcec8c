"""Typed events the agent sends to whatever front end runs it.

The loop never prints or draws. The TUI, the plain REPL and headless mode all
consume the same events from one channel (an ``EventSink``), and stream-json
output is these events serialized one per line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from agent.core.compaction_record import CompactionRecord, CompactionTrigger
from agent.core.context_state import ContextState
from agent.core.messages import ApiMessage, ToolResultPart

if TYPE_CHECKING:
    from agent.permissions.rules import PermissionMode

NoticeLevel = Literal["info", "warning", "error"]
HookEnding = Literal["success", "error", "cancelled"]
# Why old tool results were cleared: ccx's reasons (compaction/microcompact.py), or the API's
# context editing.
ClearingReason = Literal["time", "cost", "pressure", "server"]
SubagentStatus = Literal["completed", "failed", "interrupted"]


@dataclass
class Event:
    type: ClassVar[str] = "event"

    def to_json(self) -> dict[str, Any]:
        """The event as a dict, for the boundaries only (stream-json, the transcript)."""
        return {"type": self.type, **{f.name: _json(getattr(self, f.name)) for f in fields(self)}}


def _json(value: Any) -> Any:
    """A typed payload as JSON values: its own ``to_json`` when it has one."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


EventSink = Callable[[Event], None]


def discard(_event: Event) -> None:
    """An EventSink for callers that do not watch."""


@dataclass
class SessionStarted(Event):
    type: ClassVar[str] = "session_started"
    session_id: str
    model: str
    cwd: str
    transcript_path: str
    resumed: bool = False
    tools: list[str] = field(default_factory=list)
    permission_mode: PermissionMode = "default"


@dataclass
class RequestStarted(Event):
    """A model request is about to be sent (after any compaction)."""

    type: ClassVar[str] = "request_started"
    model: str
    attempt: int = 1


@dataclass
class TextDelta(Event):
    type: ClassVar[str] = "text_delta"
    text: str


@dataclass
class ThinkingDelta(Event):
    type: ClassVar[str] = "thinking_delta"
    text: str


@dataclass
class StreamEvent(Event):
    """One raw event of the API's stream, as it came (stream-json's partial messages)."""

    type: ClassVar[str] = "stream_event"
    event: dict[str, Any]


@dataclass
class HookStarted(Event):
    """A hook began to run (stream-json ``--include-hook-events``)."""

    type: ClassVar[str] = "hook_started"
    hook_id: str
    hook_name: str  # "PreToolUse:Bash", as Claude Code names it
    hook_event: str


@dataclass
class HookResponse(Event):
    """A hook finished: what it printed and how it ended."""

    type: ClassVar[str] = "hook_response"
    hook_id: str
    hook_name: str
    hook_event: str
    output: str
    stdout: str
    stderr: str
    exit_code: int | None
    outcome: HookEnding


@dataclass
class ResponseDiscarded(Event):
    """The text and thinking streamed since the last request are not kept (a retry follows)."""

    type: ClassVar[str] = "response_discarded"
    reason: str


@dataclass
class AssistantMessage(Event):
    """One complete assistant response, as stored in the conversation."""

    type: ClassVar[str] = "assistant"
    message: ApiMessage
    api_id: str | None
    stop_reason: str | None
    usage: dict[str, int]
    model: str = ""  # the model that answered (stream-json's assistant message names it)
    uuid: str = ""  # the conversation message's uuid (the transcript's, stream-json's)


@dataclass
class ToolStarted(Event):
    type: ClassVar[str] = "tool_started"
    tool_use_id: str
    name: str
    input: dict[str, Any]
    label: str = ""  # the tool's own one-line label (Tool.label), e.g. "Read src/app.py"


@dataclass
class ToolFinished(Event):
    type: ClassVar[str] = "tool_result"
    tool_use_id: str
    name: str
    is_error: bool
    # The user's copies: the tool's own words (Bash: its whole output, capped) and the
    # result's text (its first and last 16 K characters when longer); the model's is ``content``.
    display: str
    output_preview: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    # The tool_result content the model is sent (stream-json's user message).
    content: str | list[ToolResultPart] | None = None


@dataclass
class ToolProgress(Event):
    """A running call's output so far (Bash: lines printed), for the user while it runs."""

    type: ClassVar[str] = "tool_progress"
    tool_use_id: str
    lines: int


@dataclass
class PermissionDenied(Event):
    type: ClassVar[str] = "permission_denied"
    tool_use_id: str
    name: str
    reason: str


@dataclass
class Usage(Event):
    """Token usage reported by the API for one response, and the running cost."""

    type: ClassVar[str] = "usage"
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    cost_usd: float
    total_cost_usd: float


@dataclass
class ApiRetry(Event):
    type: ClassVar[str] = "api_retry"
    attempt: int
    max_attempts: int
    delay_s: float
    reason: str


@dataclass
class Notice(Event):
    """Something the user should know that is not an error (a file changed, a model fell back)."""

    type: ClassVar[str] = "notice"
    text: str
    level: NoticeLevel = "info"


@dataclass
class ErrorEvent(Event):
    type: ClassVar[str] = "error"
    message: str
    kind: str = "api_error"
    recoverable: bool = True


@dataclass
class TurnFinished(Event):
    type: ClassVar[str] = "turn_finished"
    result: str
    stop_reason: str | None
    num_turns: int
    interrupted: bool = False
    is_error: bool = False


@dataclass
class ContextUpdate(Event):
    """How full the context is, for meters. Filled in by the context manager."""

    type: ClassVar[str] = "context"
    state: ContextState


@dataclass
class WorkingDirectoryChanged(Event):
    """The session works in another folder now (EnterWorktree, ExitWorktree)."""

    type: ClassVar[str] = "working_directory_changed"
    cwd: str


@dataclass
class ModeChanged(Event):
    """The permission mode changed (Shift-Tab, /plan, an approved plan)."""

    type: ClassVar[str] = "mode_changed"
    mode: PermissionMode
    previous: PermissionMode


@dataclass
class CompactionStarted(Event):
    type: ClassVar[str] = "compaction_started"
    trigger: CompactionTrigger
    tokens_before: int
    detail: str = ""


@dataclass
class CompactionFinished(Event):
    type: ClassVar[str] = "compaction_finished"
    record: CompactionRecord


@dataclass
class CompactionFailed(Event):
    type: ClassVar[str] = "compaction_failed"
    trigger: CompactionTrigger
    reason: str
    consecutive_failures: int = 0


SERVER_CLEARING: ClearingReason = "server"  # Microcompacted.reason when the API cleared


@dataclass
class Microcompacted(Event):
    """Old tool results were cleared (no model call).

    ``reason`` is why ccx cleared ("time", "cost", "pressure"), or
    ``SERVER_CLEARING`` when the API's context editing cleared them from what
    the model sees: then the counts are what the API reported for the latest
    request, and nothing is saved.
    """

    type: ClassVar[str] = "microcompact"
    reason: ClearingReason
    cleared: int
    tokens_freed: int
    saved_paths: list[str] = field(default_factory=list)
    thinking_dropped: int = 0  # earlier responses whose thinking blocks went with the clear


@dataclass
class SubagentStarted(Event):
    """An Agent call started a subagent (``tool_use_id`` is the parent's Agent call)."""

    type: ClassVar[str] = "subagent_started"
    tool_use_id: str
    agent_id: str
    agent_type: str
    description: str
    prompt: str
    background: bool = False


@dataclass
class SubagentEvent(Event):
    """An event of a running subagent, relayed to the front ends under its Agent call."""

    type: ClassVar[str] = "subagent_event"
    tool_use_id: str
    agent_id: str
    event: Event


@dataclass
class SubagentFinished(Event):
    """A subagent's end: ``status`` completed, failed or interrupted, with its figures."""

    type: ClassVar[str] = "subagent_finished"
    tool_use_id: str
    agent_id: str
    agent_type: str
    status: SubagentStatus
    result: str
    total_tokens: int = 0
    tool_uses: int = 0
    duration_ms: int = 0
    cost_usd: float = 0.0
    output_file: str = ""  # a background agent's output file
