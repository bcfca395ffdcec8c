"""What a session is started with: the options every front end passes to the runtime.

Kept free of heavy imports: the CLI and the TUI's first paint build these
before anything else is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.permissions.rules import split_rules  # noqa: F401 - the CLI's rule lists

if TYPE_CHECKING:
    from tools.worktrees import WorktreeVisit


class StartupError(Exception):
    """Options that cannot be honoured (an unknown session id, a bad mode); shown as is."""


@dataclass
class RunOptions:
    cwd: Path
    model: str | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    max_turns: int | None = None
    continue_session: bool = False
    resume: str | None = None
    autocompact: str | None = None
    fallback_model: str | None = None
    headless: bool = True
    watch_files: bool = True
    # False: the project's settings apply only as far as an untrusted folder's may (agent.permissions.trust).
    project_trusted: bool = True
    sandbox: bool | None = None  # --sandbox / --no-sandbox; None: env, settings, default
    sandbox_network: bool | None = None  # --sandbox-network / --no-sandbox-network
    banner: str | None = None  # a first line for the interactive front ends (the demo's)
    resume_hint: bool = (
        True  # "Resume with: ccx -r ID" on exit; off where the session is thrown away
    )
    mcp_config: list[str] = field(default_factory=list)  # --mcp-config files or JSON strings
    plugin_dirs: list[Path] = field(default_factory=list)  # --plugin-dir: plugins for the session
    show_cost: bool = True  # the footer's dollars; off where nothing is billed (the demo)
    system_prompt: str | None = None  # --system-prompt: replaces ccx's instructions
    append_system_prompt: str | None = None  # --append-system-prompt
    add_dirs: list[Path] = field(default_factory=list)  # --add-dir: more folders to read
    settings: str | None = None  # --settings: a settings file's path, or its JSON
    session_id: str | None = None  # --session-id: the new session's id (a UUID)
    fork_session: bool = False  # --fork-session: -c / -r continue in a new session
    # Claude Code's flags the Agent SDK passes (tui.cli.sdk_flags parses them).
    tools: list[str] | None = None  # --tools: the base tool set; [] none, None all
    setting_sources: list[str] | None = None  # --setting-sources user,project,local
    max_budget_usd: float | None = None  # --max-budget-usd: stop once spent
    json_schema: dict[str, Any] | None = None  # --json-schema: the StructuredOutput tool
    effort: str | None = None  # --effort low | medium | high | xhigh | max
    betas: list[str] = field(default_factory=list)  # --betas: anthropic-beta values
    thinking: str | None = None  # --thinking adaptive | enabled | disabled
    max_thinking_tokens: str | None = None  # --max-thinking-tokens N (0: off), as typed
    # Ask the API for the thinking text (display "summarized"): a front end shows it.
    show_thinking: bool = False
    stream_events: bool = False  # stream-json --include-partial-messages: raw stream events
    include_hook_events: bool = False  # stream-json: hook_started / hook_response
    include_ccx_events: bool = False  # stream-json: ccx's own system/ccx_* lines too
    strict_mcp_config: bool = False  # only --mcp-config's servers
    resume_session_at: str | None = None  # -r up to this message uuid
    agents: dict[str, Any] = field(default_factory=dict)  # --agents / initialize's agents
    subagents: bool = True  # False: no Agent tool (the demo, whose tiny window is all spoken for)
    worktree: WorktreeVisit | None = None  # -w: the worktree made for it (ExitWorktree leaves)

    def reads(self, source: str) -> bool:
        """Whether ``--setting-sources`` lets this session read ``source``'s files (user,
        project, local): settings, and the .claude/<kind> folders of commands, skills,
        agents and output styles (user: ~/.claude and ccx's folder; project: the project's)."""
        return self.setting_sources is None or source in self.setting_sources
