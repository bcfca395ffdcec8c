"""What trusting a folder turns on, and settling that question once per session for every
interactive front end.

A repository acts through more than its settings files: its commands can run
``!`cmd``` and grant tools, its skills, agents and output styles steer the
model, its ``.mcp.json`` starts programs, and its CLAUDE.md can try to import
files from outside it. ``trust_question`` names each of these in one short
line (80 columns), so the user knows what "trust" switches on; a folder that
ships none of them is not asked about. ``settle_trust`` decides: already
trusted, nothing to ask, or the user's answer (remembered when it is "trust").
A front end that cannot ask (input piped, not a terminal) gets "not trusted"
unless the folder was trusted before. ``settle_session_trust`` is the one flow
the full-screen app and the plain REPL both run: each gives only its way of
asking (a dialog, a prompt; ``AskTrust``) and its event sink, and gets back the
options the session starts with, what follows the answer told as notices.
Headless ``-p`` and the Agent SDK do not come here: like ``claude -p`` they
apply the project as it is.

An untrusted folder still gets its deny and ask rules, its harmless settings
(``model``, ``outputStyle``...), its CLAUDE.md files with their imports from
inside the project, and its commands that are plain prompt templates;
everything this module lists stays off (tui.session.runtime, tui.commands.custom
and agent.mcp.approval hold that).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar, Literal

from agent.core.events import EventSink, Notice
from agent.core.locations import config_dir as user_config_dir
from agent.instructions.agents import agent_dirs, discover_agents
from agent.instructions.custom_commands import (
    CustomCommand,
    discover_commands,
    what_it_does,
)
from agent.instructions.memory import MemoryFiles
from agent.instructions.output_styles import discover_output_styles
from agent.instructions.skills import discover_skills, skill_dirs
from agent.mcp.config import ServerConfig, load_mcp_config
from agent.permissions import trust
from agent.permissions.paths import is_within
from agent.permissions.settings import project_root
from agent.permissions.trust import short_list
from tui.session.options import RunOptions

TrustAnswer = Literal["trust", "untrusted", "exit"]
AskTrust = Callable[["TrustQuestion"], Awaitable[TrustAnswer]]
MAX_ITEM = 76  # "  • " before it in the plain REPL: 80 columns
MAX_COMMANDS_NAMED = 3  # acting commands named one a line; the rest counted


@dataclass
class TrustQuestion:
    """What trusting ``project`` would turn on, one line per item, for the dialog."""

    LEAD: ClassVar[str] = "Trusting it turns on these, which can run commands or steer ccx:"

    project: Path
    items: list[str] = field(default_factory=list)

    @property
    def headline(self) -> str:
        return f"Do you trust the files in {self.project}?"


@dataclass(frozen=True)
class TrustSettled:
    """How the question ended: ``trusted`` for this session, or ``exit`` (the user quit).
    ``question``: what was asked, or what stays off when the front end could not ask;
    ``problem``: the answer "trust" could not be remembered (it holds for this session)."""

    trusted: bool
    exit: bool = False
    question: TrustQuestion | None = None
    problem: str | None = None


def trust_question(
    project: Path,
    config: Path | None = None,
    add_dirs: Sequence[Path] = (),
    home: Path | None = None,
    cwd: Path | None = None,
) -> TrustQuestion | None:
    """What the user should be asked before ``project``'s own parts apply; None when nothing
    needs asking (already trusted, or the project ships nothing that trust would turn on).
    ``cwd``: where the session runs, when below the project (its CLAUDE.md files count)."""
    if trust.is_trusted(project, config):
        return None
    home = Path(home) if home is not None else Path.home()
    config = config if config is not None else user_config_dir(home)
    items = [
        *trust.settings_items(project),
        *_server_items(project, config, home),
        *_command_items(project, config, home),
        *_instruction_items(project, config, home),
        *_import_items(project, cwd or project, add_dirs, home, config),
    ]
    items = [_clip(item) for item in items]
    return TrustQuestion(project, items) if items else None


async def settle_trust(
    cwd: Path, add_dirs: Sequence[Path], ask: AskTrust | None, config: Path | None = None
) -> TrustSettled:
    """Whether the project of ``cwd`` is trusted in this session. ``ask`` puts the question to
    the user; None means the front end cannot ask, so only an earlier "trust" counts."""
    project = project_root(cwd)
    if trust.is_trusted(project, config):
        return TrustSettled(True)
    question = trust_question(project, config, add_dirs, cwd=Path(cwd).resolve())
    if ask is None:
        return TrustSettled(False, question=question)
    if question is None:
        return TrustSettled(True)
    answer = await ask(question)
    if answer == "exit":
        return TrustSettled(False, exit=True, question=question)
    if answer != "trust":
        return TrustSettled(False, question=question)
    try:
        trust.trust(project, config)
    except OSError as exc:
        return TrustSettled(True, question=question, problem=f"could not remember it: {exc}")
    return TrustSettled(True, question=question)


async def settle_session_trust(
    options: RunOptions, ask: AskTrust | None, emit: EventSink
) -> RunOptions | None:
    """``options`` with ``project_trusted`` settled, or None when the user chose to exit.
    ``ask``: the front end's way of putting the question (None: it cannot ask); what
    follows the answer is told through ``emit``."""
    settled = await settle_trust(options.cwd, options.add_dirs, ask)
    if settled.exit:
        return None
    if settled.problem:
        emit(Notice(f"Trusted, but {settled.problem}", "warning"))
    if ask is None and settled.question is not None:
        emit(Notice(untrusted_text(settled.question), "warning"))
    return replace(options, project_trusted=settled.trusted)


def untrusted_text(question: TrustQuestion) -> str:
    """What stays off in a folder not trusted before, where the question could not be asked."""
    return "\n".join(
        [
            f"ccx: {question.project} is not trusted and input is not a terminal, so these "
            "stay off (run ccx there in a terminal once to trust it):",
            *(f"  • {item}" for item in question.items),
        ]
    )


# -- the items ---------------------------------------------------------------------------


def _server_items(project: Path, config: Path, home: Path) -> list[str]:
    servers = load_mcp_config(project, config, home=home).servers.values()
    return [
        f"MCP server '{server.name}' ({_server_action(server)})"
        for server in servers
        if server.scope == "project"
    ]


def _server_action(server: ServerConfig) -> str:
    if server.transport == "stdio":
        return f"runs {short_list([' '.join([server.command, *server.args])], 1)}"
    return f"connects to {short_list([server.url], 1)}"


def _command_items(project: Path, config: Path, home: Path) -> list[str]:
    """The project's commands that run shell commands or grant tools; plain prompt templates
    expand without trust and are not named."""
    acting = [
        command
        for command in discover_commands(project, home, config)
        if command.scope == "project" and what_it_does(command)
    ]
    items = [_command_item(command) for command in acting[:MAX_COMMANDS_NAMED]]
    if len(acting) > MAX_COMMANDS_NAMED:
        more = len(acting) - MAX_COMMANDS_NAMED
        items.append(f"{more} more commands that run shell commands or grant tools")
    return items


def _command_item(command: CustomCommand) -> str:
    acts = what_it_does(command)
    whole = f"command /{command.name} {' and '.join(acts)}"
    return whole if len(whole) <= MAX_ITEM else f"command /{command.name} {acts[0]}"


def _instruction_items(project: Path, config: Path, home: Path) -> list[str]:
    """The project's skills, agents and output styles: instructions the model follows."""
    items = []
    skills_dir = skill_dirs(project, home, config)[0]
    skills = [
        s.name
        for s in discover_skills(project, home, config)
        if is_within(str(s.path), str(skills_dir))
    ]
    items += _named(skills, "project skill")
    agents_dir = agent_dirs(project, home, config)[0]
    agents = [
        a.name
        for a in discover_agents(project, home=home, config_dir=config).values()
        if is_within(a.source, str(agents_dir))
    ]
    items += _named(agents, "project agent")
    styles = discover_output_styles(project, home, config).styles
    items += _named([s.name for s in styles if s.source == "project"], "project output style")
    return items


def _named(names: list[str], kind: str) -> list[str]:
    if not names:
        return []
    if len(names) == 1:
        return [f"{kind} '{names[0]}'"]
    return [f"{len(names)} {kind}s ({short_list(names)})"]


def _import_items(
    project: Path, cwd: Path, add_dirs: Sequence[Path], home: Path, config: Path
) -> list[str]:
    """CLAUDE.md imports that lead outside the project: never read, trusted or not, but a
    folder that tries is worth a word before trusting it."""
    memory = MemoryFiles(cwd, home=home, config_dir=config, roots=[project, *add_dirs])
    memory.load()
    why = " (outside the project: never read)"
    return [
        _clip_middle(refused.describe(project), MAX_ITEM - len(why)) + why
        for refused in memory.refused
        if refused.outside
    ]


def _clip(item: str) -> str:
    return item if len(item) <= MAX_ITEM else item[: MAX_ITEM - 1].rstrip() + "…"


def _clip_middle(text: str, width: int) -> str:
    """A long path cut in its middle, so its start and its file name both show."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]
