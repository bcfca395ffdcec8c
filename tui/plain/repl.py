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
import re
import signal
import sys
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from agent import __version__
from agent.app import commands
from agent.app.options import PERMISSION_MODES, RunOptions, StartupError
from agent.app.runtime import Runtime
from agent.core.events import Event, EventSink
from agent.core.locations import config_dir
from agent.loop.agent import MaxTurnsReached, TranscriptWriteError
from agent.loop.tool_runner import Answer, PermissionRequest
from agent.model.client import ApiError
from compaction.thresholds import ContextState
from tui.plain.input import LineSource, PipedSource, PromptSource, toolbar_fragments
from tui.plain.render import PlainRenderer, meter_text, status_text, tool_label

T = TypeVar("T")
EXIT_WORDS = ("/exit", "/quit")
COMMAND_WORD = re.compile(r"^/[A-Za-z][\w-]*$")
CYCLED_MODES = ("default", "acceptEdits", "plan")
KEYS_HELP = (
    "Enter sends · Esc-Enter or a trailing \\ adds a line · Tab completes /commands · "
    "Shift-Tab cycles the permission mode · Ctrl-C interrupts (on an empty prompt: quits) · "
    "Ctrl-D or /exit quits"
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
        self.banner = banner
        self.observers: list[EventSink] = []
        self.runtime: Runtime | None = None
        self.renderer = PlainRenderer(self.console, str(options.cwd), self.context_state)
        self.source: LineSource = source or PromptSource(
            {**{name: c.help for name, c in commands.COMMANDS.items()}, "exit": "Quit ccx"},
            self.toolbar,
            self.cycle_mode,
            history_path=history_path if history_path is not None else config_dir() / "history",
            pt_input=pt_input,
            pt_output=pt_output,
        )
        self.waiting: str | None = None  # "prompt" or "permission" while reading input
        self.lines_read = 0
        self._task: asyncio.Future[Any] | None = None

    # -- the session ------------------------------------------------------------------------

    async def run(self) -> int:
        if not await self._settle_trust():
            return 0
        try:
            self.runtime = Runtime(
                self.options, self._emit, ask=self._ask, approve_plan=self._approve_plan
            )
        except StartupError as exc:
            self.renderer.line(f"ccx: {exc}", "red")
            return 1
        try:
            try:
                await self._cancellable(self.runtime.start())
            except Interrupted:
                return 0
            except Exception as exc:  # e.g. a SessionStart hook that cannot run
                self.renderer.line(f"ccx: start-up failed: {type(exc).__name__}: {exc}", "red")
                return 1
            self._welcome()
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
            await self.runtime.aclose()
        self._goodbye()
        return 0

    async def handle(self, line: str) -> bool:
        """Run one line (a prompt or a command); False when the session should end."""
        text = line.strip()
        if not text:
            return True
        if text.split()[0].lower() in EXIT_WORDS:
            return False
        is_command = commands.parse(text) is not None or bool(COMMAND_WORD.match(text.split()[0]))
        if is_command:
            keep_going = await self._command(text)
        else:
            await self._turn(line)
            keep_going = True
        if not self.source.interactive:
            self.renderer.line(f"── {self.status()}", "dim")
        return keep_going

    async def _turn(self, prompt: str) -> None:
        assert self.runtime is not None
        try:
            await self._cancellable(self.runtime.agent.submit(prompt))
        except Interrupted:
            self.renderer.line("Interrupted. The conversation is intact; type to go on.", "yellow")
        except MaxTurnsReached as exc:
            self.renderer.line(str(exc), "yellow")
        except ApiError as exc:
            self.renderer.line(f"Error: {exc.message}", "red")
            self.renderer.line("The conversation is intact; try again or /compact.", "dim")
        except TranscriptWriteError as exc:
            self.renderer.line(exc.message, "red")
        except Exception as exc:  # the session must survive a bug in one turn
            self.renderer.line(f"Unexpected error: {type(exc).__name__}: {exc}", "red")

    async def _command(self, text: str) -> bool:
        assert self.runtime is not None
        name = text.split()[0].lower()
        try:
            outcome = await self._cancellable(commands.run_command(self.runtime, text))
        except Interrupted:
            if name == "/compact":
                self.renderer.compaction_cancelled()
            else:
                self.renderer.line("Cancelled.", "yellow")
            return True
        except Exception as exc:  # a failing command must not end the session
            self.renderer.line(f"{name} failed: {type(exc).__name__}: {exc}", "red")
            return True
        if name == "/help":
            self.renderer.line(outcome.text)
            self.renderer.line("/exit  Quit ccx (also Ctrl-D)")
            self.renderer.line(KEYS_HELP, "dim")
            return True
        if "compaction" not in outcome.data:  # the renderer already showed the Compacted line
            self.renderer.line(outcome.text, "red" if outcome.is_error else None)
        return not outcome.exit

    # -- interrupts -------------------------------------------------------------------------

    async def _cancellable(self, work: Awaitable[T]) -> T:
        """Run ``work`` as a task Ctrl-C can cancel; raises Interrupted when it was."""
        task = asyncio.ensure_future(work)
        self._task = task
        try:
            with self._sigint_interrupts():
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
        """Ask whether to trust the project before its settings apply; False: the user quit."""
        from agent.permissions import trust
        from agent.permissions.settings import project_root

        project = project_root(self.options.cwd)
        question = trust.trust_question(project)
        if question is None:
            self.options.project_trusted = True
            return True
        self.options.project_trusted = False
        if not self.source.interactive:
            self.renderer.line(
                f"ccx: {project} is not trusted, so its hooks, env and allow rules are not used; "
                "run ccx there in a terminal once to trust it",
                "yellow",
            )
            return True
        self.renderer.markup(f"[bold yellow]? Do you trust the files in {escape(str(project))}?[/]")
        self.renderer.line("  Trusting it lets its settings take effect, which can run commands:")
        for item in question.items:
            self.renderer.line(f"  • {item}", "dim")
        self.renderer.line(
            "  y = yes, trust this folder · n = continue without its settings · Ctrl-C = exit",
            "dim",
        )
        self.waiting = "permission"
        try:
            reply = await self.source.read_permission()
        except (EOFError, KeyboardInterrupt):
            reply = "interrupt"
        finally:
            self.waiting = None
        if reply == "interrupt":
            return False
        if reply in ("allow", "always"):
            self.options.project_trusted = True
            try:
                trust.trust(project)
            except OSError as exc:
                self.renderer.line(f"  could not remember it: {exc}", "red")
            self.renderer.line("  → trusted", "green")
        else:
            self.renderer.line("  → continuing without the project's settings", "red")
        return True

    async def _ask(self, request: PermissionRequest) -> Answer:
        self.renderer.quiet_running(request.tool_use_id)
        self.renderer.end_stream()
        label = tool_label(request.tool_name, request.tool_input, str(self.options.cwd))
        rule = str(request.suggestion)
        self.renderer.markup(f"[bold yellow]? Allow {request.tool_name}[/] {escape(label)}")
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

    async def _answer(self) -> Answer:
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
        if self.runtime is None:
            return
        modes = list(CYCLED_MODES)
        if self.options.permission_mode == "bypassPermissions":
            modes.append("bypassPermissions")
        current = self.runtime.gate.mode
        following = modes[(modes.index(current) + 1) % len(modes)] if current in modes else modes[0]
        if following in PERMISSION_MODES:
            self.runtime.set_permission_mode(following)

    # -- the meter ----------------------------------------------------------------------------

    def context_state(self) -> ContextState | None:
        if self.runtime is None:
            return None
        try:
            return self.runtime.context.state(self.runtime.agent)
        except Exception:  # the meter must never take the prompt down
            return None

    def meter_text(self) -> str:
        state = self.context_state()
        return meter_text(state.to_json()) if state is not None else ""

    def status(self) -> str:
        if self.runtime is None:
            return ""
        state = self.context_state()
        return status_text(
            self.runtime.agent.model, self.runtime.gate.mode, state.to_json() if state else None
        )

    def toolbar(self) -> Any:
        if self.runtime is None:
            return ""
        state = self.context_state()
        level = state.level if state is not None else "ok"
        return toolbar_fragments(
            self.runtime.agent.model,
            self.runtime.gate.mode,
            meter_text(state.to_json()) if state is not None else None,
            level,
            self.renderer.warning(),
        )

    # -- words ------------------------------------------------------------------------------

    def _emit(self, event: Event) -> None:
        self.renderer.handle(event)
        for observer in self.observers:
            observer(event)

    def _welcome(self) -> None:
        assert self.runtime is not None
        if self.banner:
            self.renderer.line(self.banner, "bold cyan")
        self.renderer.markup(
            f"[bold]ccx {__version__}[/] · {escape(self.runtime.agent.model)} · "
            f"{escape(str(self.runtime.cwd))}"
        )
        if self.runtime.resumed:
            count = len(self.runtime.agent.messages)
            self.renderer.line(f"Resumed session {self.runtime.session.id} ({count} messages).")
        if self.source.interactive:
            self.renderer.line("/help lists the commands. " + KEYS_HELP, "dim")

    def _goodbye(self) -> None:
        if self.runtime is None or not self.runtime.agent.messages:
            return
        session = self.runtime.session.id
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
