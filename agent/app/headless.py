"""`ccx -p`: run one prompt without a UI and print text, one JSON result, or a JSON event stream."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
import time
from typing import Any, TextIO

from agent.app import commands
from agent.app.options import RunOptions, StartupError
from agent.app.runtime import Runtime
from agent.core.events import (
    CompactionFailed,
    CompactionFinished,
    ErrorEvent,
    Event,
    Microcompacted,
    Notice,
    PermissionDenied,
    SessionStarted,
    TextDelta,
    ThinkingDelta,
)
from agent.loop.agent import MaxTurnsReached
from agent.model.client import ApiError
from agent.sessions.session import TranscriptWriteError, transcript_failure_text
from tools.surrogates import escape_text, escape_value, is_encodable

log = logging.getLogger(__name__)

OUTPUT_FORMATS = ("text", "json", "stream-json")
EXIT_INTERRUPTED = 130


class HeadlessOutput:
    """Collects what the result needs from the event stream and prints per the format."""

    def __init__(
        self, output_format: str, include_partial: bool = False, out: TextIO | None = None
    ):
        self.format = output_format
        self.include_partial = include_partial
        self.out = out or sys.stdout
        self.session_id = ""
        self.model = ""
        self.compactions: list[dict[str, Any]] = []
        # microcompactions and failed compactions, in order (finished ones are in compactions)
        self.context_events: list[dict[str, Any]] = []
        self.denials: list[dict[str, Any]] = []

    def emit(self, event: Event) -> None:
        if isinstance(event, SessionStarted):
            self.session_id = event.session_id
            self.model = event.model
        elif isinstance(event, CompactionFinished):
            self.compactions.append(event.record)
        elif isinstance(event, Microcompacted):
            self.context_events.append(
                {
                    "type": event.type,
                    "reason": event.reason,
                    "cleared": event.cleared,
                    "tokens_freed": event.tokens_freed,
                }
            )
        elif isinstance(event, CompactionFailed):
            self.context_events.append(
                {"type": event.type, "trigger": event.trigger, "reason": event.reason}
            )
        elif isinstance(event, PermissionDenied):
            self.denials.append({"tool_use_id": event.tool_use_id, "tool_name": event.name})
        elif isinstance(event, (Notice, ErrorEvent)) and self.format == "text":
            level = getattr(event, "level", "error")
            if level != "info":
                print(
                    f"ccx: {event.text if isinstance(event, Notice) else event.message}",
                    file=sys.stderr,
                )
        if self.format == "stream-json":
            if isinstance(event, (TextDelta, ThinkingDelta)) and not self.include_partial:
                return
            self._line(event.to_json())

    def finish(self, result: dict[str, Any]) -> None:
        if self.format == "text":
            if result["is_error"]:
                print(f"ccx: {escape_text(result['result'])}", file=sys.stderr)
            else:
                self.out.write(escape_text(result["result"]).rstrip("\n") + "\n")
                self.out.flush()
        else:
            self._line(result)

    def _line(self, payload: dict[str, Any]) -> None:
        line = json.dumps(payload, ensure_ascii=False, default=str)
        if not is_encodable(line):  # a path that is not UTF-8 (the cwd's, say) in an event
            line = json.dumps(escape_value(payload), ensure_ascii=False, default=str)
        self.out.write(line + "\n")
        self.out.flush()


async def run_headless(options: RunOptions, prompt: str, output: HeadlessOutput) -> int:
    started = time.perf_counter()
    try:
        runtime = Runtime(options, output.emit)
    except StartupError as exc:
        output.finish(_result(output, "error_during_execution", str(exc), started, None, 0))
        return 1
    except Exception as exc:  # a bug or an unforeseen failure: still one result, exit 1
        log.exception("ccx could not start")
        text = _unexpected(exc)
        output.finish(_result(output, "error_during_execution", text, started, None, 0))
        return 1
    task = asyncio.ensure_future(_run(runtime, prompt))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    subtype, text, code = "success", "", 0
    try:
        text, failed = await task
        if failed:
            subtype, code = "error_during_execution", 1
    except asyncio.CancelledError:
        subtype, text, code = "error_interrupted", "Interrupted by the user", EXIT_INTERRUPTED
    except MaxTurnsReached as exc:
        subtype, text, code = "error_max_turns", str(exc), 1
    except TranscriptWriteError as exc:
        subtype, text, code = "error_during_execution", exc.message, 1
    except ApiError as exc:
        output.emit(ErrorEvent(exc.message, kind=exc.error_type or "api_error", recoverable=False))
        subtype, text, code = "error_during_execution", exc.message, 1
    except Exception as exc:  # a bug must still end in a result, not a bare traceback
        log.exception("the headless run failed")
        subtype, text, code = "error_during_execution", _unexpected(exc), 1
        output.emit(ErrorEvent(text, kind="internal_error", recoverable=False))
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await _close(runtime)
    if runtime.session.first_write_error is not None and code == 0:
        # A write failed where no turn was running to stop (the last records, say).
        text = transcript_failure_text(runtime.session, turn_stopped=False)
        subtype, code = "error_during_execution", 1
    output.finish(_result(output, subtype, text, started, runtime, runtime.agent.turns_total))
    return code


def _unexpected(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


async def _close(runtime: Runtime) -> None:
    try:
        await runtime.aclose()
    except Exception:  # the result matters more than a clean close
        log.exception("closing the runtime failed")


async def _run(runtime: Runtime, prompt: str) -> tuple[str, bool]:
    """A slash command, or a turn of the agent; returns the result text and whether it failed."""
    await runtime.start()
    if commands.parse(prompt) is not None:
        result = await commands.run_command(runtime, prompt)
        return result.text, result.is_error
    outcome = await runtime.agent.submit(prompt)
    return outcome.result, False


def _result(
    output: HeadlessOutput,
    subtype: str,
    text: str,
    started: float,
    runtime: Runtime | None,
    turns: int,
) -> dict[str, Any]:
    costs = runtime.agent.costs if runtime else None
    return {
        "type": "result",
        "subtype": subtype,
        "is_error": subtype != "success",
        "result": text,
        "session_id": output.session_id,
        "model": output.model,
        "num_turns": turns,
        "duration_ms": round((time.perf_counter() - started) * 1000),
        "duration_api_ms": round(costs.api_seconds * 1000) if costs else 0,
        "usage": dict(costs.totals) if costs else {},
        "total_cost_usd": round(costs.total_cost_usd, 6) if costs else 0.0,
        "compactions": output.compactions,
        "context_events": output.context_events,
        "permission_denials": output.denials,
    }
