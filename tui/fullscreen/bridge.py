"""The agent side of the TUI: a session driver on its own thread and asyncio loop.

The app never touches the session. It hands the bridge lines (prompts and
slash commands) as jobs; the bridge runs them one at a time through the
``SessionDriver`` on its loop and posts every agent event back as a Textual
message (``post_message`` is thread-safe), with the driver's status snapshot
after each job and each change of mode. Text deltas are batched and flushed at most every
``FLUSH_INTERVAL_S`` so a fast stream never floods the UI. Permission asks
and plan approvals cross over as a ``concurrent.futures.Future`` that the UI
resolves.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import io
import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from textual.message import Message

from agent.core.events import (
    CompactionFinished,
    Event,
    ModeChanged,
    TextDelta,
    ThinkingDelta,
)
from agent.core.gc_pause import collection_paused
from tui.fullscreen.agent_messages import (
    AgentEvent,
    ArgumentsParsed,
    BackgroundJobEnded,
    ConversationRewound,
    HistoryLoaded,
    JobFinished,
    PermissionAsked,
    PlanApprovalAsked,
    Ready,
    RuntimeFailed,
    RuntimeReady,
    StatusChanged,
    StatusCommandText,
    TrustAsked,
)

if TYPE_CHECKING:
    from pathlib import Path

    from agent.loop.tool_runner import PermissionRequest
    from agent.sessions.session import LoadedSession
    from tui.fullscreen.history import EarlierEntries
    from tui.session.driver import SessionDriver
    from tui.session.folder_trust import TrustAnswer, TrustQuestion
    from tui.session.options import RunOptions
    from tui.session.rewind import RewindPoint
    from tui.session.start_up_caches import StartUpCaches
    from tui.session.views import StatusSnapshot

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.04
SHOWN_WAIT_S = 2.0
FRAME_WRITE_S = 0.03  # a refresh is written by Textual's own thread, after call_after_refresh


Post = Callable[[Message], Any]


class AgentBridge:
    """Owns the session driver; every method is safe to call from the UI thread."""

    def __init__(
        self,
        options: RunOptions | None,
        post: Post,
        freeze_gc: bool = False,
        argv: list[str] | None = None,
    ) -> None:
        self.options = options
        self.argv = argv  # parsed on the agent thread when no options are given
        self._post = post
        self._freeze_gc = freeze_gc
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="ccx-agent", daemon=True)
        self._job_ids = itertools.count(1)
        # Touched only on the agent loop from here on.
        self.driver: SessionDriver | None = None
        self.saved_session: str | None = None  # at shutdown: the session, if anything was said
        self.mode_cycle: tuple[str, ...] = ("default", "acceptEdits", "plan")  # until ready
        self._ready = asyncio.Event()
        self._shown = asyncio.Event()
        self._painted = asyncio.Event()  # the app's first frame is drawn
        self._lock = asyncio.Lock()
        self._jobs: dict[int, asyncio.Task[None]] = {}
        self._text: list[tuple[type[TextDelta] | type[ThinkingDelta], str]] = []
        self._flush_handle: asyncio.TimerHandle | None = None
        self._startup_error: str | None = None
        self._boot_task: asyncio.Task[None] | None = None
        self._caches: StartUpCaches | None = None

    # -- called from the UI thread ------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def submit(self, kind: str, text: str) -> int:
        """Queue a line ("prompt" or "command": the app's label); returns its JobFinished id."""
        job_id = next(self._job_ids)
        self.loop.call_soon_threadsafe(self._start_job, job_id, kind, text)
        return job_id

    def interrupt(self) -> None:
        """Cancel every running or waiting job (Esc): the loop answers open tool calls."""
        self.loop.call_soon_threadsafe(self._cancel_jobs)

    def painted(self) -> None:
        """The app has drawn its first frame: the session's own pictures (a resumed
        history, the ready session) may come now, so the first layout is the app's."""
        self.loop.call_soon_threadsafe(self._painted.set)

    def shown(self) -> None:
        """The UI has drawn what RuntimeReady carried (the resumed history)."""
        self.loop.call_soon_threadsafe(self._shown.set)

    def set_mode(self, mode: str) -> None:
        self.loop.call_soon_threadsafe(self._set_mode, mode)

    def cycle_mode(self, shown: str) -> str:
        """Shift-Tab: the mode after ``shown`` (what the footer shows) by the driver's cycle."""
        from tui.session.driver import next_mode

        mode = next_mode(shown, self.mode_cycle)
        self.set_mode(mode)
        return mode

    def rewind_points(self) -> concurrent.futures.Future[list[RewindPoint]]:
        """The prompts the conversation can go back to before, latest first (none yet while
        the session starts)."""

        async def points() -> list[RewindPoint]:
            return self.driver.rewind_points() if self.driver is not None else []

        return asyncio.run_coroutine_threadsafe(points(), self.loop)

    def earlier_history(
        self, before: int | None
    ) -> concurrent.futures.Future[EarlierEntries | None]:
        """The segment of the conversation a compaction summarized before ``before`` (None:
        the one before the live conversation), read from the transcript once the session is
        ready; None when there is none or the transcript cannot be read."""

        async def segment() -> EarlierEntries | None:
            from tui.fullscreen.history import earlier_entries

            await self._ready.wait()
            driver = self.driver
            if driver is None:
                return None
            try:
                found = await asyncio.to_thread(driver.earlier_history, before)
            except OSError:
                log.exception("reading the earlier conversation failed")
                return None
            if found is None:
                return None
            return earlier_entries(found.messages, found.compaction, found.before, driver.cwd)

        return asyncio.run_coroutine_threadsafe(segment(), self.loop)

    def restart(self, options: RunOptions) -> None:
        """Replace the Runtime (``/resume``): the next RuntimeReady carries its history."""
        self.loop.call_soon_threadsafe(lambda: self.loop.create_task(self._restart(options)))

    def stop(self, timeout: float = 3.0) -> None:
        if not self._thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop)
        try:
            future.result(timeout)
        except Exception:  # a hung shutdown must not keep the terminal
            log.exception("agent shutdown failed")
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)

    # -- the agent loop -----------------------------------------------------------------

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self.loop)
        self._boot_task = self.loop.create_task(self._boot(self.options))
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    async def _boot(self, options: RunOptions | None) -> None:
        from agent.core.events import Notice
        from agent.instructions.system_prompt import start_git_info
        from tui.session.options import StartupError

        with collection_paused(freeze=True):  # imports: what they make lives on
            if options is None:
                options = self._parse_argv()
                if options is None:
                    return
            # git runs in its own processes while the session's modules are imported
            start_git_info(str(options.cwd.resolve()))
            import tui.session.folder_trust  # noqa: F401 - imported here, collection paused
        options = await self._settle_trust(options)
        if options is None:
            return
        preloaded = await self._show_history_early(options)
        self._use_saved_tool_schemas()
        fallback = None
        try:
            with collection_paused(freeze=True):  # the session's imports and parts live on
                driver = self._create(options, preloaded)
        except StartupError as error:
            fallback = str(error)
            try:
                driver = self._create(_without_session_choices(options))
            except Exception as second:
                return self._fail(f"{error}; {second}")
        except Exception as error:
            log.exception("runtime start failed")
            return self._fail(f"{type(error).__name__}: {error}")
        self.driver = driver
        driver.on_job_ended(lambda job_id: self._post(BackgroundJobEnded(job_id)))
        self.mode_cycle = driver.mode_cycle
        self._shown.clear()
        await self._painted.wait()
        # Before the figure: an app closed as soon as it shows (a script, a benchmark) keeps
        # them too. Nothing is written, and it costs nothing, when the caches held it all.
        if self._caches is not None:
            self._caches.keep()
        self._post(RuntimeReady(self._ready_info(driver, fallback, preloaded is not None)))
        # Importing the API client takes the GIL for a second: let the UI draw the session first,
        # and Textual's writer thread put that frame on the terminal.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._shown.wait(), SHOWN_WAIT_S)
        await asyncio.sleep(FRAME_WRITE_S)
        try:
            await driver.start()
        except Exception as error:  # limits and hooks are optional; the session still works
            log.exception("runtime.start failed")
            self._post(AgentEvent(Notice(f"A start-up step failed: {error}", "warning")))
        self._ready.set()
        self._warm()

    async def _settle_trust(self, options: RunOptions) -> RunOptions | None:
        """Ask whether to trust the project before any of its own parts apply; None: exit."""
        from tui.session.folder_trust import settle_session_trust

        settled = await settle_session_trust(options, self._ask_trust, self._emit)
        if settled is not None:
            self.options = settled
        return settled

    def _parse_argv(self) -> RunOptions | None:
        """The command line, parsed after the first paint (typer and pydantic take ~250 ms)."""
        from tui.cli.main import CliError, parse_interactive

        try:
            parsed = parse_interactive(self.argv or [])
        except CliError as error:
            self._post(ArgumentsParsed(None, error.message, error.exit_code))
            return None
        options = replace(parsed.options, headless=False)
        self.options = options
        self._post(ArgumentsParsed(parsed, None, 0))
        if parsed.print_mode or parsed.plain:
            return None  # another front end runs it: the app exits and hands the arguments back
        return options

    async def _show_history_early(self, options: RunOptions) -> tuple[Path, LoadedSession] | None:
        """Read the session -c / -r names and let the UI draw its history before the runtime
        is built: importing and building that takes ~0.3 s the user would otherwise wait."""
        from agent.sessions.session import SessionError, load_for_resume, session_path_for
        from tui.fullscreen.history import history_entries

        try:
            path = session_path_for(options.resume, options.continue_session, options.cwd)
            if path is None:
                return None
            loaded = load_for_resume(path)
        except (SessionError, OSError):
            return None  # building the runtime reports it
        self._shown.clear()
        await self._painted.wait()
        self._post(HistoryLoaded(history_entries(loaded.messages, options.cwd)))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._shown.wait(), SHOWN_WAIT_S)
        return path, loaded

    def _use_saved_tool_schemas(self) -> None:
        """The tools' schemas from the last run of this code: the first figure comes sooner
        (the dataclasses' table is installed before the app's imports: tui.fullscreen.run)."""
        from tui.session.start_up_caches import StartUpCaches

        if self._caches is None:
            self._caches = StartUpCaches("app")
        self._caches.use_tool_schemas()

    def _create(
        self, options: RunOptions, preloaded: tuple[Path, LoadedSession] | None = None
    ) -> SessionDriver:
        from tui.session.driver import SessionDriver

        return SessionDriver(
            options,
            self._emit,
            ask=self._ask,
            approve_plan=self._approve_plan,
            preloaded=preloaded,
        )

    def _fail(self, message: str) -> None:
        self._startup_error = message
        self._post(RuntimeFailed(message))
        self._ready.set()

    def _ready_info(self, driver: SessionDriver, fallback: str | None, shown_early: bool) -> Ready:
        from tui.fullscreen.history import history_entries

        history = []
        if driver.resumed and not shown_early:
            history = history_entries(list(driver.messages), driver.cwd)
        return Ready(
            session_id=driver.session_id,
            status=self._status(driver),
            commands=driver.commands(),
            history=history,
            resumed=driver.resumed,
            fallback_reason=fallback,
            history_shown_early=shown_early,
        )

    def _warm(self) -> None:
        """Import what the first request needs, off the UI's critical path."""
        from agent.model.sdk_import import import_sdk

        try:
            with collection_paused():  # hundreds of classes that all live on
                import_sdk()
        except ImportError:
            pass
        from rich.console import Console
        from rich.markdown import Markdown

        # The first code block would otherwise compile Pygments' Python lexer (~0.2 s) on the UI.
        Console(file=io.StringIO(), width=80).print(Markdown("```python\nx = 1\n```"))
        if self._freeze_gc:
            # Everything alive now (modules, the runtime) lives as long as the app; freezing it
            # keeps full collections from walking it, which otherwise stalls the UI for ~0.3 s.
            gc.freeze()

    def _status(self, driver: SessionDriver) -> StatusSnapshot:
        """The snapshot; the statusLine command is asked to refresh (in the background)."""
        driver.refresh_status_line(lambda text: self._post(StatusCommandText(text or "")))
        return driver.status()

    async def _restart(self, options: RunOptions) -> None:
        self._cancel_jobs()
        async with self._lock:
            self._ready.clear()
            old, self.driver = self.driver, None
            if old is not None:
                await self._close(old)
            self.options = options
            self._startup_error = None
            await self._boot(options)

    async def _shutdown(self) -> None:
        boot = self._boot_task
        if boot is not None and not boot.done():  # e.g. a SessionStart hook still running
            boot.cancel()
            with contextlib.suppress(BaseException):
                await boot
        self._cancel_jobs()
        for task in list(self._jobs.values()):
            try:
                await task
            except BaseException:
                pass
        if self.driver is not None:
            driver, self.driver = self.driver, None
            if driver.messages:
                self.saved_session = driver.session_id
            await self._close(driver)

    async def _close(self, driver: SessionDriver) -> None:
        try:
            await driver.aclose()  # the HTTP client too: one per /resume would otherwise leak
        except Exception:
            log.exception("closing the session failed")

    def _start_job(self, job_id: int, kind: str, text: str) -> None:
        task = self.loop.create_task(self._run_job(job_id, kind, text))
        self._jobs[job_id] = task
        task.add_done_callback(lambda _t: self._jobs.pop(job_id, None))

    def _cancel_jobs(self) -> None:
        for task in self._jobs.values():
            task.cancel()

    async def _run_job(self, job_id: int, kind: str, text: str) -> None:
        outcome, result, error = "done", None, None
        try:
            async with self._lock:
                await self._ready.wait()
                if self.driver is None:
                    error = f"ccx could not start: {self._startup_error or 'unknown error'}"
                else:
                    run = self.driver.tell_ended_jobs() if kind == "jobs" else self.driver.run(text)
                    result = await run
                    error = result.failure.message if result and result.failure else None
        except asyncio.CancelledError:
            outcome = "interrupted"
        if error is not None:
            outcome = "error"
        self._flush()
        if result is not None and "rewound" in result.data and self.driver is not None:
            self._post(self._rewound(self.driver, result.data["rewound"]["text"]))
        self._post(JobFinished(job_id, kind, outcome, result, error))
        if self.driver is not None:
            self._post(StatusChanged(self._status(self.driver)))

    def _rewound(self, driver: SessionDriver, text: str) -> ConversationRewound:
        from tui.fullscreen.history import history_entries

        return ConversationRewound(history_entries(list(driver.messages), driver.cwd), text)

    def _set_mode(self, mode: str) -> None:
        if self.driver is None:
            return
        try:
            self.driver.set_mode(mode)  # a change comes back as a ModeChanged event
        except ValueError as exc:
            self._post(RuntimeFailed(str(exc)))

    # -- events, asks ---------------------------------------------------------------------

    def _emit(self, event: Event) -> None:
        if threading.current_thread() is not self._thread:
            self.loop.call_soon_threadsafe(self._emit, event)
            return
        if isinstance(event, (TextDelta, ThinkingDelta)):
            kind = type(event)
            if self._text and self._text[-1][0] is kind:
                self._text[-1] = (kind, self._text[-1][1] + event.text)
            else:
                self._text.append((kind, event.text))
            if self._flush_handle is None:
                self._flush_handle = self.loop.call_later(FLUSH_INTERVAL_S, self._flush)
            return
        self._flush()
        self._post(AgentEvent(event))
        if self.driver is not None and isinstance(event, (CompactionFinished, ModeChanged)):
            self._post(StatusChanged(self._status(self.driver)))

    def _flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        pending, self._text = self._text, []
        for kind, text in pending:
            self._post(AgentEvent(kind(text)))

    async def _ask(self, request: PermissionRequest) -> Any:
        answer: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._flush()
        self._post(PermissionAsked(request, answer))
        return await asyncio.wrap_future(answer)

    async def _ask_trust(self, question: TrustQuestion) -> TrustAnswer:
        answer: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._post(TrustAsked(question, answer))
        return cast("TrustAnswer", await asyncio.wrap_future(answer))  # one of ANSWERS

    async def _approve_plan(self, plan: str) -> bool:
        answer: concurrent.futures.Future[bool] = concurrent.futures.Future()
        self._flush()
        self._post(PlanApprovalAsked(plan, answer))
        return await asyncio.wrap_future(answer)


def _without_session_choices(options: RunOptions) -> RunOptions:
    """The options to fall back to when a resume id or a mode cannot be honoured."""
    return replace(
        options,
        resume=None,
        continue_session=False,
        permission_mode=None,
        allowed_tools=[],
        disallowed_tools=[],
    )
