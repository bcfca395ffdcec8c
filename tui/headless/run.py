"""`ccx -p`: run one prompt without a UI and print text, one JSON result, or a JSON event stream.

stream-json is Claude Code's schema (``tui.headless.stream_json.schema``); the
result object is Claude Code's too, with ccx's compaction and context
records beside it under names Claude Code does not use (``compactions``,
``context_events``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
import uuid
from typing import Any, TextIO

from agent.core.events import (
    AssistantMessage,
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    ErrorEvent,
    Event,
    Microcompacted,
    Notice,
    PermissionDenied,
    SessionStarted,
)
from agent.core.gc_pause import start_up_done
from agent.mcp.status import init_entries
from tools.surrogates import escape_text, escape_value, is_encodable
from tui.headless.signals import SignalStop, cancel_on_signals
from tui.headless.stream_json import schema
from tui.session.driver import LineResult, SessionDriver, failure_of
from tui.session.options import RunOptions, StartupError

log = logging.getLogger(__name__)

OUTPUT_FORMATS = ("text", "json", "stream-json")
ENDINGS = {"max_turns": "error_max_turns", "max_budget": "error_max_budget_usd"}  # Claude Code's


class HeadlessOutput:
    """Collects what the result needs from the event stream and prints per the format."""

    def __init__(
        self,
        output_format: str,
        include_partial: bool = False,
        out: TextIO | None = None,
        include_ccx: bool = False,
    ):
        self.format = output_format
        self.include_partial = include_partial
        self.include_ccx = include_ccx  # stream-json: ccx's own system/ccx_* lines
        self.out = out or sys.stdout
        self.session_id = ""
        self.model = ""
        self.compactions: list[dict[str, Any]] = []
        # microcompactions and failed compactions, in order (finished ones are in compactions)
        self.context_events: list[dict[str, Any]] = []
        self.denials: list[dict[str, Any]] = []
        self.started: SessionStarted | None = None
        self.stop_reason: str | None = None
        self.compacting = False  # a compaction started and has neither finished nor failed
        self._inputs: dict[str, dict[str, Any]] = {}  # tool_use_id -> input, for the denials
        self._init_sent = False

    def emit(self, event: Event) -> None:
        if isinstance(event, SessionStarted):
            self.session_id = event.session_id
            self.model = event.model
            self.started = event
        elif isinstance(event, AssistantMessage):
            self.stop_reason = event.stop_reason
            content = event.message["content"]
            for block in [] if isinstance(content, str) else content:
                if block["type"] == "tool_use":
                    self._inputs[block["id"]] = block.get("input", {})
        elif isinstance(event, CompactionStarted):
            self.compacting = True
        elif isinstance(event, CompactionFinished):
            self.compacting = False
            self.compactions.append(event.record.to_json())
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
            self.compacting = False
            self.context_events.append(
                {"type": event.type, "trigger": event.trigger, "reason": event.reason}
            )
        elif isinstance(event, PermissionDenied):
            self.denials.append(
                {
                    "tool_name": event.name,
                    "tool_use_id": event.tool_use_id,
                    "tool_input": self._inputs.get(event.tool_use_id, {}),
                }
            )
        elif isinstance(event, Notice) and self.format == "text" and event.level != "info":
            # An error is said once, by finish(): its ErrorEvent is for the JSON streams.
            print(f"ccx: {event.text}", file=sys.stderr)
        if self.format == "stream-json":
            for line in schema.to_lines(
                event, self.session_id, self.include_partial, self.include_ccx
            ):
                self._line(line)

    def send_init(self, driver: SessionDriver) -> None:
        """stream-json: ``system``/``init``, once, before the session's first turn."""
        if self.format != "stream-json" or self._init_sent:
            return
        self._init_sent = True
        from agent import __version__

        offer = driver.inventory()
        self._line(
            schema.init_message(
                session_id=driver.session_id,
                cwd=str(driver.cwd),
                model=driver.model,
                tools=list(offer.tools),
                permission_mode=driver.mode,
                slash_commands=[*(name for name, _help in driver.commands()), *offer.mcp_prompts],
                skills=list(offer.skills),
                agents=[agent.name for agent in offer.agents],
                version=__version__,
                mcp_servers=init_entries(list(offer.mcp_servers)),
                output_style=offer.output_style,
                plugins=[plugin.entry() for plugin in offer.plugins],
                api_key_source=offer.api_key_source,
            )
        )

    def write(self, payload: dict[str, Any]) -> None:
        """One line of the stream as it is (control responses, echoed prompts)."""
        self._line(payload)

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
    """Run one line (a slash command or a prompt) through the session driver; the exit code."""
    started = time.perf_counter()
    try:
        driver = SessionDriver(options, output.emit)
    except StartupError as exc:
        output.finish(_result(output, "error_during_execution", str(exc), started, None, 0))
        return 1
    except Exception as exc:  # a bug or an unforeseen failure: still one result, exit 1
        log.exception("ccx could not start")
        text = _unexpected(exc)
        output.finish(_result(output, "error_during_execution", text, started, None, 0))
        return 1
    task = asyncio.ensure_future(_run(driver, prompt, output))
    try:
        with cancel_on_signals(task) as stop:
            try:
                subtype, text, code = _ending(output, await task)
            except asyncio.CancelledError:
                subtype, text, code = "error_interrupted", _stopped(stop, output), stop.exit_code
    except Exception as exc:  # start-up failed after the session was built (a hook, say)
        failure = failure_of(exc)
        subtype, text, code = _ending(
            output, LineResult(prompt, None, failure.message, True, failure)
        )
    finally:
        await _close(driver)
    if code == 0 and (unwritten := driver.transcript_failure()) is not None:
        # A write failed where no turn was running to stop (the last records, say).
        subtype, text, code = "error_during_execution", unwritten, 1
    output.finish(_result(output, subtype, text, started, driver, driver.turns))
    return code


def _ending(output: HeadlessOutput, result: LineResult) -> tuple[str, str, int]:
    """The result's subtype, text and exit code; an API or internal failure is an error event too."""
    failure = result.failure
    if failure is not None and failure.kind in ("api", "internal"):
        output.emit(ErrorEvent(failure.message, kind=failure.error_type, recoverable=False))
    if failure is not None and failure.kind in ("max_turns", "max_budget"):
        return ENDINGS[failure.kind], result.text, 1
    if result.is_error:
        return "error_during_execution", result.text, 1
    return "success", result.text, 0


def _stopped(stop: SignalStop, output: HeadlessOutput) -> str:
    if output.compacting:
        return f"{stop.words} during a compaction; the conversation is as it was before it"
    return stop.words


def _unexpected(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


async def _close(driver: SessionDriver) -> None:
    try:
        await driver.aclose()
    except Exception:  # the result matters more than a clean close
        log.exception("closing the session failed")


async def _run(driver: SessionDriver, prompt: str, output: HeadlessOutput) -> LineResult:
    await driver.start()
    start_up_done()  # the collector, paused by the command line (tui.cli.main.run)
    output.send_init(driver)
    result = await driver.run(prompt)
    # Background jobs still running: wait, and tell the model as each ends (its last word wins).
    while not result.is_error and (followed := await driver.follow_jobs()) is not None:
        result = followed
    return result


def _result(
    output: HeadlessOutput,
    subtype: str,
    text: str,
    started: float,
    driver: SessionDriver | None,
    turns: int,
) -> dict[str, Any]:
    costs = driver.costs if driver else None
    structured = _structured_output(driver)
    if subtype == "success" and structured is not None:
        text = json.dumps(structured, ensure_ascii=False)
    elif subtype == "success" and driver is not None and driver.expects_structured_output:
        subtype, text = "error_max_structured_output_retries", "No structured output was given"
    result = {
        "type": "result",
        "subtype": subtype,
        "is_error": subtype != "success",
        "result": text,
        "stop_reason": output.stop_reason,
        "session_id": output.session_id,
        "uuid": str(uuid.uuid4()),
        "model": output.model,
        "num_turns": turns,
        "duration_ms": round((time.perf_counter() - started) * 1000),
        "duration_api_ms": round(costs.api_seconds * 1000) if costs else 0,
        "usage": dict(costs.totals) if costs else {},
        "total_cost_usd": round(costs.total_cost_usd, 6) if costs else 0.0,
        # The totals split by what each call was for: agent, summary, notes.
        "cost_by_purpose": costs.purposes_json() if costs else {},
        "compactions": output.compactions,
        "context_events": output.context_events,
        "permission_denials": output.denials,
    }
    if structured is not None:
        result["structured_output"] = structured
    return result


def _structured_output(driver: SessionDriver | None) -> Any:
    """--json-schema: the turn's StructuredOutput input (taken: the next turn starts empty)."""
    return driver.take_structured_output() if driver is not None else None
