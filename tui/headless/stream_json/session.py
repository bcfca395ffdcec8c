"""`ccx -p --input-format stream-json`: user turns and control requests read from stdin.

One process, one session, as many turns as the client sends: each ``user``
line is queued and run in order, each ends with its own ``result``. Beside
the turns runs Claude Code's control protocol, as the Agent SDK speaks it:
the client's ``control_request`` lines (initialize, interrupt,
set_permission_mode, set_model, mcp_status, mcp_reconnect, mcp_toggle,
get_context_usage, stop_task, rewind_files) are answered with a
``control_response`` at once, even mid-turn. ccx asks the client too: with
``--permission-prompt-tool stdio`` about a tool call (``can_use_tool``; the
answer may rewrite the input, or deny with a message for the model and end
the turn), for every hook the client registered in ``initialize``
(``hook_callback``, at the hook's event, its answer read as a command hook's
JSON), and an SDK MCP server is reached with ``mcp_message`` requests
(``mcp_control``), so input is read from before start-up waits for the
servers. stdin closing ends the input: the queued turns still run, then ccx
exits.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
import time
from typing import Any

from agent.core.gc_pause import start_up_done
from agent.loop.tool_runner import Answer, PermissionRequest, Reply
from tui.headless.run import HeadlessOutput
from tui.headless.run import _ending as turn_ending  # one result shape for -p and streams
from tui.headless.run import _result as result_object
from tui.headless.signals import cancel_on_signals
from tui.headless.stream_json import control, mcp_control, schema
from tui.session.driver import LineResult, SessionDriver, failure_of
from tui.session.options import RunOptions, StartupError

log = logging.getLogger(__name__)


class ClientError(Exception):
    """The client answered a control request with an error, or cannot answer (stdin closed)."""


class StreamSession:
    """The turns and the control protocol of one stream-json session."""

    def __init__(self, output: HeadlessOutput, replay: bool) -> None:
        self.output = output
        self.replay = replay
        self.driver: SessionDriver | None = None
        self.prompts: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue()  # text, uuid
        self.turn: asyncio.Task[LineResult] | None = None
        self.interrupted = False
        self.exit_code = 0
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._requests = 0
        self._closed = False
        self._answering: set[asyncio.Task[None]] = set()

    # -- input lines ----------------------------------------------------------------------

    def handle_line(self, raw: str) -> None:
        """One line of stdin; bad input is reported on stderr and skipped, never fatal."""
        if not raw.strip():
            return
        try:
            message = json.loads(raw)
        except json.JSONDecodeError as exc:
            self._complain(f"stdin line is not JSON ({exc.msg}); skipped")
            return
        if not isinstance(message, dict):
            self._complain("stdin line is not a JSON object; skipped")
            return
        kind = message.get("type")
        if kind == "user":
            self._queue_user(message)
        elif kind == "control_request":
            task = asyncio.ensure_future(self._answer(message))
            self._answering.add(task)  # held until done: the loop keeps only weak references
            task.add_done_callback(self._answering.discard)
        elif kind == "control_response":
            self._resolve(message.get("response") or {})
        elif kind in ("control_cancel_request", "keep_alive", "update_environment_variables"):
            return
        else:
            self._complain(f"unknown stdin message type {kind!r}; skipped")

    def end_of_input(self) -> None:
        """stdin closed: no more turns; a question still waiting for an answer is denied."""
        self._closed = True
        self.prompts.put_nowait(None)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ClientError("stdin closed"))

    def _queue_user(self, message: dict[str, Any]) -> None:
        # One without words is queued too: its turn ends in an error result (the driver sends
        # nothing), in order with the others, and the session goes on.
        text = prompt_text(message.get("message"))
        uuid = message.get("uuid") if isinstance(message.get("uuid"), str) else None
        uuid = uuid or schema.new_uuid()  # the prompt's, in the transcript too (rewind_files)
        if self.replay:
            self.output.write(schema.user_prompt_message(text, self.output.session_id, uuid))
        self.prompts.put_nowait((text, uuid))

    @staticmethod
    def _complain(text: str) -> None:
        print(f"ccx: {text}", file=sys.stderr, flush=True)

    # -- control requests from the client -------------------------------------------------

    async def _answer(self, message: dict[str, Any]) -> None:
        request_id = message.get("request_id", "")
        request = message.get("request") or {}
        try:
            payload = await self._control(request)
            response = {"subtype": "success", "request_id": request_id, "response": payload}
        except Exception as exc:  # an unknown or failing request gets an error answer
            response = {"subtype": "error", "request_id": request_id, "error": str(exc)}
        self.output.write({"type": "control_response", "response": response})

    async def _control(self, request: dict[str, Any]) -> dict[str, Any]:
        subtype = request.get("subtype")
        driver = self.driver
        assert driver is not None  # input is read only once the session is built
        if subtype == "initialize":
            return self._initialize(driver, request)
        if subtype == "interrupt":
            if self.turn is not None and not self.turn.done():
                self.interrupted = True
                self.turn.cancel()
            return {}
        if subtype == "set_permission_mode":
            driver.set_mode(str(request.get("mode")))
            return {}
        if subtype == "set_model":
            driver.set_model(request.get("model") or "default")
            return {}
        if subtype in mcp_control.SUBTYPES:
            return await mcp_control.answer(driver, request)
        if subtype == "get_context_usage":
            return control.context_usage(driver)
        if subtype == "stop_task":  # a background job (Bash or agent) by its id
            task_id = str(request.get("task_id") or "")
            if not await driver.stop_job(task_id):
                raise ValueError(f"no background task {task_id!r}")
            return {}
        if subtype == "rewind_files":
            return control.rewind_files(driver, str(request.get("user_message_id") or ""))
        raise ValueError(f"ccx does not support the control request {subtype!r}")

    def _initialize(self, driver: SessionDriver, request: dict[str, Any]) -> dict[str, Any]:
        """The client's hooks and agents registered; what the session offers."""
        if isinstance(agents := request.get("agents"), dict):
            driver.add_agents(agents)
        if request.get("hooks"):
            for warning in driver.add_hook_callbacks(request["hooks"], self.call_hook):
                self._complain(warning)
        return control.initialize_answer(driver)

    async def call_hook(
        self, callback_id: str, payload: dict[str, Any], tool_use_id: str | None
    ) -> dict[str, Any]:
        """hook_callback: the client runs its hook; its answer (ClientError for an error)."""
        body = {
            "subtype": "hook_callback",
            "callback_id": callback_id,
            "input": payload,
            "tool_use_id": tool_use_id,
        }
        return await self._request(body)  # ClientError: the hook runner reports or blocks

    # -- control requests to the client (permissions) -------------------------------------

    async def ask(self, request: PermissionRequest) -> Answer:
        """can_use_tool: the client decides; no answer (stdin closed) is a denial."""
        if self._closed:
            return "deny"
        body = {
            "subtype": "can_use_tool",
            "tool_name": request.tool_name,
            "input": control.absolute_paths(request.tool_input, self.driver),
            "tool_use_id": request.tool_use_id,
            "permission_suggestions": control.suggestions(request),
            "decision_reason": request.reason,
            "title": request.summary,
        }
        try:
            answer = await self._request(body)
        except ClientError as exc:
            return Reply("deny", message=f"The client could not decide: {exc}")
        reply: Reply = control.reply_of(answer)
        if reply.behavior == "allow" and self.driver is not None:
            control.apply_updates(self.driver, answer.get("updatedPermissions"))
        return reply

    async def _request(self, body: dict[str, Any]) -> dict[str, Any]:
        """One control request to the client; its answer, or ClientError (an error answer,
        stdin closed)."""
        if self._closed:
            raise ClientError("stdin closed")
        self._requests += 1
        request_id = f"ccx_req_{self._requests}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.output.write({"type": "control_request", "request_id": request_id, "request": body})
        try:
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def send_control(self, body: dict[str, Any]) -> dict[str, Any]:
        """A control request to the client (mcp_message, say): its response; an error answer
        or stdin closing gives ``{"message": why}``."""
        try:
            return await self._request(body)
        except ClientError as exc:
            return {"message": str(exc)}

    def _resolve(self, response: dict[str, Any]) -> None:
        future = self._pending.get(response.get("request_id", ""))
        if future is None or future.done():
            return
        if response.get("subtype") == "success":
            future.set_result(response.get("response") or {})
        else:
            future.set_exception(ClientError(str(response.get("error") or "an error answer")))

    # -- the turns ------------------------------------------------------------------------

    async def run_turns(self) -> None:
        driver = self.driver
        assert driver is not None
        while (queued := await self.prompts.get()) is not None:
            self.output.send_init(driver)
            started = time.perf_counter()
            self.interrupted = False
            self.turn = asyncio.ensure_future(driver.run(*queued))
            try:
                subtype, text, code = turn_ending(self.output, await self.turn)
            except asyncio.CancelledError:
                if not self.interrupted:
                    raise
                subtype, text, code = "error_during_execution", "Interrupted by the user", 0
            finally:
                self.turn = None
            self.exit_code = code
            self.output.finish(
                result_object(self.output, subtype, text, started, driver, driver.turns)
            )


def prompt_text(message: Any) -> str:
    """The text of a stream-json user message: a string, or its text blocks joined."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block.get("text", "")
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    return "\n\n".join(part for part in parts if part)


def _read_stdin(loop: asyncio.AbstractEventLoop, session: StreamSession) -> None:
    """In a thread: every stdin line to the loop, then the end of input."""
    stream = sys.stdin.buffer if sys.stdin is not None else None
    try:
        for raw in stream or ():
            loop.call_soon_threadsafe(session.handle_line, raw.decode("utf-8", "replace"))
    except (OSError, ValueError):  # stdin closed under us: the same as its end
        pass
    except RuntimeError:  # the loop has ended (start-up failed): nobody reads on
        return
    try:
        loop.call_soon_threadsafe(session.end_of_input)
    except RuntimeError:  # the loop has ended already
        pass


async def run_stream(
    options: RunOptions, output: HeadlessOutput, *, stdio_permissions: bool, replay: bool
) -> int:
    """Run a stream-json session to the end of stdin; the exit code."""
    session = StreamSession(output, replay)
    started = time.perf_counter()
    ask = session.ask if stdio_permissions else None
    loop = asyncio.get_running_loop()
    try:
        session.driver = SessionDriver(options, output.emit, ask=ask)
        session.driver.connect_sdk_servers(mcp_control.sdk_sender(session.send_control))
        # Input is read from here on: SDK MCP servers connect through control requests.
        threading.Thread(target=_read_stdin, args=(loop, session), daemon=True).start()
        await session.driver.start()
        start_up_done()  # the collector, paused by the command line (tui.cli.main.run)
    except Exception as exc:  # the session cannot start: one result, exit 1
        if not isinstance(exc, StartupError):
            log.exception("ccx could not start")
        text = str(exc) if isinstance(exc, StartupError) else failure_of(exc).message
        output.finish(result_object(output, "error_during_execution", text, started, None, 0))
        if session.driver is not None:
            await session.driver.aclose()
        return 1
    turns = asyncio.ensure_future(session.run_turns())
    try:
        with cancel_on_signals(turns) as stop:
            try:
                await turns
            except asyncio.CancelledError:
                session.exit_code = stop.exit_code
    finally:
        try:
            await session.driver.aclose()
        except Exception:  # the results are out already
            log.exception("closing the session failed")
    return session.exit_code
