"""ccx's own command-line options: what they parse to, and a plain reader for the usual case.

Typer (``tui.cli.typer_app``) declares the options, their help and their errors; it
costs about 45 ms of CPU to import and run, which a cold ``ccx -p`` spends before
its first request. A command line made only of ccx's options, in their plain forms,
is read here without it (``read``); anything else (help, ``--version``, ``--``, an
unknown or bundled flag, a value that looks like a flag or that typer might refuse)
returns None and typer reads it, so every message and exit code stays typer's.
Both readers hand their values to ``build``, which checks them and makes the
``ParsedArgs``. Tests keep the table equal to typer's options and both readers'
results equal.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, NamedTuple


class ParsedArgs(NamedTuple):
    options: (
        Any  # tui.session.options.RunOptions (imported lazily: it must stay off --version's path)
    )
    prompt: str | None
    print_mode: bool
    output_format: str
    include_partial: bool
    plain: bool
    input_format: str = "text"
    permission_prompt_tool: str | None = None
    replay_user_messages: bool = False
    worktree: str | None = None  # -w: start in a new worktree ("": a random name)


class BadValue(ValueError):
    """A value the option cannot take; typer reports it (``typer.BadParameter``)."""

    def __init__(self, message: str, option: str):
        super().__init__(message)
        self.message = message
        self.option = option


# How an option takes its value.
FLAG = "flag"  # no value: True
TEXT = "text"  # one value, kept as given
NUMBER = "number"  # one whole number
PATH = "path"  # one path
TEXTS = "texts"  # repeatable: each value added to a list
PATHS = "paths"
ON = "on"  # --x of a --x/--no-x pair
OFF = "off"

# Every option of ccx's typer command, as (parameter, kind); tests check it against typer's.
OPTIONS: dict[str, tuple[str, str]] = {
    "-p": ("print_mode", FLAG),
    "--print": ("print_mode", FLAG),
    "--output-format": ("output_format", TEXT),
    "--include-partial-messages": ("include_partial", FLAG),
    "--model": ("model", TEXT),
    "--fallback-model": ("fallback_model", TEXT),
    "--permission-mode": ("permission_mode", TEXT),
    "--dangerously-skip-permissions": ("skip_permissions", FLAG),
    "--allowedTools": ("allowed_tools", TEXTS),
    "--allowed-tools": ("allowed_tools", TEXTS),
    "--disallowedTools": ("disallowed_tools", TEXTS),
    "--disallowed-tools": ("disallowed_tools", TEXTS),
    "--max-turns": ("max_turns", NUMBER),
    "-c": ("continue_", FLAG),
    "--continue": ("continue_", FLAG),
    "-r": ("resume", TEXT),
    "--resume": ("resume", TEXT),
    "--autocompact": ("autocompact", TEXT),
    "--plain": ("plain", FLAG),
    "--cwd": ("cwd", PATH),
    "--sandbox": ("sandbox", ON),
    "--no-sandbox": ("sandbox", OFF),
    "--sandbox-network": ("sandbox_network", ON),
    "--no-sandbox-network": ("sandbox_network", OFF),
    "--verbose": ("verbose", FLAG),
    "--input-format": ("input_format", TEXT),
    "--system-prompt": ("system_prompt", TEXT),
    "--system-prompt-file": ("system_prompt_file", PATH),
    "--append-system-prompt": ("append_system_prompt", TEXT),
    "--add-dir": ("add_dir", PATHS),
    "--settings": ("settings", TEXT),
    "--session-id": ("session_id", TEXT),
    "--fork-session": ("fork_session", FLAG),
    "--permission-prompt-tool": ("permission_prompt_tool", TEXT),
    "--replay-user-messages": ("replay_user_messages", FLAG),
    "--mcp-config": ("mcp_config", TEXTS),
    "--plugin-dir": ("plugin_dir", PATHS),
    "--worktree": ("worktree", TEXT),
    "-w": ("worktree", TEXT),
}
# Typer's alone: they print and exit.
TYPER_ONLY = frozenset({"-h", "--help", "--version", "-v"})
KNOWN = frozenset(OPTIONS) | TYPER_ONLY

DEFAULTS: dict[str, Any] = {
    param: False if kind == FLAG else None for param, kind in OPTIONS.values()
}
DEFAULTS |= {"prompt": None, "output_format": "text", "input_format": "text"}

WHOLE_NUMBER = re.compile(r"[0-9]{1,18}")


def read(argv: list[str]) -> dict[str, Any] | None:
    """The options' values as typer would give them, or None when typer must read ``argv``."""
    values = dict(DEFAULTS)
    has_prompt = False
    index = 0
    while index < len(argv):
        arg = argv[index]
        index += 1
        if arg == "-" or not arg.startswith("-"):
            if has_prompt:
                return None  # typer's "unexpected extra argument"
            values["prompt"], has_prompt = arg, True
            continue
        name, has_value, value = arg.partition("=")
        spec = OPTIONS.get(name)
        if spec is None or (has_value and not name.startswith("--")):
            return None
        param, kind = spec
        if kind in (FLAG, ON, OFF):
            if has_value:
                return None
            values[param] = kind != OFF
            continue
        if not has_value:
            if index >= len(argv):
                return None
            value = argv[index]
            index += 1
            if value.startswith("-"):
                return None  # typer takes it as the value; whether it was meant to be is its call
        converted = _converted(kind, value)
        if converted is None:
            return None
        if kind in (TEXTS, PATHS):
            values[param] = [*(values[param] or []), converted]
        else:
            values[param] = converted
    return values


def _converted(kind: str, value: str) -> Any:
    """``value`` as typer converts it for ``kind``; None where typer might refuse it."""
    if kind == NUMBER:
        return int(value) if WHOLE_NUMBER.fullmatch(value) else None
    if kind in (PATH, PATHS):
        # typer refuses a path that exists but cannot be read
        if not value or (os.path.exists(value) and not os.access(value, os.R_OK)):
            return None
        return Path(value)
    return value


UUID_TEXT = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
AUTOCOMPACT_VALUE = re.compile(r"^(auto|\d+(\.\d+)?[kKmM]?)$")


def build(values: dict[str, Any]) -> ParsedArgs:
    """The parsed command line from the options' values; BadValue for one that cannot be."""
    from tui.session.options import RunOptions

    output_format = values["output_format"]
    input_format = values["input_format"]
    autocompact = values["autocompact"]
    if output_format not in ("text", "json", "stream-json"):
        raise BadValue("use text, json or stream-json", "--output-format")
    if autocompact is not None and not AUTOCOMPACT_VALUE.match(autocompact.replace("_", "")):
        raise BadValue("use auto or a number of tokens, e.g. 120000 or 120k", "--autocompact")
    _check_headless_flags(values)
    if values["permission_prompt_tool"] not in (None, "stdio"):
        raise BadValue(
            "only stdio (the stream-json client answers) is supported yet",
            "--permission-prompt-tool",
        )
    system_prompt = values["system_prompt"]
    if (system_prompt_file := values["system_prompt_file"]) is not None:
        try:
            system_prompt = system_prompt_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BadValue(str(exc), "--system-prompt-file") from exc
    # The Agent SDK starts the CLI with --input-format stream-json and no -p: it is headless.
    print_mode = values["print_mode"] or input_format == "stream-json"
    options = RunOptions(
        cwd=(values["cwd"] or Path.cwd()).resolve(),
        model=values["model"],
        permission_mode=values["permission_mode"]
        or ("bypassPermissions" if values["skip_permissions"] else None),
        allowed_tools=values["allowed_tools"] or [],
        disallowed_tools=values["disallowed_tools"] or [],
        max_turns=values["max_turns"],
        continue_session=values["continue_"],
        resume=values["resume"],
        autocompact=autocompact,
        fallback_model=values["fallback_model"],
        headless=print_mode,
        sandbox=values["sandbox"],
        sandbox_network=values["sandbox_network"],
        system_prompt=system_prompt,
        append_system_prompt=values["append_system_prompt"],
        add_dirs=list(values["add_dir"] or []),
        settings=values["settings"],
        session_id=values["session_id"],
        fork_session=values["fork_session"],
        mcp_config=values["mcp_config"] or [],
        plugin_dirs=[d.expanduser().resolve() for d in values["plugin_dir"] or []],
        stream_events=values["include_partial"] and output_format == "stream-json",
        # The TUI, the REPL and stream-json show thinking: ask the API for its text.
        show_thinking=not print_mode or output_format == "stream-json",
    )
    return ParsedArgs(
        options,
        values["prompt"],
        print_mode,
        output_format,
        values["include_partial"],
        values["plain"],
        input_format,
        values["permission_prompt_tool"],
        values["replay_user_messages"],
        values["worktree"],
    )


def _check_headless_flags(values: dict[str, Any]) -> None:
    """Claude Code's rules for combining the headless flags."""
    input_format, session_id = values["input_format"], values["session_id"]
    if input_format not in ("text", "stream-json"):
        raise BadValue("use text or stream-json", "--input-format")
    if input_format == "stream-json" and values["output_format"] != "stream-json":
        raise BadValue(
            "--input-format stream-json needs --output-format stream-json", "--input-format"
        )
    if session_id is not None and not UUID_TEXT.match(session_id):
        raise BadValue("must be a UUID", "--session-id")
    resumes = values["continue_"] or bool(values["resume"])
    if session_id is not None and resumes and not values["fork_session"]:
        raise BadValue("with -c or -r it needs --fork-session too", "--session-id")
