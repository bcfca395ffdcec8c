"""Slash commands (/compact, /context, /undo-compact, /rewind, /cost, /clear, /copy, /model,
/plan, /mcp, /tasks, /todos, /output-style, /help, /exit), and how a line finds its command;
the commands of tui.commands.inspect and tui.commands.prompted join them.

Shared by every front end through the session driver: each returns a
``CommandResult`` with text for the user, so headless mode can print it and
the TUI can show it. `ccx -c -p "/compact keep the API notes"` goes through
here too. Which lines are commands is ``tui.commands.slash``'s rule.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from agent.core.compaction_record import CompactionRecord
from agent.core.context_state import ContextState
from compaction.breakdown import Breakdown, context_breakdown, render_breakdown
from compaction.full import CompactionError
from compaction.summary import PartialMode, latest_request
from compaction.thresholds import format_tokens
from tui.commands.registry import COMMANDS, Command, CommandResult, command
from tui.commands.slash import EXIT_NAMES, command_name, interactive_completions

if TYPE_CHECKING:
    from agent.instructions.custom_commands import CustomCommand
    from tui.session.runtime import Runtime


def builtin_commands() -> list[tuple[str, str]]:
    """(name, help) of every built-in command."""
    return [(name, command.help) for name, command in COMMANDS.items()]


# -- custom commands (tui.commands.custom runs them): built-in names win ------------


def builtin_names() -> set[str]:
    return {*COMMANDS, *EXIT_NAMES, *interactive_completions()}


def find_custom(runtime: Runtime, name: str) -> CustomCommand | None:
    """The custom command ``/name`` runs; None when there is none or a built-in one wins."""
    if name.lower() in builtin_names():
        return None
    return runtime.custom_commands.get(name)


def visible_commands(runtime: Runtime) -> list[CustomCommand]:
    """The custom commands that can run (a built-in one wins on a name clash)."""
    builtin = builtin_names()
    return [c for c in runtime.custom_commands if c.name.lower() not in builtin]


def shadowed_commands(runtime: Runtime) -> list[CustomCommand]:
    """The custom commands a built-in one hides, for /help to say so."""
    builtin = builtin_names()
    return [c for c in runtime.custom_commands if c.name.lower() in builtin]


def parse(line: str) -> tuple[Command, str] | None:
    """The command and its argument text, or None when the line is not a known command."""
    name = command_name(line)
    if name is None:
        return None
    found = COMMANDS.get(EXIT_NAMES[0] if name in EXIT_NAMES else name)
    rest = line.strip().split(maxsplit=1)[1:]
    return (found, rest[0].strip() if rest else "") if found else None


async def run_command(runtime: Runtime, line: str) -> CommandResult:
    parsed = parse(line)
    if parsed is None:
        known = ", ".join(f"/{name}" for name in COMMANDS)
        word = line.split()[0] if line.split() else line
        return CommandResult(f"Unknown command {word}. Commands: {known}", is_error=True)
    found, args = parsed
    return await found.handler(runtime, args)


def parse_compact_args(args: str) -> tuple[str | None, PartialMode | None, int | None]:
    """`[--keep-last N | --keep-first N] [instructions]` -> (instructions, partial mode, rounds)."""
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    partial: PartialMode | None = None
    rounds: int | None = None
    if len(words) >= 2 and words[0] in ("--keep-last", "--keep-first") and words[1].isdigit():
        partial = "up_to" if words[0] == "--keep-last" else "from"
        rounds = int(words[1])
        args = args.split(words[1], 1)[1]
    instructions = args.strip() or None
    return instructions, partial, rounds


@command(
    "compact",
    "/compact [--keep-last N | --keep-first N] [instructions]",
    "Summarize the conversation to free context",
)
async def _compact(runtime: Runtime, args: str) -> CommandResult:
    instructions, partial, rounds = parse_compact_args(args)
    try:
        record = await runtime.context.compact(
            runtime.agent,
            trigger="manual",
            instructions=instructions,
            partial=partial,
            keep_rounds=rounds,
        )
    except CompactionError as error:
        text = f"Compaction failed: {error}. The conversation is unchanged."
        if runtime.context.state(runtime.agent).level in ("error", "blocking"):
            text += " /clear starts over with an empty context (the transcript stays on disk)."
        return CommandResult(text, is_error=True)
    return CommandResult(compaction_line(record), data={"compaction": record})


def compaction_line(record: CompactionRecord) -> str:
    """`Compacted (manual): 41K → 9K tokens in 3.2s; restored files: ...`"""
    restored = record.restored
    how: str = record.trigger
    if record.method == "session_memory":
        how += f", from the session notes, {record.messages_kept} recent messages kept"
    parts = [
        f"Compacted ({how}): {format_tokens(record.tokens_before)} → "
        f"{format_tokens(record.tokens_after)} tokens in {record.duration_s:.1f}s"
    ]
    if restored.get("files"):
        parts.append("restored files: " + ", ".join(restored["files"]))
    if restored.get("skills"):
        parts.append("skills: " + ", ".join(restored["skills"]))
    if restored.get("plan"):
        parts.append("plan: " + ", ".join(restored["plan"]))
    line = "; ".join(parts)
    if record.tokens_after >= record.tokens_before:
        line += (
            ". The context did not get smaller: what compaction puts back (the summary and "
            "the files it restores) outweighs what it replaced. /undo-compact brings the "
            "conversation back as it was"
        )
    return line


@command("context", "/context", "Show where the context's tokens go")
async def _context(runtime: Runtime, _args: str) -> CommandResult:
    breakdown, state = context_now(runtime)
    return CommandResult(render_breakdown(breakdown), data={"context": breakdown, "state": state})


def context_now(runtime: Runtime, *, preview: bool = True) -> tuple[Breakdown, ContextState]:
    """Where the context's tokens go now, and how full it is: the one place the session's
    parts become a breakdown (/context; the SDK's get_context_usage, without ``preview``)."""
    state = runtime.context.state(runtime.agent)
    breakdown = context_breakdown(
        system_blocks=runtime.system,
        memory_texts=runtime.memory_texts,
        skills_text=runtime.skills_text,
        tools_api=runtime.agent.tools_api,
        messages=list(runtime.agent.messages),
        limits=state.limits,
        used=state.used,
        keep_preview=keep_preview(runtime) if preview else None,
        deferred_tools=runtime.mcp_tools.deferred_count(),
    )
    return breakdown, state


def keep_preview(runtime: Runtime) -> dict[str, str]:
    """What a compaction now would keep, in words."""
    files = runtime.context.services.files_to_restore([])  # a full compaction keeps no messages
    request = latest_request(runtime.agent.messages) or "(none yet)"
    preview = {
        "latest request (verbatim)": request if len(request) <= 120 else request[:117] + "...",
        "files re-read": ", ".join(files) or "none",
        "skills": ", ".join(s.name for s, _ in runtime.invoked_skills.recent()) or "none",
        "plan": str(runtime.plan.path) if runtime.plan.content() else "none",
    }
    return preview


@command(
    "undo-compact", "/undo-compact", "Bring back the conversation from before the last compaction"
)
async def _undo(runtime: Runtime, _args: str) -> CommandResult:
    if not runtime.context.can_undo:
        return CommandResult("There is no compaction to undo in this session.", is_error=True)
    if not runtime.context.undo(runtime.agent):
        return CommandResult(
            "Cannot undo the last compaction: what it put in place is no longer in the "
            "conversation (a prompt-too-long retry dropped it). The transcript keeps everything.",
            is_error=True,
        )
    state = runtime.context.state(runtime.agent)
    return CommandResult(
        f"Restored the conversation from before the last compaction ({format_tokens(state.used)} tokens)."
    )


@command(
    "rewind",
    "/rewind [N] [files]",
    "Take back your Nth latest prompt and all after it (files: undo the edits since, too)",
)
async def _rewind(runtime: Runtime, args: str) -> CommandResult:
    """Bare: the prompts to go back to, numbered (the front ends open a picker instead).
    ``data["rewound"]``: the prompt's text, which the front ends put back in the prompt."""
    from tui.session.rewind import first_line, pick_point, rewind, rewind_points

    points = rewind_points(runtime.agent.messages, runtime.checkpoints)
    if not points:
        return CommandResult("There is no prompt to rewind to in this conversation.", True)
    words = args.split()
    if not words:
        lines = ["Prompts to go back to before (latest first): /rewind N, or /rewind N files"]
        lines += [f"  {p.number}. {first_line(p.text)}" for p in points]
        return CommandResult("\n".join(lines))
    point = pick_point(points, words)
    extra = [w.lower() for w in words[1:]]
    if point is None or extra not in ([], ["files"]):
        return CommandResult(
            f"Usage: /rewind [N] [files], N from 1 (your latest prompt) to {len(points)}", True
        )
    try:
        done = rewind(runtime, point, files=extra == ["files"])
    except (ValueError, OSError) as exc:
        return CommandResult(f"Cannot rewind: {exc}", True)
    state = runtime.context.state(runtime.agent)
    text = (
        f"Rewound to before “{first_line(point.text, 50)}”: {done.removed} messages taken out "
        f"of the conversation ({format_tokens(state.used)} tokens now)."
    )
    if extra:
        put_back = ", ".join(done.restored) if done.restored else "none had changed"
        text += f" Files put back: {put_back}."
    return CommandResult(text, data={"rewound": {"text": point.text, "files": done.restored}})


@command("cost", "/cost", "Show tokens and cost so far")
async def _cost(runtime: Runtime, _args: str) -> CommandResult:
    costs = runtime.agent.costs
    totals = costs.totals
    text = (
        f"Total cost: ${costs.total_cost_usd:.4f} over {costs.requests} requests "
        f"({costs.api_seconds:.1f}s in the API)\n"
        f"Input {totals['input_tokens']:,} · cache read {totals['cache_read_input_tokens']:,} · "
        f"cache write {totals['cache_creation_input_tokens']:,} · output {totals['output_tokens']:,}"
    )
    for purpose, label in PURPOSE_LABELS.items():
        usage = costs.by_purpose.get(purpose)
        if usage is None or (purpose == "agent" and len(costs.by_purpose) == 1):
            continue
        text += (
            f"\n  {label}: ${costs.cost_by_purpose.get(purpose, 0.0):.4f} over "
            f"{usage['requests']} requests · output {usage['output_tokens']:,}"
        )
    data = {
        "usage": dict(totals),
        "total_cost_usd": costs.total_cost_usd,
        "cost_by_purpose": costs.purposes_json(),
    }
    return CommandResult(text, data=data)


# The totals split by what each call was for (agent.loop.cost), in the order /cost shows them.
PURPOSE_LABELS = {
    "agent": "agent turns",
    "summary": "compaction summaries",
    "notes": "session notes (background)",
    "web_fetch": "WebFetch page reading",
    "web_search": "WebSearch",
    "subagent": "subagents",
}


@command("clear", "/clear", "Start a fresh conversation (the old one stays in its transcript)")
async def _clear(runtime: Runtime, _args: str) -> CommandResult:
    await runtime.session_hooks.session_end("clear")
    runtime.clear_conversation()
    await runtime.run_session_start("clear")
    return CommandResult(f"Cleared. New session {runtime.session.id}.")


@command("copy", "/copy", "Copy the last reply to the clipboard")
async def _copy(runtime: Runtime, _args: str) -> CommandResult:
    """The text is the reply itself (headless prints it); the app and the plain REPL put
    ``data["copy"]`` on the clipboard and say so instead of showing it again."""
    for message in reversed(runtime.agent.messages):
        if message.role == "assistant" and message.kind == "response" and message.text().strip():
            reply = message.text().strip()
            return CommandResult(reply, data={"copy": reply})
    return CommandResult("There is no reply to copy yet.", is_error=True)


@command("model", "/model [name] [effort]", "Show or switch the model and its effort level")
async def _model(runtime: Runtime, args: str) -> CommandResult:
    from agent.model.catalog import EFFORTS, ModelName
    from agent.model.thinking import ThinkingError
    from tui.session.session_model import check_model

    words = args.split()
    if not words:
        return CommandResult(f"Model: {runtime.models.describe(runtime.agent)}")
    effort = words.pop() if words[-1].lower() in EFFORTS else None
    if len(words) > 1:
        return CommandResult("Usage: /model [name] [low|medium|high|xhigh|max]", is_error=True)
    typed = words[0] if words else runtime.models.name.typed
    name = ModelName.parse(typed)
    for model in {name.id, name.for_mode(True)}:
        if (problem := await check_model(runtime.agent.client, model)) is not None:
            return CommandResult(problem, is_error=True)
    try:
        runtime.set_model(typed, effort)
    except ThinkingError as exc:
        return CommandResult(str(exc), is_error=True)
    await runtime.refresh_model_limits()
    return CommandResult(f"Model set to {runtime.models.describe(runtime.agent)}.")


@command("plan", "/plan", "Toggle plan mode (read-only research, then a plan to approve)")
async def _plan(runtime: Runtime, _args: str) -> CommandResult:
    entering = runtime.gate.mode != "plan"
    runtime.set_permission_mode("plan" if entering else "default")
    if entering:
        return CommandResult(f"Plan mode on. The plan goes to {runtime.plan.path}.")
    return CommandResult("Plan mode off.")


@command(
    "mcp",
    "/mcp [enable|disable|reconnect NAME]",
    "MCP servers: state, tools, prompts; approve a project's; reconnect one",
)
async def _mcp(runtime: Runtime, args: str) -> CommandResult:
    from agent.mcp.servers import render_status

    words = args.split()
    if not words:
        statuses = runtime.mcp.status()
        data = {"mcp_servers": [vars(s) for s in statuses]}
        return CommandResult(render_status(statuses), data=data)
    names = runtime.mcp.config.servers
    if (
        len(words) != 2
        or words[0] not in ("enable", "disable", "reconnect")
        or words[1] not in names
    ):
        known = ", ".join(names) or "none configured"
        return CommandResult(
            f"Usage: /mcp [enable|disable|reconnect NAME] (servers: {known})", True
        )
    if words[0] == "reconnect":
        try:
            await runtime.mcp.reconnect(words[1])
        except ValueError as exc:
            return CommandResult(f"MCP server {words[1]} did not reconnect: {exc}", True)
        return CommandResult(f"MCP server {words[1]} reconnected")
    return CommandResult(runtime.mcp.answer(words[1], approve=words[0] == "enable"))


@command("tasks", "/tasks [stop ID]", "Background jobs: list them, or stop one")
async def _tasks(runtime: Runtime, args: str) -> CommandResult:
    from tui.session.jobs_setup import job_rows, render_jobs

    words = args.split()
    jobs = runtime.jobs
    if not words:
        return CommandResult(render_jobs(jobs.jobs()), data={"jobs": job_rows(jobs.jobs())})
    job = jobs.get(words[1]) if len(words) == 2 and words[0] == "stop" else None
    if job is None:
        running = ", ".join(j.id for j in jobs.running()) or "none running"
        return CommandResult(f"Usage: /tasks [stop ID] (jobs: {running})", True)
    if not job.running:
        return CommandResult(f"Job {job.id} is not running ({job.status}).", True)
    await jobs.stop(job.id)
    return CommandResult(f"Stopped job {job.id} ({job.description}).")


@command("todos", "/todos", "The model's task list for this session")
async def _todos(runtime: Runtime, _args: str) -> CommandResult:
    tasks = runtime.tasks
    if not tasks.tasks():
        text = "No tasks yet: the model keeps a task list (TaskCreate) for work of several steps."
    else:
        text = tasks.render()
    return CommandResult(text, data={"tasks": tasks.rows()})


@command("output-style", "/output-style [name]", "Show the output styles, or switch to one")
async def _output_style(runtime: Runtime, args: str) -> CommandResult:
    current = runtime.output_style
    data = {"output_style": current.name, "available": runtime.output_styles.names}
    if not args:
        lines = [f"Output style: {current.name}"]
        for style in runtime.output_styles.styles:
            mark = "*" if style is current else " "
            where = "" if style.source == "built-in" else f" ({style.source})"
            lines.append(f" {mark} {style.name}{where}: {style.description or '(no description)'}")
        return CommandResult("\n".join(lines), data=data)
    try:
        text = runtime.switch_output_style(args)
    except ValueError as exc:
        return CommandResult(str(exc), is_error=True, data=data)
    return CommandResult(text, data={**data, "output_style": runtime.output_style.name})


@command("exit", "/exit", "Quit ccx (also /quit)")
async def _exit(_runtime: Runtime, _args: str) -> CommandResult:
    return CommandResult("", exit=True)


@command("help", "/help", "List the commands")
async def _help(runtime: Runtime, _args: str) -> CommandResult:
    rows = [(c.usage, c.help) for c in COMMANDS.values()]
    rows += [(c.usage, c.help) for c in visible_commands(runtime)]
    for hidden in shadowed_commands(runtime):
        rows.append((f"({hidden.usage})", f"{hidden.path}: a built-in command of that name wins"))
    width = max(len(usage) for usage, _ in rows)
    lines = [f"{usage.ljust(width)}  {words}" for usage, words in rows]
    return CommandResult("\n".join(lines), data={"help": rows})


# The other commands register after these, so /help lists the core ones first.
from tui.commands import account as _account  # noqa: E402, F401
from tui.commands import inspect as _inspect  # noqa: E402, F401
from tui.commands import plugin as _plugin  # noqa: E402, F401
from tui.commands import prompted as _prompted  # noqa: E402, F401

# Then /history, /config and /status, last.
from tui.commands import history_search as _history_search  # noqa: E402, F401  # isort: skip
from tui.commands import settings_view as _settings_view  # noqa: E402, F401  # isort: skip
