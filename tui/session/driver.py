"""One session driver for every front end: a line goes in, a result comes out.

The full-screen app (through its bridge), the plain REPL and headless ``-p``
(and stream-json input, next) run a session the same way: build a
``SessionDriver``, ``start()`` it, hand it lines with ``run(line)``, and
render the ``LineResult`` it returns and the events it emits. The driver
decides whether a line is a slash command (``tui.commands.slash``, one rule for
all), runs it, turns a failure into words in one place (``failure_of``),
owns the permission-mode cycle, and answers ``status()`` with an immutable
``StatusSnapshot`` (model, mode, context state, cost) for footers and
toolbars. Front ends only render and collect input; an interrupt is the
caller cancelling ``run``.

The driver is the front ends' one door to the session: what they read comes
as read-only views (``tui.session.views``), what they change goes through a
named method here (the model, a permission rule, a background job, the
client's agents, hooks and MCP channel); none of them holds the ``Runtime``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agent.core.events import EventSink
from agent.core.messages import Message, UserBlock, text_block
from agent.instructions.custom_commands import CustomCommand
from agent.instructions.hooks.runner import HookCallback
from agent.loop.agent import BudgetExceeded, MaxTurnsReached, NothingToSend, reminder_text
from agent.loop.cost import CostTracker
from agent.loop.long_prompt import PromptNotSaved
from agent.loop.tool_runner import AskPermission
from agent.mcp.prompts import McpPromptError, is_prompt_command, prompt_commands
from agent.mcp.prompts import expand as expand_prompt
from agent.mcp.sdk_transport import SdkSend
from agent.mcp.status import status_report
from agent.model.api_key_helper import ApiKeyHelper
from agent.model.client import ApiError
from agent.permissions.rules import Rule
from agent.sessions.earlier import EarlierSegment, earlier_segment
from agent.sessions.session import (
    LoadedSession,
    TranscriptWriteError,
    transcript_failure_text,
)
from compaction.thresholds import ContextState
from tools.skill import SkillTool
from tui.commands.slash import command_name, is_blank
from tui.session.assembly import ApprovePlan, assemble_runtime
from tui.session.credentials import api_key_source
from tui.session.file_mentions import attached_files
from tui.session.options import RunOptions
from tui.session.sdk_setup import CHECKPOINTING_ENV, prompt_uuids

if TYPE_CHECKING:  # the views are imported when first asked for: a -p prompt never is
    from agent.permissions.settings import Settings
    from tools.sandbox import Sandbox
    from tui.session.rewind import RewindPoint
    from tui.session.status_line import StatusLineFacts, StatusLineRunner
    from tui.session.views import ContextUsage, SessionInventory, StatusSnapshot

log = logging.getLogger(__name__)

CYCLED_MODES = ("default", "acceptEdits", "plan")  # Shift-Tab; bypassPermissions only if started so

FailureKind = Literal["api", "max_turns", "max_budget", "transcript", "input", "internal"]
RuleBehavior = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class Failure:
    """Why a line failed: ``kind`` for the front end's styling, ``message`` to show as it is."""

    kind: FailureKind
    message: str
    error_type: str = "api_error"  # the API's error type, or "internal_error"


def failure_of(error: Exception, command: str | None = None) -> Failure:
    """The one mapping from what a line raised to what the user is told."""
    if isinstance(error, MaxTurnsReached):
        return Failure("max_turns", str(error))
    if isinstance(error, BudgetExceeded):
        return Failure("max_budget", str(error))
    if isinstance(error, TranscriptWriteError):
        return Failure("transcript", error.message)
    if isinstance(error, ApiError):
        return Failure("api", error.message, error.error_type or "api_error")
    if isinstance(error, PromptNotSaved):
        return Failure("internal", str(error), "invalid_request_error")
    if isinstance(error, NothingToSend):
        return Failure("input", str(error), "invalid_request_error")
    log.exception("running %s failed", command or "a prompt", exc_info=error)
    text = f"{type(error).__name__}: {error}"
    return Failure("internal", f"{command} failed: {text}" if command else text, "internal_error")


@dataclass(frozen=True)
class LineResult:
    """How one line ended (an interrupt is ``run`` cancelled, not a result)."""

    line: str
    command: str | None  # the slash command's name ("compact"); None for a prompt
    text: str = ""  # the model's final words, the command's output, or the failure's message
    is_error: bool = False
    failure: Failure | None = None
    data: Mapping[str, Any] = field(default_factory=dict)  # a command's details (/context...)
    exit: bool = False  # /exit: the front end should end the session


def _status_line(
    settings: Settings,
    cwd: Path,
    facts: Callable[[], StatusLineFacts],
    notice: Callable[[str], None],
    project_sandbox: Sandbox | None,
) -> StatusLineRunner | None:
    """The ``statusLine`` setting's runner (tui.session.status_line, imported only when the
    setting is there); None without one."""
    if settings.get("statusLine") is None:
        return None
    from tui.session.status_line import build_status_line

    return build_status_line(settings, cwd, facts, notice, project_sandbox=project_sandbox)


def next_mode(current: str, cycle: Sequence[str]) -> str:
    """The mode after ``current`` in ``cycle``; the first one when ``current`` is not in it."""
    if current not in cycle:
        return cycle[0]
    return cycle[(list(cycle).index(current) + 1) % len(cycle)]


class SessionDriver:
    """One session: built from options (StartupError when they cannot be honoured)."""

    def __init__(
        self,
        options: RunOptions,
        emit: EventSink,
        *,
        ask: AskPermission | None = None,
        approve_plan: ApprovePlan | None = None,
        preloaded: tuple[Path, LoadedSession] | None = None,
    ) -> None:
        self.runtime = assemble_runtime(
            options, emit, ask=ask, approve_plan=approve_plan, preloaded=preloaded
        )
        self.interactive = ask is not None  # someone reads and answers: idle notifications
        bypass = ("bypassPermissions",) if self.runtime.gate.mode == "bypassPermissions" else ()
        self.mode_cycle: tuple[str, ...] = (*CYCLED_MODES, *bypass)
        self._status_line: StatusLineRunner | None = _status_line(  # None without one
            self.runtime.settings,
            self.cwd,
            self._status_line_facts,
            self.runtime.emit_notice,
            project_sandbox=self.runtime.hooks.sandbox,
        )

    async def start(self) -> None:
        """Model limits from the Models API, SessionStart hooks."""
        await self.runtime.start()
        if self.interactive:
            self.runtime.session_hooks.waiting_for_input()

    async def run(self, line: str, uuid: str | None = None) -> LineResult:
        """Run a slash command or a prompt (its message's ``uuid`` given) to its end;
        failures come back as results."""
        name = command_name(line)
        self.runtime.session_hooks.cancel_idle()
        try:
            return await self._run(line, name, uuid)
        finally:
            if self.interactive:
                self.runtime.session_hooks.waiting_for_input()

    async def _run(self, line: str, name: str | None, uuid: str | None = None) -> LineResult:
        try:
            if name is not None and is_prompt_command(name):  # an MCP server's prompt
                line, name = await expand_prompt(self.runtime.mcp, line), None
            if name is not None:
                return await self._run_slash(line, name, uuid)
            if is_blank(line):  # refused before any hook sees it: nothing is sent
                raise NothingToSend()
            if (blocked := await self.runtime.submit_hooks(line)) is not None:
                return LineResult(line, None, blocked)
            await self.runtime.mcp.queue_mentions(line, self.runtime.emit_notice)
            outcome = await self.runtime.agent.submit(self._with_files(line), uuid)
            return LineResult(line, None, outcome.result)
        except asyncio.CancelledError:
            raise
        except McpPromptError as error:
            return LineResult(line, name, str(error), True)
        except Exception as error:  # a failing line must not end the session
            failure = failure_of(error, f"/{name}" if name else None)
            return LineResult(line, name, failure.message, True, failure)

    async def _run_slash(self, line: str, name: str, uuid: str | None) -> LineResult:
        """A custom command, a skill or a built-in command (the table is imported with the
        first one: a prompt's way to its first request does without it)."""
        from tui.commands.builtin import find_custom, run_command

        if (custom := find_custom(self.runtime, name)) is not None:
            return await self._run_custom(line, custom)
        if (skill := self._skill_tool(name)) is not None:
            return await self._run_skill(line, name, skill, uuid)
        result = await run_command(self.runtime, line.strip())
        if result.prompt is not None and not result.is_error:
            return await self._run_prompted(line, result.prompt, uuid)
        return LineResult(
            line, name, result.text, result.is_error, data=result.data, exit=result.exit
        )

    def _with_files(self, line: str) -> str | list[UserBlock]:
        """The prompt, and the text of each file its ``@path`` words name."""
        notes: list[str] = []
        files = attached_files(self.runtime, line, label="mentioned in the prompt", notes=notes)
        for note in notes:
            self.runtime.emit_notice(note, "info")
        return [text_block(line), *files] if files else line

    async def follow_jobs(self) -> LineResult | None:
        """After a -p turn: wait while background jobs run; when one ends (or a monitor has
        lines), run a turn that tells the model (as Claude Code does). None once no job runs
        and none is left to tell."""
        jobs = self.runtime.jobs
        while not jobs.has_news():
            if not jobs.running():
                return None
            await jobs.wait_for_change()
        return await self.tell_ended_jobs()

    async def tell_ended_jobs(self) -> LineResult | None:
        """A turn that tells the model which background jobs ended and what monitors saw
        (None: nothing to tell)."""
        if not self.runtime.jobs.has_news():
            return None
        notes = self.runtime.jobs.take_notifications()
        try:
            outcome = await self.runtime.agent.submit(reminder_text(notes), kind="meta")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # reported as the line's failure, like any turn's
            failure = failure_of(error)
            return LineResult("", None, failure.message, True, failure)
        return LineResult("", None, outcome.result)

    def _skill_tool(self, name: str) -> SkillTool | None:
        """The Skill tool when ``name`` is one of its skills and no built-in command."""
        from tui.commands.builtin import builtin_names

        if name in builtin_names():
            return None
        tool = next((t for t in self.runtime.tools if isinstance(t, SkillTool)), None)
        return tool if tool is not None and tool.find(name) is not None else None

    async def _run_skill(
        self, line: str, name: str, tool: SkillTool, uuid: str | None = None
    ) -> LineResult:
        """``/skill args``: the user's line and the skill's instructions, as one turn."""
        if (blocked := await self.runtime.submit_hooks(line)) is not None:
            return LineResult(line, None, blocked)
        words = line.strip().split(maxsplit=1)
        loaded = tool.load(name, words[1] if len(words) > 1 else None)
        if loaded.is_error or not isinstance(loaded.output, str):
            return LineResult(line, name, str(loaded.output), True)
        reminder = f"<system-reminder>\n{loaded.output}\n</system-reminder>"
        content: list[UserBlock] = [text_block(line.strip()), text_block(reminder)]
        outcome = await self.runtime.agent.submit(content, uuid)
        return LineResult(line, None, outcome.result)

    async def _run_prompted(self, line: str, instructions: str, uuid: str | None) -> LineResult:
        """A built-in command the model carries out: the user's line and ccx's instructions
        for it, as one turn (hooks see the line as the user typed it)."""
        if (blocked := await self.runtime.submit_hooks(line)) is not None:
            return LineResult(line, None, blocked)
        reminder = f"<system-reminder>\n{instructions}\n</system-reminder>"
        content: list[UserBlock] = [text_block(line.strip()), text_block(reminder)]
        outcome = await self.runtime.agent.submit(content, uuid)
        return LineResult(line, None, outcome.result)

    async def _run_custom(self, line: str, command: CustomCommand) -> LineResult:
        """A custom command's turn; refused (nothing sent) when a ``!`cmd``` is not allowed."""
        from tui.commands.custom import CommandRefused, run_custom_command

        if (blocked := await self.runtime.submit_hooks(line)) is not None:
            return LineResult(line, None, blocked)
        words = line.strip().split(maxsplit=1)
        try:
            outcome = await run_custom_command(self.runtime, command, words[1] if words[1:] else "")
        except CommandRefused as refused:
            return LineResult(line, command.name, str(refused), True)
        return LineResult(line, None, outcome.result)

    # -- the mode --------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self.runtime.gate.mode

    def set_mode(self, mode: str) -> None:
        """ValueError for a mode that does not exist."""
        self.runtime.set_permission_mode(mode)

    def cycle_mode(self) -> str:
        """Shift-Tab: the next mode of ``mode_cycle``; returns it."""
        mode = next_mode(self.runtime.gate.mode, self.mode_cycle)
        self.set_mode(mode)
        return mode

    # -- what front ends show --------------------------------------------------------------

    def status(self) -> StatusSnapshot:
        from tui.session.views import StatusSnapshot

        runtime = self.runtime
        try:
            context: ContextState | None = runtime.context.state(runtime.agent)
        except Exception:  # a meter must never take the prompt down
            log.exception("counting the context failed")
            context = None
        agent = runtime.agent
        return StatusSnapshot(
            agent.model,
            runtime.gate.mode,
            context,
            agent.costs.total_cost_usd,
            agent.request_settings().effort,
        )

    @property
    def session_id(self) -> str:
        return self.runtime.session.id

    @property
    def resumed(self) -> bool:
        return self.runtime.resumed

    @property
    def cwd(self) -> Path:
        """Where the session works now (a worktree it entered, else where it started)."""
        return self.runtime.directory.current

    @property
    def model(self) -> str:
        return self.runtime.agent.model

    @property
    def messages(self) -> Sequence[Message]:
        """The conversation (read-only), e.g. to draw a resumed one."""
        return self.runtime.agent.messages

    def earlier_history(self, before: int | None = None) -> EarlierSegment | None:
        """The conversation a compaction summarized, read from the transcript: the one before
        the live conversation, or (``before``: a segment's own ``before``) the one before that
        segment; None when there is none. OSError if the transcript cannot be read."""
        return earlier_segment(self.runtime.session.path, before)

    @property
    def costs(self) -> CostTracker:
        return self.runtime.agent.costs

    @property
    def turns(self) -> int:
        """Model calls of the whole session."""
        return self.runtime.agent.turns_total

    def commands(self) -> list[tuple[str, str]]:
        """(name, help) of every slash command, for completion: the built-in ones, the custom
        ones, then the skills (a name a built-in one has is left out: it never runs)."""
        from tui.commands.builtin import builtin_commands, builtin_names, visible_commands

        named = [*builtin_commands(), *((c.name, c.help) for c in visible_commands(self.runtime))]
        taken = {name for name, _help in named} | builtin_names()
        skills = [(s.name, s.description) for s in self.runtime.skills if s.name not in taken]
        return [*named, *skills]

    def argument_hints(self) -> dict[str, str]:
        """name -> argument hint, for the custom commands that have one."""
        from tui.commands.builtin import visible_commands

        return {c.name: c.argument_hint for c in visible_commands(self.runtime) if c.argument_hint}

    def transcript_failure(self) -> str | None:
        """What to say when a transcript write failed during the session; None if none did."""
        session = self.runtime.session
        if session.first_write_error is None:
            return None
        return transcript_failure_text(session, turn_stopped=False)

    def inventory(self) -> SessionInventory:
        """What the session offers now: tools, MCP prompts, skills, agents, output styles,
        MCP servers (stream-json's ``system/init``, the Agent SDK's ``initialize``)."""
        from tui.session.views import AgentSummary, PluginSummary, SessionInventory

        runtime = self.runtime
        subagents = runtime.subagents.definitions.values() if runtime.options.subagents else ()
        return SessionInventory(
            tools=tuple(tool.name for tool in runtime.tools),
            mcp_prompts=tuple(name for name, _help in prompt_commands(runtime.mcp)),
            skills=tuple(skill.name for skill in runtime.skills),
            agents=tuple(AgentSummary(d.name, d.description) for d in subagents),
            given_agents=runtime.subagents.given,
            output_style=runtime.output_style.name,
            output_styles=tuple(runtime.output_styles.names),
            mcp_servers=tuple(runtime.mcp.status()),
            plugins=tuple(
                PluginSummary(p.name, str(p.root), p.source, p.version)
                for p in runtime.plugins.plugins
            ),
            api_key_source=api_key_source(
                isinstance(runtime.agent.client.key_helper, ApiKeyHelper)
            ),
        )

    def context_usage(self) -> ContextUsage:
        """Where the context's tokens go now, and how full it is."""
        from tui.commands.builtin import context_now
        from tui.session.views import ContextUsage, MemoryFileSize

        runtime = self.runtime
        breakdown, state = context_now(runtime, preview=False)
        files = tuple(MemoryFileSize(m.path, m.kind, len(m.content)) for m in runtime.memory_files)
        return ContextUsage(runtime.agent.model, state, breakdown, files)

    def mcp_status(self) -> dict[str, Any]:
        """Every MCP server's state, in the control protocol's ``mcp_status`` shape."""
        return status_report(self.runtime.mcp)

    @property
    def expects_structured_output(self) -> bool:
        """--json-schema: a turn should end with the StructuredOutput tool's call."""
        return self.runtime.structured is not None

    def take_structured_output(self) -> dict[str, Any] | None:
        """The last turn's StructuredOutput input (taken: the next turn starts without)."""
        tool = self.runtime.structured
        return tool.take() if tool is not None else None

    def refresh_status_line(self, on_text: Callable[[str | None], None]) -> None:
        """Re-run the statusLine command in the background (call on the session's loop);
        ``on_text`` gets its text when it changes. Nothing without a statusLine."""
        if self._status_line is not None:
            self._status_line.refresh(on_text)

    @property
    def status_line_text(self) -> str | None:
        """The statusLine command's latest text; None without one, or before it printed."""
        return self._status_line.text if self._status_line is not None else None

    def _status_line_facts(self) -> StatusLineFacts:
        from tui.session.status_line import StatusLineFacts

        runtime = self.runtime
        return StatusLineFacts(
            status=self.status(),
            session_id=runtime.session.id,
            transcript_path=runtime.session.path,
            cwd=runtime.cwd,
            current_dir=runtime.gate.shell_cwd or runtime.cwd,
            output_style=runtime.output_style.name,
            api_seconds=runtime.agent.costs.api_seconds,
        )

    # -- what front ends change --------------------------------------------------------------

    def set_model(self, name: str, effort: str | None = None) -> None:
        """Switch the model ("default" for the session's own), and the effort when given."""
        self.runtime.set_model(name, effort)

    def add_permission_rule(
        self, behavior: RuleBehavior, rule: Rule, *, save: bool = False
    ) -> None:
        """A rule for the rest of the session; ``save``: an allow rule is also written to
        .claude/settings.local.json (ValueError for another behaviour)."""
        gate = self.runtime.gate
        if save and behavior != "allow":
            raise ValueError(f"only allow rules are saved, not {behavior} rules")
        if behavior == "allow":
            gate.allow_always(rule)
        elif behavior == "deny":
            gate.deny.append(rule)
        else:
            gate.ask.append(rule)
        if save:
            self.runtime.remember_rule(rule)

    def rewind_points(self) -> list[RewindPoint]:
        """The prompts the conversation can go back to before, latest first (Esc Esc's list;
        ``/rewind N`` goes back)."""
        from tui.session.rewind import rewind_points

        return rewind_points(self.runtime.agent.messages, self.runtime.checkpoints)

    def rewind_files(self, user_message_id: str) -> list[str]:
        """Restore the files Edit and Write changed since that prompt; the paths restored.
        ValueError when file checkpointing is off or the prompt is not in the conversation."""
        checkpoints = self.runtime.checkpoints
        if checkpoints is None:
            raise ValueError(f"file checkpointing is off: start ccx with {CHECKPOINTING_ENV}=true")
        return checkpoints.rewind(user_message_id, prompt_uuids(self.runtime.agent.messages))

    async def stop_job(self, job_id: str) -> bool:
        """Stop a background job (Bash or agent); False when the session has no such job."""
        jobs = self.runtime.jobs
        if jobs.get(job_id) is None:
            return False
        await jobs.stop(job_id)
        return True

    def on_job_ended(self, listener: Callable[[str], None]) -> None:
        """``listener`` is called with a background job's id as it ends, and a monitor's as
        it has new lines for the model."""
        self.runtime.jobs.end_listeners.append(lambda job: listener(job.id))
        self.runtime.jobs.news_listeners.append(lambda job: listener(job.id))

    async def reconnect_mcp_server(self, name: str) -> None:
        """Connect the MCP server ``name`` again (ValueError says why it cannot)."""
        await self.runtime.mcp.reconnect(name)

    async def toggle_mcp_server(self, name: str, enabled: bool) -> None:
        """Turn the MCP server ``name`` on or off for this session (ValueError: not known)."""
        await self.runtime.mcp.toggle(name, enabled)

    def connect_sdk_servers(self, send: SdkSend) -> None:
        """The channel to the Agent SDK's in-process MCP servers (before ``start()``)."""
        self.runtime.mcp.sdk_send = send

    def add_agents(self, agents: dict[str, Any]) -> None:
        """Subagents given as JSON after start-up (the SDK's ``initialize``); they take
        precedence over the ones found on disk."""
        self.runtime.subagents.add_json(agents)

    def add_hook_callbacks(self, hooks: Any, callback: HookCallback) -> list[str]:
        """The client's hooks (the SDK's ``initialize``), run after the settings' ones;
        ``callback`` runs one. Returns warnings about what was left out."""
        return self.runtime.hooks.add_callbacks(hooks, callback)

    # -- the end ---------------------------------------------------------------------------

    async def aclose(self, reason: str = "other") -> None:
        """SessionEnd hooks (``reason``: clear, logout, prompt_input_exit, other), then release
        the session's parts: shells, the file watcher, the transcript, the client."""
        if self._status_line is not None:
            await self._status_line.aclose()
        try:
            await self.runtime.session_hooks.session_end(reason)
        finally:
            await self.runtime.aclose()
