"""Running a custom slash command: its body filled in, ``!`cmd``` run, ``@file`` attached, sent.

The command file (agent.instructions.custom_commands) is the user's prompt
template, but a repository can ship it, so nothing in it runs on its own say:

- ``!`cmd``` runs only when ccx's permission gate allows the command, with the
  file's ``allowed-tools`` counted as allow rules (deny rules, protected paths
  and the read-only classifier apply as for the model's Bash calls; the OS
  sandbox too). If any snippet is not allowed, none runs and the command is
  refused with the reason, as Claude Code does.
- While its folder is not trusted, a project's command that runs ``!`cmd``` or
  names ``allowed-tools`` is refused whole (nothing runs, nothing is sent);
  one that is only a prompt template still expands.
- ``@path`` attaches a file the gate lets the model read (tui.session.file_mentions,
  as a prompt's ``@path`` does).
- A command whose text is empty or only whitespace (after ``!`cmd``` ran) is refused:
  nothing is sent.
- ``allowed-tools`` hold for the command's turn only, and ``model`` picks that
  turn's model; both are undone when the turn ends, however it ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.core.messages import UserBlock, text_block
from agent.core.sendable import is_blank
from agent.instructions.custom_commands import (
    CustomCommand,
    command_header,
    fill_arguments,
    shell_snippets,
    what_it_does,
)
from agent.loop.agent import TurnOutcome
from agent.permissions.rules import Rule
from agent.permissions.safe_git import env_for_command
from tools.bash import BashParams, BashTool
from tui.session.file_mentions import attached_files

if TYPE_CHECKING:
    from tui.session.runtime import Runtime

SNIPPET_TIMEOUT_MS = 30_000


class CommandRefused(Exception):
    """The command cannot be sent as it is (a ``!`cmd``` that is not allowed); says why."""


@dataclass(frozen=True)
class PreparedCommand:
    """What the model will get: the content blocks of the user's message."""

    content: list[UserBlock]
    grants: list[Rule]


async def run_custom_command(runtime: Runtime, command: CustomCommand, args: str) -> TurnOutcome:
    """Prepare the command and run its turn (CommandRefused before anything is sent)."""
    notes: list[str] = []
    try:
        prepared = await prepare(runtime, command, args, notes)
    finally:  # said also when the command is refused
        for note in notes:
            runtime.emit_notice(note, "info")
    with granted(runtime, prepared.grants), runtime.model_for_turn(command.model):
        return await runtime.agent.submit(prepared.content)


async def prepare(
    runtime: Runtime, command: CustomCommand, args: str, notes: list[str]
) -> PreparedCommand:
    """The message's blocks, ``!`cmd``` run and ``@file`` attached; what to tell the user goes
    to ``notes``. CommandRefused when a snippet is not allowed or the command needs a trusted
    folder (then nothing has run)."""
    acts = what_it_does(command)
    if acts and command.scope == "project" and not runtime.options.project_trusted:
        raise CommandRefused(
            f"/{command.name}: this folder is not trusted, and the command "
            f"{' and '.join(acts)}; nothing was run or sent. To use it, trust the folder: "
            "start ccx here in a terminal and answer y."
        )
    grants = command_grants(runtime, command, notes)
    body = fill_arguments(command.body, args)
    snippets = shell_snippets(body)
    if snippets:
        with granted(runtime, grants):
            for snippet in snippets:  # every one is checked before any runs
                decision = runtime.gate.check("Bash", {"command": snippet}, True)
                if decision.behavior != "allow":
                    raise CommandRefused(
                        f'/{command.name}: shell command permission check failed for "!`{snippet}`": '
                        f"{decision.reason}. Allow it with the command's allowed-tools "
                        "(in a trusted folder) or a permission rule."
                    )
        body = await _run_snippets(runtime, body, snippets)
    if is_blank(body):  # the header alone would be a turn about nothing
        after = " once its shell commands ran" if snippets else ""
        raise CommandRefused(
            f"/{command.name}: nothing to send: the command's text is empty or only "
            f"whitespace{after} ({command.path})."
        )
    content: list[UserBlock] = [text_block(command_header(command.name, args)), text_block(body)]
    content += attached_files(
        runtime,
        body,
        label=f"attached by /{command.name}",
        notes=notes,
        note_prefix=f"/{command.name}: ",
    )
    return PreparedCommand(content, grants)


def command_grants(runtime: Runtime, command: CustomCommand, notes: list[str]) -> list[Rule]:
    """The file's ``allowed-tools`` as rules (a project's, only in a trusted folder: prepare
    refuses the command otherwise)."""
    if not command.allowed_tools:
        return []
    if command.scope == "project" and not runtime.options.project_trusted:
        return []
    rules = []
    for text in command.allowed_tools:
        try:
            rules.append(Rule.parse(text, source=f"/{command.name} (allowed-tools)"))
        except ValueError as exc:
            notes.append(f"/{command.name}: bad allowed-tools rule {text!r} ({exc}); ignored")
    return rules


@contextmanager
def granted(runtime: Runtime, rules: list[Rule]) -> Iterator[None]:
    """The rules as allow rules while the block runs; removed after, however it ends."""
    added = [rule for rule in rules if rule not in runtime.gate.allow]
    runtime.gate.allow.extend(added)
    try:
        yield
    finally:
        for rule in added:
            if rule in runtime.gate.allow:
                runtime.gate.allow.remove(rule)


async def _run_snippets(runtime: Runtime, body: str, snippets: list[str]) -> str:
    """Each ``!`cmd``` replaced by what it printed (a shell of its own, in the sandbox)."""
    shell = BashTool(sandbox=runtime.sandbox.policy, command_env=env_for_command)
    try:
        for snippet in snippets:
            params = BashParams(command=snippet, timeout=SNIPPET_TIMEOUT_MS)
            result = await shell.run(params, runtime.tool_context)
            output = result.output_text().rstrip("\n")
            body = body.replace(f"!`{snippet}`", output, 1)
    finally:
        shell.kill_background()
    return body
