"""The full-screen ccx app, ``CcxApp`` (``tui.fullscreen.run`` runs it as a program).

Nothing heavy is imported here: the first paint (transcript, prompt, footer)
happens before the agent thread starts, and that thread builds the Runtime
and warms the API client while the user starts typing.
"""

from __future__ import annotations

import gc
import time

IMPORT_STARTED = time.time()
_gc_enabled = gc.isenabled()
gc.disable()  # Textual's import makes ~100K objects that all survive: collecting them is waste
try:
    import asyncio
    import json
    import os
    import sys
    from dataclasses import dataclass, replace
    from pathlib import Path
    from typing import TYPE_CHECKING, Any

    from textual import events
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.screen import ModalScreen

    from agent.core import code_bundle, dataclass_code
    from agent.core.gc_pause import start_up_done
    from tui.commands.slash import BLANK_PROMPT, EXIT_NAMES, command_name, is_blank
    from tui.fullscreen.agent_messages import (
        AgentEvent,
        ArgumentsParsed,
        BackgroundJobEnded,
        ConversationRewound,
        HistoryLoaded,
        JobFinished,
        PermissionAsked,
        PlanApprovalAsked,
        RuntimeFailed,
        RuntimeReady,
        StatusChanged,
        StatusCommandText,
        TrustAsked,
    )
    from tui.fullscreen.bridge import AgentBridge
    from tui.fullscreen.event_view import EventView
    from tui.fullscreen.rewind_flow import RewindFlow
    from tui.fullscreen.screens.asking import show_permission, show_plan, show_trust
    from tui.fullscreen.widgets.footer import StatusFooter
    from tui.fullscreen.widgets.prompt_box import PromptBox, PromptInput
    from tui.fullscreen.widgets.status_line import StatusLine
    from tui.fullscreen.widgets.task_panel import TaskPanel
    from tui.fullscreen.widgets.transcript import Transcript, UserPrompt
    from tui.fullscreen.widgets.warning_bar import WarningBar
    from tui.fullscreen.widgets.welcome import Welcome
finally:
    if _gc_enabled:
        gc.enable()

if TYPE_CHECKING:
    from textual.driver import Driver
    from textual.widget import Widget

    from tui.fullscreen.history import Entry
    from tui.project_index import ProjectIndex
    from tui.session.options import RunOptions
    from tui.session.views import StatusSnapshot

HISTORY_PASTE_CHARS = 10_000  # a longer prompt goes to the history file with its pastes folded
QUIT_PRESS_S = 1.5  # ctrl+c twice within this on an empty prompt quits, as in Claude Code
TYPING_PAUSE_S = 0.15  # keys closer together than this are "still typing"
FIRST_PAINT_ENV = "CCX_FIRST_PAINT_FILE"


@dataclass
class Job:
    kind: str
    text: str
    widget: UserPrompt | None
    id: int | None = None
    shown: str | None = None  # as the prompt showed it (long pastes folded), when it differs


class CcxApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "ccx"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("escape", "interrupt", "Interrupt", show=False),
        Binding("shift+tab", "cycle_mode", "Cycle permission mode", show=False, priority=True),
        Binding("ctrl+c", "interrupt_or_clear", "Interrupt", show=False, priority=True),
        Binding("pageup", "scroll_transcript('page_up')", "Scroll up", show=False, priority=True),
        Binding(
            "pagedown", "scroll_transcript('page_down')", "Scroll down", show=False, priority=True
        ),
        Binding("ctrl+home", "scroll_transcript('home')", "Top", show=False, priority=True),
        Binding("ctrl+end", "scroll_transcript('end')", "Bottom", show=False, priority=True),
        Binding("ctrl+o", "toggle_block", "Expand / collapse", show=False, priority=True),
    ]

    def __init__(
        self,
        options: RunOptions | None,
        prompt: str | None = None,
        gc_paused: bool = False,
        argv: list[str] | None = None,
    ) -> None:
        """Either ``options`` (parsed already) or ``argv``, parsed on the agent thread after the
        first paint; ``handed_back`` then holds arguments another front end must run."""
        super().__init__()
        self.gc_paused = gc_paused
        self.options = replace(options, headless=False) if options is not None else None
        self.initial_prompt = prompt
        self.argv = argv  # unparsed: the fast path paints first
        self.bridge = AgentBridge(self.options, self.post_message, freeze_gc=gc_paused, argv=argv)
        self.handed_back: Any = None
        self.argument_error: tuple[str, int] | None = None
        self.session_id: str | None = None
        self.running: Job | None = None
        self.status: StatusSnapshot | None = None  # the driver's latest, for /model's picker
        self.queue: list[Job] = []
        self.ready = False
        self.last_ctrl_c = float("-inf")
        self.rewind = RewindFlow(
            self,
            self.bridge,
            cwd=lambda: self.options.cwd if self.options is not None else None,
            status=lambda: self.query_one(StatusLine),
            prompt=lambda: self.query_one(PromptInput),
            transcript=lambda: self.query_one(Transcript),
            idle=lambda: self.ready and self.running is None and not self.queue,
            run_command=self._run_command,
        )
        self.first_painted = False
        self.theme_warning = self._apply_theme()
        self.project_history_loaded = False  # the project's past prompts, once, when ready
        self.file_index: ProjectIndex | None = None  # the project's paths, for @ completion

    def _apply_theme(self) -> str | None:
        """The user's ``theme`` setting, before the first paint; a warning if it is unknown."""
        from agent.core.locations import config_dir
        from tui.fullscreen.theme import CODE_THEMES, THEMES, theme_setting
        from tui.fullscreen.widgets.reply import CODE_THEME

        name, warning = theme_setting(config_dir())
        self.theme = THEMES[name]
        CODE_THEME["name"] = CODE_THEMES[self.current_theme.dark]
        return warning

    def get_driver_class(self) -> type[Driver]:
        from tui.fullscreen.terminal_keys import use_key_parser

        use_key_parser()  # shift+enter, alt+enter as a terminal sends them
        return super().get_driver_class()

    def on_load(self) -> None:
        # The session starts now, not after the first paint: its imports take the moments the
        # first frame waits on the terminal and on Textual's threads, and the meter's first
        # figure comes sooner. What it posts waits in the queue until the app is mounted.
        self.bridge.start()

    def compose(self) -> ComposeResult:
        yield Transcript(typing=self._typing, earlier=self.bridge.earlier_history, id="transcript")
        yield StatusLine(id="status-line")
        yield TaskPanel(id="task-panel")
        yield WarningBar(id="warning-bar")
        yield PromptBox(id="prompt")
        yield StatusFooter(id="footer")

    def _typing(self) -> bool:
        return self.query_one(PromptInput).typed_within(TYPING_PAUSE_S)

    def on_mount(self) -> None:
        from tui.fullscreen.first_frame import first_frame_model

        footer = self.query_one(StatusFooter)
        options = self.options
        cwd = options.cwd if options else Path.cwd()
        model, effort = first_frame_model(
            cwd,
            options.model if options else None,
            options.effort if options else None,
            self.argv,
        )
        footer.model = f"{model} · {effort}" if effort else model
        footer.mode = (options and options.permission_mode) or "default"
        transcript = self.query_one(Transcript)
        transcript.cwd = cwd
        banner = options.banner if options else None
        transcript.mount(Welcome(model, transcript.cwd, banner))
        if self.theme_warning:
            transcript.add_line(self.theme_warning, "warning")
        self.view = EventView(
            self.query_one(Transcript),
            self.query_one(StatusLine),
            footer,
            self.query_one(WarningBar),
            self.query_one(TaskPanel),
        )
        self.view.show_cost = options is None or options.show_cost
        self.view.moved = lambda cwd: self.file_index.move(cwd) if self.file_index else None
        self.query_one(PromptInput).focus()
        self.query_one(StatusLine).show("Starting…", hint="")
        self.call_after_refresh(self._first_paint)

    def _first_paint(self) -> None:
        if self.first_painted:
            return
        self.first_painted = True
        if self.gc_paused:
            # Collection resumes once the session thread's imports are done too; what start-up
            # made lives as long as the app, so it is frozen out of later collections.
            start_up_done()
            self.gc_paused = False
        if path := os.environ.get(FIRST_PAINT_ENV):
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(
                    {
                        "time": time.time(),
                        "app_import_started": IMPORT_STARTED,
                        "anthropic": "anthropic" in sys.modules,
                        "dataclass_code": dataclass_code.stats(),
                        "code_bundle": code_bundle.stats(),
                    },
                    handle,
                )
        self.bridge.painted()
        if self.initial_prompt:
            self.send(self.initial_prompt)

    def on_unmount(self) -> None:
        self.bridge.stop()
        if self.file_index is not None:
            self.file_index.stop()

    def _index_files(self) -> None:
        """The project's paths for @ completion (listed on a worker thread at the first @),
        once the folder is known; an @ typed before then is matched now."""
        if self.file_index is not None:
            return
        from tui.project_index import ProjectIndex

        options = self.options
        cwd, watch = (options.cwd, options.watch_files) if options else (Path.cwd(), True)
        box = self.query_one(PromptBox)

        def rebuilt() -> None:  # on the index's thread
            try:
                self.call_from_thread(box.files_changed)
            except RuntimeError:  # the app has stopped
                pass

        self.file_index = box.file_index = ProjectIndex(cwd, watch=watch, on_change=rebuilt)
        box.files_changed()

    # -- input ---------------------------------------------------------------------------

    def on_prompt_box_submitted(self, message: PromptBox.Submitted) -> None:
        if self.options is not None and not is_blank(message.text):
            from tui.prompt_history import add_prompt, history_path

            kept = message.text if len(message.text) <= HISTORY_PASTE_CHARS else message.shown
            add_prompt(history_path(self.options.cwd), kept)
        self.send(message.text, message.shown)

    def on_prompt_box_exit_requested(self, _message: PromptBox.ExitRequested) -> None:
        self.exit(0)

    def send(self, text: str, shown: str | None = None) -> None:
        """A prompt or a slash command: run now, or queue behind the running one. ``shown``
        is what the transcript shows, when not the text (a long paste folded)."""
        if is_blank(text):  # never sent: said in the transcript, the session goes on
            self.query_one(Transcript).add_line(BLANK_PROMPT, "warning")
            return
        name = command_name(text)  # the session driver's rule
        if name in EXIT_NAMES:
            self.exit(0)
            return
        if name == "model" and len(text.split()) == 1 and self.status is not None:
            self.pick_model(self.status)
            return
        if name == "rewind" and len(text.split()) == 1:  # bare: the picker, as Esc Esc opens
            self.rewind.open()
            return
        if name == "login" and len(text.split()) == 1:  # the key is asked for, masked
            from tui.fullscreen.screens.login import log_in

            cwd = self.options.cwd if self.options else Path.cwd()
            log_in(self, cwd, self.query_one(Transcript).add_line)
            return
        if name == "resume":
            self.query_one(Transcript).add_user(text)
            args = " ".join(text.split()[1:])
            self.run_worker(self.resume(args), exclusive=True, group="resume")
            return
        kind = "command" if name else "prompt"
        shown = shown if shown != text else None
        widget = self.query_one(Transcript).add_user(shown or text, queued=self.running is not None)
        self.queue.append(Job(kind, text, widget, shown=shown))
        self.pump()

    def _run_command(self, text: str) -> None:
        """A slash command queued without echoing it (its result line says it all)."""
        self.queue.append(Job("command", text, None))
        self.pump()

    def pump(self) -> None:
        if self.running is not None or not self.queue:
            return
        job = self.running = self.queue.pop(0)
        if job.widget is not None:
            job.widget.sent()
        job.id = self.bridge.submit(job.kind, job.text)
        if self.ready:
            label = f"Running {job.text.split()[0]}…" if job.kind == "command" else "Thinking…"
            self.query_one(StatusLine).show(label)

    def action_interrupt(self) -> None:
        if self.running is None:
            self.rewind.escape()
            return
        self.bridge.interrupt()
        self.query_one(StatusLine).show("Interrupting…", hint="")
        queued, self.queue = self.queue, []
        prompt = self.query_one(PromptInput)
        texts = [job.shown or job.text for job in queued]
        for job in queued:
            if job.widget is not None:
                job.widget.remove()
        if texts and not prompt.text:
            prompt.text = "\n".join(texts)  # queued prompts come back for editing

    async def on_conversation_rewound(self, message: ConversationRewound) -> None:
        if self.live:
            await self.rewind.show(message)

    def on_text_selected(self, _event: events.TextSelected) -> None:
        """A drag that selected text copies it, as selecting does in a terminal."""
        self.copy_selection()

    def copy_selection(self) -> bool:
        """Put the selected text on the clipboard (OSC 52) and say so; False with none."""
        text = self.screen.get_selected_text()
        if not text:
            return False
        from tui.clipboard import copied_words

        self.copy_to_clipboard(text)
        self.query_one(StatusLine).note(copied_words(text, "the selection"), 3.0)
        return True

    def action_interrupt_or_clear(self) -> None:
        if self.copy_selection():  # ctrl+c over a selection copies it, as in a terminal
            self.screen.clear_selection()
            return
        if self.running is not None:
            self.action_interrupt()
            return
        prompt = self.query_one(PromptInput)
        if prompt.text:
            prompt.text = ""
            return
        now = time.monotonic()
        if now - self.last_ctrl_c <= QUIT_PRESS_S:
            self.exit(0)
            return
        self.last_ctrl_c = now
        self.query_one(StatusLine).note("Press ctrl+c again to quit", QUIT_PRESS_S)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The app's priority keys belong to the modal while one is open."""
        if action in ("cycle_mode", "scroll_transcript", "interrupt_or_clear", "toggle_block"):
            return not isinstance(self.screen, ModalScreen)
        return True

    def action_toggle_block(self) -> None:
        """Expand or collapse the focused block, else the latest one with details."""
        from tui.fullscreen.widgets.expandable import Expandable

        block = self.focused if isinstance(self.focused, Expandable) else None
        block = block or self.query_one(Transcript).latest_expandable
        if block is not None and block.is_attached:
            block.action_toggle()
            if block.expanded:  # taller than the view: from its first line, to read it down
                self.call_after_refresh(self._show_expanded, block)

    def _show_expanded(self, block: Widget) -> None:
        view = self.query_one(Transcript).scrollable_content_region.height
        block.scroll_visible(animate=False, top=block.outer_size.height > view)

    def on_key(self, event: events.Key) -> None:
        """Typing goes to the prompt wherever the focus was left (a Tab to a block, a click)."""
        prompt = self.query_one(PromptInput)
        if isinstance(self.screen, ModalScreen) or self.focused is prompt:
            return
        from tui.fullscreen.widgets.expandable import Expandable

        if event.key == "space" and isinstance(self.focused, Expandable):
            return  # space toggles the block Tab reached
        if event.is_printable and event.character:
            event.stop()
            event.prevent_default()
            prompt.focus()
            prompt.insert(event.character)

    def action_scroll_transcript(self, where: str) -> None:
        transcript = self.query_one(Transcript)
        {
            "page_up": transcript.scroll_page_up,
            "page_down": transcript.scroll_page_down,
            "home": transcript.scroll_home,
            "end": transcript.scroll_end,
        }[where](animate=False)

    def action_cycle_mode(self) -> None:
        footer = self.query_one(StatusFooter)
        footer.mode = self.bridge.cycle_mode(footer.mode)

    async def resume(self, session_id: str) -> None:
        if self.running is not None:
            self.query_one(Transcript).add_line(
                "Finish or interrupt (esc) the current turn before resuming another session.",
                "warning",
            )
            return
        if self.options is None:
            self.query_one(Transcript).add_line(
                "The session is still starting; try again.", "warning"
            )
            return
        if not session_id:
            from agent.sessions.session import list_sessions
            from tui.fullscreen.screens.resume import ResumeScreen

            sessions = await asyncio.to_thread(list_sessions, self.options.cwd)
            if any(isinstance(screen, ResumeScreen) for screen in self.screen_stack):
                return  # one picker at a time
            # A callback, not push_screen_wait: the picker must not hang on a worker that a
            # later /resume (an exclusive group) could cancel while the screen stays up.
            self.push_screen(ResumeScreen(sessions, self.session_id), self._resume_chosen)
            self.screen.refresh(layout=True)
            return
        await self.query_one(Transcript).clear_all()
        self.view.show_state(None)
        self.ready = False
        self.query_one(StatusLine).show(f"Resuming {session_id}…", hint="")
        self.options = replace(self.options, resume=session_id, continue_session=False)
        self.bridge.restart(self.options)

    def resume_hint(self) -> str | None:
        """The line to print once the terminal is back: how to pick this session up again."""
        saved = self.bridge.saved_session  # None when nothing was said: nothing to resume
        if self.options is None or not self.options.resume_hint or saved is None:
            return None
        return f"Resume with: ccx -r {saved}"

    def pick_model(self, status: StatusSnapshot) -> None:
        """Bare /model: the picker; the choice runs as ``/model NAME EFFORT``."""
        from tui.fullscreen.screens.model_picker import ModelPicker

        if any(isinstance(screen, ModelPicker) for screen in self.screen_stack):
            return

        def chosen(choice: tuple[str, str | None] | None) -> None:
            if choice is not None:
                name, effort = choice
                self.send(f"/model {name} {effort}" if effort else f"/model {name}")

        self.push_screen(ModelPicker(status.model, status.effort), chosen)

    def _resume_chosen(self, chosen: str | None) -> None:
        if chosen:
            self.run_worker(self.resume(chosen), exclusive=True, group="resume")

    # -- from the agent thread -------------------------------------------------------------
    # Messages still queued while the app shuts down find no widgets: they are dropped.

    @property
    def live(self) -> bool:
        return self.is_running and bool(self.screen_stack)

    async def on_agent_event(self, message: AgentEvent) -> None:
        if not self.live:
            return
        try:
            await self.view.show(message.event)
        except Exception as error:  # a rendering bug must not take the session down
            self.log.error(f"showing {message.event!r} failed: {error!r}")
            self.query_one(Transcript).add_line(f"(could not show an event: {error})", "error")

    def on_arguments_parsed(self, message: ArgumentsParsed) -> None:
        if message.error is not None or message.exit_code:
            self.argument_error = (message.error or "", message.exit_code)
            self.exit(message.exit_code)
            return
        parsed = message.parsed
        if parsed.print_mode or parsed.plain:
            self.handed_back = parsed
            self.exit(0)
            return
        self.options = self.bridge.options
        if self.options is not None:
            self.query_one(Transcript).cwd = self.options.cwd
        if parsed.prompt:
            self.send(parsed.prompt)

    async def on_history_loaded(self, message: HistoryLoaded) -> None:
        if not self.live:
            return
        await self._show_history(message.history)
        self.call_after_refresh(self.bridge.shown)

    async def _show_history(self, history: list[Entry]) -> None:
        await self.query_one(Transcript).load_history(history)
        self.query_one(PromptBox).seed_history([e.text for e in history if e.kind == "user"])

    async def on_runtime_ready(self, message: RuntimeReady) -> None:
        if not self.live:
            return
        ready = message.ready
        self.ready = True
        self.session_id = ready.session_id
        self.on_status_changed(StatusChanged(ready.status))
        box = self.query_one(PromptBox)
        box.set_commands(ready.commands)
        self.call_after_refresh(self._index_files)  # after the frame with the meter's figure
        if self.options is not None and not self.project_history_loaded:
            from tui.prompt_history import history_path, load_prompts

            self.project_history_loaded = True
            box.seed_history(load_prompts(history_path(self.options.cwd)))
        transcript = self.query_one(Transcript)
        if ready.fallback_reason:
            if ready.history_shown_early:  # drawn, but that session could not be continued
                await transcript.clear_all()
            transcript.add_line(f"{ready.fallback_reason}; started a new session instead.", "error")
        if ready.history:
            await self._show_history(ready.history)
        if ready.resumed:
            transcript.add_line(f"Resumed session {ready.session_id}.", "notice")
        self.call_after_refresh(self.bridge.shown)
        status = self.query_one(StatusLine)
        if self.running is not None:
            status.show("Thinking…" if self.running.kind == "prompt" else "Working…")
        else:
            status.clear()

    def on_runtime_failed(self, message: RuntimeFailed) -> None:
        if not self.live:
            return
        self.ready = True
        self.query_one(StatusLine).clear()
        self.query_one(Transcript).add_line(
            f"ccx could not start the session: {message.error}", "error"
        )
        self._index_files()  # @ completion works without a session

    def on_status_command_text(self, message: StatusCommandText) -> None:
        self.query_one(StatusFooter).status_text = message.text

    def on_status_changed(self, message: StatusChanged) -> None:
        if not self.live:
            return
        status, footer = message.status, self.query_one(StatusFooter)
        self.status = status
        footer.model, footer.mode = status.model_label, status.mode
        if self.options is None or self.options.show_cost:
            footer.cost_usd = status.cost_usd
        for welcome in self.query(Welcome):
            welcome.show_model(status.model)
        self.view.show_state(status.context)

    def on_background_job_ended(self, _message: BackgroundJobEnded) -> None:
        """Idle when a background job ends: a turn tells the model (else the next request will)."""
        if self.ready and self.running is None and not self.queue:
            self.queue.append(Job("jobs", "", None))
            self.pump()

    async def on_job_finished(self, message: JobFinished) -> None:
        job = self.running
        if job is None or job.id != message.job_id or not self.live:
            return
        self.running = None
        self.query_one(StatusLine).clear()
        self.query_one(Transcript).end_text()
        try:
            if message.result is not None and message.result.exit:
                self.exit(0)
                return
            await self.view.show_outcome(message)
        finally:
            self.pump()

    def on_permission_asked(self, message: PermissionAsked) -> None:
        if self.live:
            show_permission(
                self, message.request, message.answer, self.options, self.action_interrupt
            )

    def on_trust_asked(self, message: TrustAsked) -> None:
        if self.live:
            # Asked before the first frame, the question's screen may take (and close with)
            # the after-refresh call that tells the session the app has painted: told now.
            self._first_paint()
            show_trust(self, message.question, message.answer)

    def on_plan_approval_asked(self, message: PlanApprovalAsked) -> None:
        if self.live:
            show_plan(self, message.plan, message.answer)
