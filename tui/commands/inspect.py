"""Commands that show or adjust the session's setup: /agents, /hooks, /memory, /permissions,
/add-dir, /export, /doctor, /bashes.

Each answers from what the session has loaded (never re-reading a project's files the
session did not read), in lines that fit 80 columns.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.permissions.rules import Rule
from tui.commands.registry import COMMANDS, CommandResult, command

if TYPE_CHECKING:
    from agent.core.messages import Message
    from tui.session.runtime import Runtime

RULE_KINDS = ("allow", "ask", "deny")


@command("agents", "/agents", "The subagents the model can start, and where each comes from")
async def _agents(runtime: Runtime, _args: str) -> CommandResult:
    definitions = runtime.subagents.definitions
    lines = [f"{len(definitions)} agent{'s' if len(definitions) != 1 else ''}:"]
    rows = []
    for name, agent in definitions.items():
        tools = ", ".join(agent.tools) if agent.tools is not None else "all tools"
        model = agent.model or "inherit"
        source = agent.source
        if source not in ("built-in", "--agents"):
            source = _short(Path(source), runtime.cwd)
        lines.append(_cut(f"  {name}: {agent.description}", 80))
        lines.append(_cut(f"    {source} · {tools} · model {model}", 80))
        rows.append({"name": name, "source": agent.source, "tools": agent.tools, "model": model})
    lines.append("Add one as .claude/agents/NAME.md (project) or ~/.claude/agents/NAME.md.")
    return CommandResult("\n".join(lines), data={"agents": rows})


@command("hooks", "/hooks", "The hooks that run in this session, by event")
async def _hooks(runtime: Runtime, _args: str) -> CommandResult:
    groups = runtime.hooks.groups
    rows: list[dict[str, Any]] = []
    lines: list[str] = []
    for event, matchers in groups.items():
        for group in matchers:
            for hook in group.commands:
                what = f"SDK callback {hook.callback}" if hook.callback else hook.command
                rows.append({"event": event, "matcher": group.matcher, "command": what})
                matcher = f" [{group.matcher}]" if group.matcher not in ("", "*") else ""
                lines.append(f"  {event}{matcher}: {_cut(what, 60)} ({hook.timeout:g} s)")
    if not rows:
        text = 'No hooks. Add them under "hooks" in a settings file (see /config).'
        if runtime.settings.get("disableAllHooks") is True:
            text = "Hooks are off (disableAllHooks)."
        return CommandResult(text, data={"hooks": rows})
    header = f"{len(rows)} hook{'s' if len(rows) != 1 else ''}:"
    return CommandResult("\n".join([header, *lines]), data={"hooks": rows})


@command("memory", "/memory", "The memory files (CLAUDE.md) this session loaded")
async def _memory(runtime: Runtime, _args: str) -> CommandResult:
    files = runtime.prompt.memory_files
    if not files:
        return CommandResult(
            "No memory files loaded. /init writes a CLAUDE.md for this repository; "
            "~/.claude/CLAUDE.md holds instructions for every project."
        )
    lines = ["Memory files, in the order the model reads them:"]
    for memory in files:
        tokens = len(memory.content) // 4
        lines.append(f"  {memory.kind:<8} {_short(memory.path, runtime.cwd)}  (~{tokens:,} tokens)")
    lines.append("Edit them in your editor; /clear reads them again.")
    data = [{"path": str(m.path), "kind": m.kind} for m in files]
    return CommandResult("\n".join(lines), data={"memory": data})


@command(
    "permissions",
    "/permissions [allow|ask|deny RULE | remove RULE]",
    "The permission rules; add one to .claude/settings.local.json, or remove one",
)
async def _permissions(runtime: Runtime, args: str) -> CommandResult:
    gate = runtime.gate
    words = args.split(maxsplit=1)
    if not words:
        lines = [f"Permission mode: {gate.mode}"]
        for kind in RULE_KINDS:
            rules: list[Rule] = getattr(gate, kind)
            lines.append(f"{kind.capitalize()} ({len(rules)}):")
            lines += [f"  {rule}" + (f"  ({rule.source})" if rule.source else "") for rule in rules]
        if gate.work_dirs:
            lines.append("Also working in: " + ", ".join(str(d) for d in gate.work_dirs))
        data = {kind: [str(r) for r in getattr(gate, kind)] for kind in RULE_KINDS}
        return CommandResult("\n".join(lines), data={"permissions": data, "mode": gate.mode})
    if len(words) != 2 or words[0] not in (*RULE_KINDS, "remove"):
        return CommandResult(f"Usage: {COMMANDS['permissions'].usage}", is_error=True)
    try:
        rule = Rule.parse(words[1], source="local settings")
    except ValueError as exc:
        return CommandResult(str(exc), is_error=True)
    from agent.permissions.settings import (
        add_permission_rule,
        project_root,
        remove_permission_rule,
    )

    target = project_root(runtime.cwd) / ".claude" / "settings.local.json"
    try:
        if words[0] == "remove":
            removed = remove_permission_rule(target, str(rule))
            for kind in RULE_KINDS:
                kept = [r for r in getattr(gate, kind) if str(r) != str(rule)]
                removed = removed or len(kept) < len(getattr(gate, kind))
                setattr(gate, kind, kept)
            if not removed:
                return CommandResult(f"No rule {rule} to remove.", is_error=True)
            return CommandResult(f"Removed {rule} (from {target} where it was saved).")
        add_permission_rule(target, words[0], str(rule))
    except (OSError, ValueError) as exc:
        return CommandResult(f"Could not change {target}: {exc}", is_error=True)
    rules = getattr(gate, words[0])
    if all(str(r) != str(rule) for r in rules):
        rules.append(rule)
    return CommandResult(f"Added {words[0]} rule {rule} to {target}.")


@command("add-dir", "/add-dir PATH", "Work in another folder too, for this session")
async def _add_dir(runtime: Runtime, args: str) -> CommandResult:
    raw = args.strip()
    if not raw:
        return CommandResult("Usage: /add-dir PATH", is_error=True)
    path = Path(os.path.expanduser(raw))
    path = (path if path.is_absolute() else runtime.cwd / path).resolve()
    if not path.is_dir():
        return CommandResult(f"{path} is not a folder.", is_error=True)
    gate = runtime.gate
    if path in gate.work_dirs or gate.inside_cwd(str(path)):
        return CommandResult(f"{path} is already a working folder.")
    gate.work_dirs.append(path)
    gate.read_dirs.append(path)
    return CommandResult(
        f"Added {path}: the model may read there, and edit under the working folder's rules, "
        "for the rest of this session."
    )


@command("export", "/export [FILE]", "Save the conversation as text (no FILE: to the clipboard)")
async def _export(runtime: Runtime, args: str) -> CommandResult:
    text = conversation_text(runtime.agent.messages, runtime.cwd)
    raw = args.strip()
    if not raw:
        return CommandResult(text, data={"copy": text})
    path = Path(os.path.expanduser(raw))
    path = path if path.is_absolute() else runtime.cwd / path
    from tools.atomic_file import atomic_write

    try:
        atomic_write(path, text.encode("utf-8", errors="surrogateescape"))
    except OSError as exc:
        return CommandResult(f"Could not write {path}: {exc.strerror or exc}", is_error=True)
    return CommandResult(f"Conversation saved to {path} ({text.count(chr(10)) + 1:,} lines).")


@command("doctor", "/doctor", "Check the install, key, settings, sandbox and search engine")
async def _doctor(runtime: Runtime, _args: str) -> CommandResult:
    import asyncio

    from tui.cli.doctor import checks, report

    findings = await asyncio.to_thread(checks, runtime.cwd)
    return CommandResult(report(findings), data={"doctor": [vars(f) for f in findings]})


@command("bashes", "/bashes", "The background jobs (as /tasks)")
async def _bashes(runtime: Runtime, args: str) -> CommandResult:
    return await COMMANDS["tasks"].handler(runtime, args)


def conversation_text(messages: Sequence[Message], cwd: Path) -> str:
    """The conversation as a reader sees it: prompts, replies and the tools called."""
    from tools.registry import label_call

    stamp = time.strftime("%Y-%m-%d %H:%M")
    lines = [f"# ccx conversation, exported {stamp}", ""]
    for message in messages:
        if message.kind not in ("prompt", "response") and message.role == "user":
            continue  # attachments, reminders, summaries' scaffolding
        for block in message.content:
            if block["type"] == "text":
                text = block["text"]
                if not text.strip() or text.startswith("<system-reminder>"):
                    continue
                if message.role == "user":
                    lines += [f"> {line}" for line in text.splitlines()] + [""]
                else:
                    lines += [text, ""]
            elif block["type"] == "tool_use":
                label = label_call(block["name"], dict(block["input"]), cwd)
                lines += [f"⏺ {label}", ""]
    return "\n".join(lines).rstrip() + "\n"


def _cut(text: str, width: int) -> str:
    """One line of at most ``width`` characters (its indentation kept, inner spaces folded)."""
    indent = text[: len(text) - len(text.lstrip(" "))]
    flat = indent + " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _short(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        home = Path.home()
        return "~/" + str(path.relative_to(home)) if path.is_relative_to(home) else str(path)
