"""Assembling a working session from options: settings, model, permissions, transcript,
instructions, tools, the loop and its context manager, in that order.

This is the composition root that every front end shares (headless, the TUI,
the plain REPL, through tui.session.driver): it decides which concrete parts
the loop gets, so the loop and the parts stay ignorant of each other. Each
part is made by a builder that takes what it needs and returns what it made;
``assemble_runtime`` hands them over in a ``Runtime``, whose fields are never
bound again. A few parts call back into parts made after them (the MCP
servers into the loop, the Agent tool into the parent loop, ExitPlanMode into
the runtime): those callbacks name the later part, declared below before it
is made, and run only once the session does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

from agent.core.events import EventSink, SessionStarted
from agent.core.locations import config_dir
from agent.instructions.agents import discover_agents
from agent.instructions.custom_commands import discover_commands
from agent.instructions.hooks import HookRunner
from agent.instructions.memory import MemoryFiles
from agent.instructions.plan import PlanState, plan_file_path
from agent.instructions.skills import InvokedSkills, discover_skills, skills_listing
from agent.loop.agent import Agent, AgentConfig
from agent.loop.cost import CostTracker
from agent.loop.tool_hooks import ToolHooks
from agent.loop.tool_runner import AskPermission, ToolRunner
from agent.mcp.servers import McpServers, conversation_holds
from agent.model.client import ModelClient
from agent.permissions.safe_git import env_for_command, safe_git_env
from agent.plugins.loader import load_plugins
from agent.sessions.session import rebuild_file_state
from agent.sessions.transcript import LoadedSession
from compaction.read_state import settle_resumed
from tools.base import ToolContext
from tools.bash import BashTool
from tools.exit_plan_mode import ExitPlanModeTool
from tools.file_state import FileStateCache, normalize_path
from tools.registry import default_tools
from tools.sandbox import Sandbox
from tools.skill import SkillInfo, SkillTool
from tools.task_list import TaskList, task_list_path
from tools.task_list_tools import task_list_tools
from tools.watching import FileWatcher
from tools.worktrees import Worktrees
from tui.session.after_tools import AfterTools
from tui.session.context_setup import ContextParts, WindowSettings, build_subagent_context
from tui.session.credentials import key_provider_for
from tui.session.current_session import CurrentSession
from tui.session.jobs_setup import build_jobs, stop_hook_tasks
from tui.session.mcp_setup import McpToolList, build_mcp_servers
from tui.session.notify import notifier
from tui.session.options import RunOptions
from tui.session.output_style import load_output_styles
from tui.session.page_reader import PageReader, connect_web_fetch
from tui.session.runtime import Runtime
from tui.session.sandbox_setup import build_sandbox
from tui.session.sdk_setup import (
    ShapedTools,
    checkpoint_edits,
    prompt_uuids,
    request_extra,
    shape_tools,
    structured_output_checks,
)
from tui.session.session_hooks import SessionHooks
from tui.session.session_model import (
    SessionModel,
    check_model,
    chosen_model,
    fallback_model,
    thinking_choice,
    user_id,
)
from tui.session.session_setup import (
    clean_old_transcripts,
    company_announcement,
    load_session_settings,
    open_session,
    permission_gate,
    remember_rule,
    watch_transcript,
)
from tui.session.subagents import ParentSession, Subagents
from tui.session.system_prompt import SystemPrompt, commit_trailer
from tui.session.web_searcher import WebSearcher, connect_web_search
from tui.session.working_dir import WorkingDirectory, jobs_running_in, worktree_base_ref

ApprovePlan = Callable[[str], Awaitable[bool]]


def assemble_runtime(
    options: RunOptions,
    emit: EventSink,
    ask: AskPermission | None = None,
    approve_plan: ApprovePlan | None = None,
    preloaded: tuple[Path, LoadedSession] | None = None,
) -> Runtime:
    """A session built from ``options`` (StartupError when they cannot be honoured), its
    events to ``emit``; ``ask``: the permission question (None where nobody answers);
    ``approve_plan``: ExitPlanMode's question; ``preloaded``: the transcript -c / -r names,
    read already (path, content)."""
    # Made further down; the callbacks that name them run only once the session does.
    mcp: McpServers
    shaped: ShapedTools
    runner: ToolRunner
    current: CurrentSession
    agent: Agent
    runtime: Runtime

    notify = notifier(emit)
    cwd = options.cwd.resolve()

    # Settings (their env applied), the model, the permission gate.
    settings, launch_env = load_session_settings(options, cwd, notify)
    name = chosen_model(options, settings)
    thinking = thinking_choice(options, settings)
    gate = permission_gate(options, settings, cwd, notify)
    models = SessionModel(name, thinking, in_plan=gate.mode == "plan")
    remember = partial(remember_rule, cwd, notify)
    plugins = load_plugins(settings, options.plugin_dirs, cwd)
    for warning in plugins.warnings:
        notify(warning, "warning")

    # The transcript, memory, plugins' and own skills, commands, styles, plan, hooks, prompt.
    file_state = FileStateCache()
    opened = open_session(options, cwd, models.current, preloaded, notify)
    loaded = opened.loaded
    if loaded is not None:
        rebuild_file_state(loaded, file_state)
        # Reads the last compaction summarized away need a new Read, as they did before.
        settle_resumed(
            file_state, loaded.messages, lambda path: normalize_path(cwd / Path(path).expanduser())
        )
    session = opened.session
    watch_transcript(session, file_state, notify)
    clean_old_transcripts(settings, session.path, notify)
    if (announcement := company_announcement(settings)) is not None:
        notify(announcement, "info")
    roots = [gate.project_root, *gate.work_dirs]  # imports stay inside these
    memory = MemoryFiles(cwd, roots=roots, read_denied=gate.read_denied)
    from_project, from_user = options.reads("project"), options.reads("user")
    skills = discover_skills(
        cwd,
        include_project=options.project_trusted and from_project,
        include_user=from_user,
        plugins=plugins.folders("skills"),
    )
    for warning in skills.warnings:
        notify(warning)
    invoked_skills = InvokedSkills.rebuild(list(loaded.events) if loaded else [], skills)
    custom_commands = discover_commands(
        cwd,
        include_project=from_project,
        include_user=from_user,
        plugins=plugins.folders("commands"),
    )
    styles = load_output_styles(
        cwd,
        options.project_trusted and from_project,
        settings.get("outputStyle"),
        notify,
        include_user=from_user,
    )
    for warning in custom_commands.warnings:
        notify(warning)
    plan = PlanState(plan_file_path(config_dir(), session.id), active=gate.mode == "plan")
    tasks = TaskList(task_list_path(config_dir(), session.id))
    if tasks.load_problem:
        notify(tasks.load_problem)
    gate.plan_file = plan.path
    hooks = HookRunner(
        settings.hooks,
        cwd,
        session.id,
        session.path,
        mode=lambda: gate.mode,
        on_output=lambda text: notify(text, "info"),
    )
    if not settings.only_managed_hooks:  # disableAllHooks and the policy hold for plugins too
        for plugin in plugins.plugins:
            hooks.add_plugin_hooks(plugin.hooks, plugin.root, plugin.source)
    session_hooks = SessionHooks(hooks, emit)
    tool_hooks = ToolHooks(hooks, emit)
    for warning in hooks.warnings:
        notify(warning)
    hook_context: list[str] = []
    nested_instructions: list[str] = []
    prompt = SystemPrompt(
        cwd,
        memory,
        skills_listing(skills),
        models,
        styles,
        replaced=options.system_prompt,
        appended=options.append_system_prompt,
        notify=notify,
        commit_trailer=commit_trailer(settings),
    )
    prompt.load_memory()
    prompt.rebuild()

    # The tools: sandbox, jobs, subagents, skills, plan mode, MCP servers; the runner.
    tool_context = ToolContext(
        cwd=cwd,
        file_state=file_state,
        session_dir=session.folder,
        read_denied=gate.read_denied,
        respect_gitignore=settings.get("respectGitignore") is not False,
    )
    watcher = FileWatcher(file_state)
    if options.watch_files:
        watcher.start_at_second_drain()  # off the path to the first request
    sandbox = build_sandbox(options, settings, gate, cwd, env=launch_env)
    gate.sandbox_enabled = sandbox.policy.enabled
    if sandbox.policy.enabled:  # a project's hooks (and statusLine) run sandboxed
        hooks.sandbox = Sandbox(sandbox.policy)
        hooks.sandboxed_commands = settings.project_hook_commands | plugins.project_hook_commands()
    for text, level in sandbox.notices:
        notify(text, level)
    jobs = build_jobs(session.folder, emit)
    session_hooks.background_tasks = lambda: stop_hook_tasks(jobs)
    directory = WorkingDirectory(
        cwd, tool_context, gate, prompt, hooks, lambda: bash_tools, emit,
        use_prompt=lambda blocks: setattr(agent, "system", blocks),
    )  # fmt: skip
    worktrees = Worktrees(
        directory.move_to,
        safe_git_env,
        lambda: worktree_base_ref(settings),
        options.worktree,
        running_in=lambda path: jobs_running_in(jobs, path),
    )
    definitions = discover_agents(
        cwd,
        options.agents,
        include_project=options.project_trusted and from_project,
        include_user=from_user,
        plugins=plugins.folders("agents"),
    )
    for warning in definitions.warnings:
        notify(warning)
    window = WindowSettings(
        options.autocompact,
        settings.auto_compact_window,
        settings.server_context_editing,
        models.known_limits,
        tool_context.resolve,
    )
    parent = ParentSession(
        cwd,
        emit,
        gate,
        remember,
        hooks,
        session_hooks,
        jobs,
        models,
        prompt,
        tool_context,
        context_for=partial(build_subagent_context, window),
        agent=lambda: agent,
        refresh_tools=lambda: mcp_tools.refresh(),
    )
    subagents = Subagents(definitions, options.subagents, parent, tuple(options.agents))

    def record_skill(skill: SkillInfo, body: str) -> None:
        invoked_skills.record(skill, body)
        current.session.append_record({"type": "event", "event": InvokedSkills.event(skill)})

    tools = [
        *default_tools(sandbox.policy, env_for_command, jobs, worktrees),
        *subagents.tools(),
        SkillTool(skills, on_invoke=record_skill),
        *task_list_tools(tasks),
        ExitPlanModeTool(
            lambda: plan.path,
            approve_plan,
            lambda: runtime.set_permission_mode("default"),
            in_plan_mode=lambda: gate.mode == "plan",
        ),
    ]
    mcp = build_mcp_servers(
        cwd,
        options,
        settings.raw,
        notify,
        on_change=lambda: None,  # tools join at the next turn boundary (McpToolList)
        in_context=lambda text: conversation_holds((m.content for m in agent.messages), text),
        plugins=plugins.plugins,
    )
    shaped = shape_tools(tools, options.json_schema, options.tools, notify)
    # named in the system prompt, which stays the same while they wait behind ToolSearch
    prompt.deferred_tools = [tool.name for tool in shaped.tools if tool.deferred]
    prompt.rebuild()
    runner = ToolRunner(
        shaped.tools,
        tool_context,
        gate,
        emit,
        session_hooks.asking(ask),
        remember,
        tool_hooks,
    )

    # The loop, and the context manager plugged into it (history restored on resume).
    client = ModelClient(emit=emit)
    client.key_helper = key_provider_for(settings, cwd, notify)
    client.raw_events = options.stream_events
    costs = CostTracker()
    bash_tools = [tool for tool in shaped.tools if isinstance(tool, BashTool)]
    current = CurrentSession(
        session,
        ContextParts(
            window,
            emit,
            file_state,
            invoked_skills,
            plan,
            tasks,
            memory,
            jobs,
            bash_tools,
            agents_listing=subagents.listing,
            announcements=lambda: [
                *nested_instructions,
                *mcp.announcements(),
                *mcp_tools.announcements(),
            ],
            run_hook=hooks.run,
        ),
        models.current,
    )
    agent = Agent(
        config=AgentConfig(
            model=models.current,
            fallback_model=fallback_model(options, settings),
            max_turns=options.max_turns,
            max_budget_usd=options.max_budget_usd,
            request_extra=request_extra(options.betas),
            limits=models.limits_for,
            thinking=models.thinking,
            long_context_models=models.long_context,  # the set itself: it grows
            metadata=lambda: {"user_id": user_id(current.session.id)},
            model_check=lambda model: check_model(client, model),
        ),
        client=client,
        runner=runner,
        system=prompt.blocks,
        emit=emit,
        session=session,
        policy=current.context,
        messages=opened.messages,
        reminder_sources=[
            watcher.drain_notices,
            plan.reminders,
            lambda: _drain(hook_context),
            mcp.instruction_reminders,
            lambda: mcp_tools.reminders(),
            mcp.mentioned,
            jobs.take_notifications,
        ],
        on_tool_results=AfterTools(
            gate,
            bash_tools[0] if bash_tools else None,
            tool_hooks,
            jobs,
            tool_context.resolve,
            prompt,
            nested_instructions,
        ),
        stop_hook=session_hooks.stop,
        costs=costs,
        prompt_folder=lambda: current.session.folder,
    )
    mcp_tools = McpToolList(shaped.tools, mcp, runner, agent)
    agent.before_turn = mcp_tools.turn_started
    connect_web_fetch(shaped.tools, PageReader(lambda: client.client, lambda: costs))
    connect_web_search(shaped.tools, WebSearcher(lambda: client.client, lambda: costs))
    if loaded is not None:
        current.context.restore_history(
            loaded.segments,
            loaded.boundaries,
            live=loaded.messages,
            first_unread=loaded.unread_before > 0,
        )
        current.context.restore_calibration(loaded.events)
    if options.include_hook_events:
        hooks.on_event = emit
    if shaped.structured is not None:
        agent.finish_after_tools, agent.nudge_before_end = structured_output_checks(
            shaped.structured
        )
    checkpoints = checkpoint_edits(
        tool_context.resolve, lambda: prompt_uuids(agent.messages), interactive=not options.headless
    )
    if checkpoints is not None:
        runner.before_run = checkpoints[1]

    runtime = Runtime(
        options=options,
        emit=emit,
        cwd=cwd,
        directory=directory,
        worktrees=worktrees,
        settings=settings,
        models=models,
        gate=gate,
        current=current,
        file_state=file_state,
        skills=skills,
        invoked_skills=invoked_skills,
        custom_commands=custom_commands,
        styles=styles,
        plan=plan,
        tasks=tasks,
        hooks=hooks,
        session_hooks=session_hooks,
        prompt=prompt,
        tool_context=tool_context,
        watcher=watcher,
        sandbox=sandbox,
        jobs=jobs,
        subagents=subagents,
        mcp=mcp,
        mcp_tools=mcp_tools,
        runner=runner,
        agent=agent,
        structured=shaped.structured,
        checkpoints=checkpoints[0] if checkpoints is not None else None,
        resumed=bool(options.continue_session or options.resume) and bool(opened.messages),
        nested_instructions=nested_instructions,
        hook_context=hook_context,
        mcp_questions=[],
        plugins=plugins,
    )
    runtime.apply_thinking()
    emit(
        SessionStarted(
            session_id=session.id,
            model=runtime.model,
            cwd=str(cwd),
            transcript_path=str(session.path),
            resumed=runtime.resumed,
            tools=[tool.name for tool in runtime.tools],
            permission_mode=gate.mode,
        )
    )
    return runtime


def _drain(queue: list[str]) -> list[str]:
    """What ``queue`` holds, leaving it empty."""
    drained = list(queue)
    queue.clear()
    return drained
