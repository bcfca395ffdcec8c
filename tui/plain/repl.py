"""`ccx --plain`: a line-by-line REPL for terminals where the full-screen app does not fit.

The agent runs on the same asyncio loop as prompt_toolkit: a prompt is read
with ``prompt_async``, then the turn (or slash command) runs as a task while
nothing else reads the keyboard, so Ctrl-C arrives as SIGINT and cancels that
task — the loop answers every tool_use it leaves open. Output goes through a
rich Console (``patch_stdout`` keeps it above the prompt); the bottom toolbar
carries the model, the permission mode and the context meter.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
import sys
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from agent import __version__
from agent.core.context_state import ContextState
from agent.core.events import Event, EventSink, WorkingDirectoryChanged
from agent.core.locations import config_dir
from agent.loop.tool_runner import Answer, Choice, PermissionRequest
from tui.call_preview import edit_diff, write_head
from tui.clipboard import copied_words, osc52
from tui.commands.builtin import builtin_commands
from tui.commands.slash import BLANK_PROMPT, command_name, interactive_completions, is_exit
from tui.plain.input import LineSource, PipedSource, PromptSource, toolbar_fragments
from tui.plain.render import PlainRenderer, call_words, meter_text, status_text
from tui.plain.wrap import no_control_echo
from tui.project_index import ProjectIndex
from tui.session.driver import Failure, LineResult, SessionDriver
from tui.session.options import RunOptions, StartupError

if TYPE_CHECKING:
    from tui.session.folder_trust import TrustAnswer, TrustQuestion

T = TypeVar("T")
PREVIEW_LINES = 40  # an Edit's diff lines shown before the question
_DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan"}
KEYS_HELP = (
    "Enter sends · Shift-Enter, Esc-Enter, Ctrl-J or a trailing \\ adds a line · "
    "Ctrl-R searches past prompts · Tab completes /commands · "
    "Shift-Tab cycles the permission mode · Esc twice on an empty prompt rewinds · "
    "Ctrl-C interrupts (on an empty prompt: quits) · Ctrl-D or /exit quits"
)


class Interrupted(Exception):
    """The running turn or command was cancelled with Ctrl-C."""


class PlainRepl:
    """One interactive session in the plain front end."""

    def __init__(
        self,
        options: RunOptions,
        *,
        console: Console | None = None,
        source: LineSource | None = None,
        initial_prompt: str | None = None,
        banner: str | None = None,
        pt_input: Any = None,
        pt_output: Any = None,
        history_path: Path | None = None,
    ) -> None:
        options.headless = False
        self.options = options
        self.console = console or Console(highlight=False)
        self.initial_prompt = initial_prompt
        self.banner = banner or options.banner
        self.observers: list[EventSink] = []
        self.driver: SessionDriver | None = None
        self.renderer = PlainRenderer(self.console, str(options.cwd), self.context_state)
        # Shared with the completer: the session's custom commands join once it is built.
        self.completions = {**dict(builtin_commands()), **interactive_completions()}
        self.files = ProjectIndex(options.cwd, watch=options.watch_files)  # listed at the first @
        self.source: LineSource = source or PromptSource(
            self.completions,
            self.toolbar,
            self.cycle_mode,
            history_path=history_path if history_path is not None else config_dir() / "history",
            pt_input=pt_input,
            pt_output=pt_output,
            files=self.files,
        )
        self.waiting: str | None = None  # "prompt", "permission" or "secret" while reading
        self.lines_read = 0
        self._task: asyncio.Future[Any] | None = None

    # -- the session ------------------------------------------------------------------------

    async def run(self) -> int:
        if not await self._settle_trust():
            return 0
        try:
            self.driver = driver = SessionDriver(
                self.options, self._emit, ask=self._ask, approve_plan=self._approve_plan
            )
        except StartupError as exc:
            self.renderer.line(f"ccx: {exc}", "red")
            return 1
        self.completions.update(driver.commands())
        try:
            try:
                await self._cancellable(driver.start())
            except Interrupted:
                return 0
            except Exception as exc:  # e.g. a SessionStart hook that cannot run
                self.renderer.line(f"ccx: start-up failed: {type(exc).__name__}: {exc}", "red")
                return 1
            self._welcome()
            self._refresh_status_line()
            if self.initial_prompt and not await self.handle(self.initial_prompt):
                return 0
            while True:
                self.waiting = "prompt"
                try:
                    line = await self.source.read_prompt()
                except (EOFError, KeyboardInterrupt):
                    break
                finally:
                    self.waiting = None
                self.lines_read += 1
                if not self.source.interactive and line.strip():
                    self.renderer.line(f"> {line}", "bold")
                if not await self.handle(line):
                    break
        finally:
            self.renderer.close()
            self.files.stop()
            await self.driver.aclose("prompt_input_exit")
        self._goodbye()
        return 0

    async def handle(self, line: str) -> bool:
        """Run one line (a prompt or a command); False when the session should end."""
        assert self.driver is not None
        text = line.strip()
        if not text:  # an empty line is passed over; one of whitespace is told it sent nothing
            if line:
                self.renderer.line(BLANK_PROMPT, "yellow")
            return True
        if is_exit(text):
            return False
        name = command_name(text)
        if name == "resume":
            await self._resume(text.split(maxsplit=1)[1] if " " in text else "")
            return True
        if text.lower() == "/login":
            await self._login()
            return True
        if name == "rewind" and text == "/rewind" and self.source.interactive:
            await self._rewind()
            return True
        try:
            result = await self._cancellable(self.driver.run(line if name is None else text))
        except Interrupted:
            self._interrupted(name)
            keep_going = True
        else:
            keep_going = self._show(result)
        self._refresh_status_line()
        if not self.source.interactive:
            self.renderer.line(f"── {self.status()}", "dim")
        return keep_going

    async def _login(self) -> None:
        """/login: the key typed unseen, checked and stored (tui.session.login)."""
        from tui.session.login import LOGIN_PROMPT, login

        self.renderer.line(LOGIN_PROMPT, "dim")
        self.waiting = "secret"
        try:
            key = await self.source.read_secret()
        except (EOFError, KeyboardInterrupt):
            key = ""
        finally:
            self.waiting = None
        if not key.strip():
            self.renderer.line("Login cancelled: nothing stored.", "yellow")
            return
        try:
            self.renderer.line(login(key, self.options.cwd), "green")
        except (ValueError, OSError) as error:
            self.renderer.line(f"Not stored: {error}", "red")

    async def _resume(self, answer: str) -> None:
        """Switch to another session of this folder: named, or chosen from a numbered list."""
        from agent.sessions.session import list_sessions
        from tui.plain.resume import listing, pick

        assert self.driver is not None
        current = self.driver.session_id
        sessions = [s for s in list_sessions(self.options.cwd) if s.id != current]
        if not sessions:
            self.renderer.line("No other sessions in this folder.", "yellow")
            return
        if not answer:
            for line in listing(sessions):
                self.renderer.line(line)
            self.renderer.line("Resume which one? A number or an id; Enter keeps this one.", "dim")
            try:
                answer = await self.source.read_prompt()
            except (EOFError, KeyboardInterrupt):
                answer = ""
        chosen = pick(answer, sessions)
        if chosen is None:
            if answer.strip():
                self.renderer.line(f"No session matches {answer.strip()!r}.", "yellow")
            return
        await self._switch(chosen)

    async def _rewind(self) -> None:
        """Esc Esc or a bare /rewind: the prompts to go back to, numbered; then, when Edit or
        Write changed files since the one chosen, whether they go back too."""
        from tui.plain.rewind import files_words, listing, pick

        assert self.driver is not None
        points = self.driver.rewind_points()
        if not points:
            self.renderer.line("There is no prompt to rewind to in this conversation.", "yellow")
            return
        self.renderer.line("Go back to before which prompt? (it and all after it leave)")
        for line in listing(points):
            self.renderer.line(line)
        self.renderer.line("A number; Enter keeps the conversation as it is.", "dim")
        try:
            answer = await self.source.read_prompt()
        except (EOFError, KeyboardInterrupt):
            answer = ""
        point = pick(answer, points)
        if point is None:
            if answer.strip():
                self.renderer.line(f"No prompt numbered {answer.strip()!r}.", "yellow")
            return
        files = False
        if point.files:
            self.renderer.line(f"  Edit and Write changed {files_words(point)}", "dim")
            self.renderer.line("  y = put the files back too · n = the conversation only", "dim")
            files = await self._answer() in ("allow", "always")
        line = f"/rewind {point.number}{' files' * files}"
        try:
            result = await self._cancellable(self.driver.run(line))
        except Interrupted:
            self._interrupted("rewind")
            return
        self._show(result)
        if "rewound" in result.data:
            self.source.prefill(result.data["rewound"]["text"])

    async def _switch(self, session_id: str) -> None:
        options = dataclasses.replace(self.options, resume=session_id, continue_session=False)
        try:
            driver = SessionDriver(
                options, self._emit, ask=self._ask, approve_plan=self._approve_plan
            )
            await driver.start()
        except (StartupError, Exception) as exc:  # the current session goes on untouched
            self.renderer.line(f"Cannot resume {session_id}: {exc}", "red")
            return
        old, self.driver, self.options = self.driver, driver, options
        if old is not None:
            await old.aclose()
        self.renderer.line(f"Resumed session {session_id} ({len(driver.messages)} messages).")

    def _show(self, result: LineResult) -> bool:
        """What a line ended with (a reply has streamed already); False after /exit."""
        if result.failure is not None:
            self._show_failure(result.failure)
        elif result.command == "help":
            from tui.help_table import help_table

            self.renderer.end_stream()
            self.console.print(help_table(result.data.get("help", []), KEYS_HELP))
        elif "copy" in result.data and not result.is_error:
            self._copy(result.data["copy"])
        elif result.command is not None and "compaction" not in result.data:
            # (a compaction's line came with its event)
            self.renderer.line(result.text, "red" if result.is_error else None)
        return not result.exit

    def _copy(self, text: str) -> None:
        """/copy: onto the terminal's clipboard (OSC 52); with no terminal, the reply printed."""
        self.renderer.end_stream()
        if not self.console.is_terminal:
            self.console.print(text, markup=False, highlight=False)
            self.renderer.line("(Not a terminal: the reply is printed instead of copied.)", "dim")
            return
        self.console.file.write(osc52(text))
        self.console.file.flush()
        self.renderer.line(copied_words(text), "dim")

    def _show_failure(self, failure: Failure) -> None:
        if failure.kind == "max_turns":
            self.renderer.line(failure.message, "yellow")
        elif failure.kind == "transcript":
            self.renderer.line(failure.message, "red")
        else:
            self.renderer.line(f"Error: {failure.message}", "red")
        if failure.kind == "api":
            self.renderer.line("The conversation is intact; try again or /compact.", "dim")

    def _interrupted(self, command: str | None) -> None:
        if command == "compact" or self.renderer.compacting:  # /compact, or an automatic one
            self.renderer.compaction_cancelled()
        elif command is None:
            self.renderer.line("Interrupted. The conversation is intact; type to go on.", "yellow")
        else:
            self.renderer.line("Cancelled.", "yellow")

    # -- interrupts -------------------------------------------------------------------------

    async def _cancellable(self, work: Awaitable[T]) -> T:
        """Run ``work`` as a task Ctrl-C can cancel; raises Interrupted when it was."""
        task = asyncio.ensure_future(work)
        self._task = task
        try:
            with self._sigint_interrupts(), no_control_echo():
                return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and (current is None or not current.cancelling()):
                raise Interrupted from None
            raise
        finally:
            self._task = None

    def interrupt(self) -> bool:
        """Cancel the running turn or command (what Ctrl-C does); False when idle."""
        task = self._task
        if task is None or task.done():
            return False
        task.cancel()
        return True

    @contextlib.contextmanager
    def _sigint_interrupts(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        previous = signal.getsignal(signal.SIGINT)
        try:
            loop.add_signal_handler(signal.SIGINT, self.interrupt)
        except (RuntimeError, ValueError, NotImplementedError):  # not the main thread
            yield
            return
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            with contextlib.suppress(TypeError, ValueError):
                signal.signal(signal.SIGINT, previous)

    # -- permissions ------------------------------------------------------------------------

    async def _settle_trust(self) -> bool:
        """Ask whether to trust the project before its settings apply; False: the user quit.
        Piped input cannot answer: a folder not trusted before stays untrusted, and says so."""
        from tui.session.folder_trust import settle_session_trust

        ask = self._ask_trust if self.source.interactive else None
        options = await settle_session_trust(self.options, ask, self._emit)
        if options is None:
            return False
        self.options = options
        return True

    async def _ask_trust(self, question: TrustQuestion) -> TrustAnswer:
        self.renderer.markup(f"[bold yellow]? {escape(question.headline)}[/]")
        self.renderer.line(f"  {question.LEAD}")
        for item in question.items:
            self.renderer.line(f"  • {item}", "dim")
        self.renderer.line(
            "  y = yes, trust this folder · n = continue without them · Ctrl-C = exit", "dim"
        )
        self.waiting = "permission"
        try:
            reply = await self.source.read_permission()
        except (EOFError, KeyboardInterrupt):
            reply = "interrupt"
        finally:
            self.waiting = None
        if reply == "interrupt":
            return "exit"
        if reply in ("allow", "always"):
            self.renderer.line("  → trusted", "green")
            return "trust"
        self.renderer.line("  → continuing without them", "red")
        return "untrusted"

    async def _ask(self, request: PermissionRequest) -> Answer:
        self.renderer.quiet_running(request.tool_use_id)
        self.renderer.end_stream()
        label = call_words(request.tool_name, request.summary)
        rule = str(request.suggestion)
        self.renderer.markup(f"[bold yellow]? Allow {request.tool_name}[/] {escape(label)}")
        command = request.tool_input.get("command") if request.tool_name == "Bash" else None
        if isinstance(command, str) and command.strip() != label:
            for line in command.strip().splitlines():  # the whole of what would run
                self.renderer.line(f"  $ {line}")
        self._show_change(request)
        if request.reason:
            self.renderer.line(f"  {request.reason}", "dim")
        self.renderer.line(f"  y = yes, once · a = always allow {rule} · n = no (Esc)", "dim")
        reply = await self._answer()
        words = {
            "allow": ("  → allowed once", "green"),
            "always": (
                f"  → always allowed: {rule} (saved in .claude/settings.local.json)",
                "green",
            ),
            "deny": ("  → denied", "red"),
        }
        self.renderer.line(*words[reply])
        return reply

    def _show_change(self, request: PermissionRequest) -> None:
        """An Edit's diff or the head of a Write's content: what the answer is about."""
        if request.tool_name == "Edit":
            diff = edit_diff(request.tool_input, self.options.cwd).splitlines()
            lines = [line for line in diff if not line.startswith(("--- ", "+++ "))]
            for line in lines[:PREVIEW_LINES]:
                self.renderer.line(f"    {line}", _DIFF_STYLES.get(line[:1], "dim"))
            if len(lines) > PREVIEW_LINES:
                self.renderer.line(f"    … {len(lines) - PREVIEW_LINES} more lines", "dim")
        elif request.tool_name == "Write":
            head, more = write_head(request.tool_input)
            for line in head:
                self.renderer.line(f"    {line}", "green")
            if more:
                self.renderer.line(f"    … {more} more lines", "dim")

    async def _approve_plan(self, plan: str) -> bool:
        """ExitPlanMode: show the plan, and leave plan mode only when the user says yes."""
        self.renderer.end_stream()
        self.renderer.markup("[bold yellow]? The plan is ready:[/]")
        self.console.print(Markdown(plan))
        self.renderer.line("  y = approve and start · n = keep planning (Esc)", "dim")
        approved = await self._answer() in ("allow", "always")
        self.renderer.line(
            *(("  → approved", "green") if approved else ("  → keep planning", "red"))
        )
        return approved

    async def _answer(self) -> Choice:
        """One y / a / n answer; Ctrl-C answers no and interrupts the turn."""
        self.waiting = "permission"
        try:
            reply = await self.source.read_permission()
        finally:
            self.waiting = None
        if reply == "interrupt":
            self.interrupt()
            return "deny"
        return reply

    def cycle_mode(self) -> None:
        if self.driver is not None:
            self.driver.cycle_mode()

    # -- the meter ----------------------------------------------------------------------------

    def context_state(self) -> ContextState | None:
        return self.driver.status().context if self.driver is not None else None

    def meter_text(self) -> str:
        state = self.context_state()
        return meter_text(state) if state is not None else ""

    def status(self) -> str:
        if self.driver is None:
            return ""
        status = self.driver.status()
        return status_text(status.model_label, status.mode, status.context)

    def toolbar(self) -> Any:
        if self.driver is None:
            return ""
        status = self.driver.status()
        state = status.context
        fragments = toolbar_fragments(
            status.model_label,
            status.mode,
            meter_text(state) if state is not None else None,
            state.level if state is not None else "ok",
            self.renderer.warning(),
        )
        command_text = self.driver.status_line_text
        if not command_text:
            return fragments
        from prompt_toolkit.formatted_text import ANSI, to_formatted_text

        return [*fragments, ("", " · "), *to_formatted_text(ANSI(command_text))]  # meter first

    def _refresh_status_line(self) -> None:
        """The statusLine command, re-run in the background; the toolbar redrawn when it prints."""
        from prompt_toolkit.application import get_app_or_none

        def redraw(_text: str | None) -> None:
            if (app := get_app_or_none()) is not None:
                app.invalidate()

        if self.driver is not None:
            self.driver.refresh_status_line(redraw)

    # -- words ------------------------------------------------------------------------------

    def _emit(self, event: Event) -> None:
        if isinstance(event, WorkingDirectoryChanged):  # @ completion lists the new folder
            self.files.move(Path(event.cwd))
        self.renderer.handle(event)
        for observer in self.observers:
            observer(event)

    def _welcome(self) -> None:
        driver = self.driver
        assert driver is not None
        if self.banner:
            self.renderer.line(self.banner, "bold cyan")
        self.renderer.markup(
            f"[bold]ccx {__version__}[/] · {escape(driver.model)} · {escape(str(driver.cwd))}"
        )
        if driver.resumed:
            count = len(driver.messages)
            self.renderer.line(f"Resumed session {driver.session_id} ({count} messages).")
        if self.source.interactive:
            self.renderer.line("/help lists the commands. " + KEYS_HELP, "dim")

    def _goodbye(self) -> None:
        if self.driver is None or not self.driver.messages or not self.options.resume_hint:
            return
        session = self.driver.session_id
        self.renderer.line(f"Session {session} saved; resume it with: ccx -r {session}", "dim")


def _is_tty(stream: Any) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def choose_source() -> tuple[LineSource | None, Any]:
    """Piped stdin gets the line reader; a terminal gets the prompt, drawn on stderr if
    stdout is piped. Returns (source, prompt_toolkit output); None means the default."""
    if not _is_tty(sys.stdin):
        return PipedSource(), None
    if _is_tty(sys.stdout):
        return None, None
    from prompt_toolkit.output import create_output

    return None, create_output(always_prefer_tty=True)


def run_plain(options: RunOptions, prompt: str | None = None) -> int:
    """The plain REPL as a program: returns the exit code."""
    source, pt_output = choose_source()
    repl = PlainRepl(options, source=source, initial_prompt=prompt, pt_output=pt_output)

    async def main() -> int:
        if source is not None:  # nothing draws a prompt: print straight to stdout
            return await repl.run()
        from prompt_toolkit.patch_stdout import patch_stdout

        with patch_stdout(raw=True):
            return await repl.run()

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 130
