"""The `ccx` command line: options shared by every mode, and headless `-p` runs.

Interactive front ends live in ``tui/``; the launcher there hands this module a
callable that opens one, so ``agent/`` never imports ``tui/``. ``--version``
is answered before anything heavy is imported.
"""

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent import __version__
from tui.cli.arguments import ParsedArgs

Interactive = Callable[[Any, str | None, bool], int]


class CliError(Exception):
    """A usage error found while parsing; the caller shows ``message`` and exits with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def run(argv: list[str], interactive: Interactive | None = None) -> int:
    if argv and argv[0] in ("--version", "-v", "-V"):
        print(f"{__version__} (ccx)")
        return 0
    from tui.warm import policy as warm

    if warm.enabled(argv):  # headless: through the warm worker, or here and start one
        from tui.warm.client import run as run_warm

        return run_warm(argv, lambda: _parse_and_dispatch(argv, interactive))
    if not warm.headless(argv):
        return _parse_and_dispatch(argv, interactive)
    from agent.core.gc_pause import pause_for_start_up, start_up_done

    pause_for_start_up()  # until the session has started (tui.headless)
    flags = {a.split("=")[0] for a in argv}
    early_servers = False
    caches = None
    if not {"--cwd", "-h", "--help"} & flags:
        from tui.session.start_up_caches import StartUpCaches

        caches = StartUpCaches("headless")
        caches.use()  # before the session's imports: what the last run compiled and generated
        from agent.instructions.system_prompt import start_git_info
        from agent.model.client import import_sdk_meanwhile

        # --mcp-config's servers (node, Python...) start while the rest is imported and parsed
        early_servers = not {"-w", "--worktree"} & flags and _start_named_mcp_servers(argv)
        start_git_info(os.getcwd())  # git runs meanwhile too
        import_sdk_meanwhile()  # MCP servers start while it goes on
    try:
        return _parse_and_dispatch(argv, interactive)
    finally:
        start_up_done()
        if caches is not None:
            caches.keep()
        if early_servers:  # those the session did not take (agent.mcp.early_start)
            from agent.mcp.early_start import end_unclaimed

            end_unclaimed()


def _start_named_mcp_servers(argv: list[str]) -> bool:
    """Start ``--mcp-config``'s stdio servers before the session is built; whether any were
    (the session takes them over: ``agent.mcp.early_start``)."""
    values = mcp_config_values(argv)
    if not values:
        return False
    from agent.mcp.early_start import start_named_servers
    from agent.permissions.settings import project_root

    return start_named_servers(values, project_root(Path.cwd())) > 0


def mcp_config_values(argv: list[str]) -> list[str]:
    """The values of ``--mcp-config`` in ``argv``, as the parser reads them (several after one
    flag, ``--mcp-config=V``; none after ``--``)."""
    if "--" in argv:
        argv = argv[: argv.index("--")]
    expanded = expand_list_options(argv)
    values = []
    for index, arg in enumerate(expanded):
        if arg == "--mcp-config" and index + 1 < len(expanded):
            values.append(expanded[index + 1])
        elif arg.startswith("--mcp-config="):
            values.append(arg.split("=", 1)[1])
    return values


def _parse_and_dispatch(argv: list[str], interactive: Interactive | None) -> int:
    parsed = parse_args(argv, standalone=True)
    if isinstance(parsed, int):
        return parsed
    return dispatch(parsed, interactive)


def parse_interactive(argv: list[str]) -> ParsedArgs:
    """Parse without printing (the full-screen app may already own the terminal)."""
    if not argv:
        return no_arguments()
    parsed = parse_args(argv, standalone=False)
    if isinstance(parsed, int):
        raise CliError("", parsed)
    return parsed


def no_arguments() -> ParsedArgs:
    """What a bare `ccx` parses to, built without typer: its ~90 ms would come between the
    app's first paint and the meter's first figure (tests check it equals typer's result)."""
    from tui.session.options import RunOptions

    options = RunOptions(cwd=Path.cwd().resolve(), headless=False, show_thinking=True)
    return ParsedArgs(options, None, False, "text", False, False)


def parse_args(argv: list[str], *, standalone: bool) -> ParsedArgs | int:
    """The parsed command line, or the exit code when parsing ended the run (help, version, errors).

    With ``standalone`` typer prints help and usage errors itself; without it
    usage errors are raised as CliError.
    """
    from tui.cli import sdk_flags
    from tui.cli.arguments import KNOWN
    from tui.cli.worktree_flag import worktree_flag

    try:
        argv, flags = sdk_flags.take(worktree_flag(expand_list_options(argv)), KNOWN)
    except sdk_flags.FlagError as exc:
        return _flag_error(exc, standalone)
    parsed = _read_without_typer(argv) or _parse_with_typer(argv, standalone)
    if isinstance(parsed, int):
        return parsed
    try:
        sdk_flags.apply(flags, parsed.options)
    except sdk_flags.FlagError as exc:
        return _flag_error(exc, standalone)
    sdk_flags.warn(flags)
    return parsed


def _read_without_typer(argv: list[str]) -> ParsedArgs | None:
    """The usual command line read without typer's ~45 ms (tui.cli.arguments); None when
    typer must read it, or say what is wrong with it."""
    from tui.cli.arguments import BadValue, build, read

    values = read(argv)
    if values is None:
        return None
    try:
        return build(values)
    except BadValue:
        return None


def _parse_with_typer(argv: list[str], standalone: bool) -> ParsedArgs | int:
    from tui.cli.typer_app import typer_app

    holder: dict[str, ParsedArgs] = {}
    try:
        typer_app(holder)(args=argv, prog_name="ccx", standalone_mode=standalone)
    except SystemExit as exc:  # typer exits when done; usage errors carry their own code
        code = exc.code if isinstance(exc.code, int) else 1
        if code or "parsed" not in holder:
            return code
    except Exception as exc:
        if standalone or not hasattr(exc, "format_message"):
            raise
        raise CliError(f"ccx: {exc.format_message()}", getattr(exc, "exit_code", 2)) from exc
    return holder.get("parsed", 0)


def _flag_error(exc: Exception, standalone: bool) -> int:
    if not standalone:
        raise CliError(f"ccx: {exc}") from exc
    print(f"ccx: {exc}", file=sys.stderr)
    return 2


def dispatch(parsed: ParsedArgs, interactive: Interactive | None = None) -> int:
    """Run what the command line asked for: a headless prompt, or an interactive session."""
    if parsed.worktree is not None:
        from tui.cli.worktree_flag import start_in_worktree

        started = start_in_worktree(parsed.options, parsed.worktree or None)
        if isinstance(started, int):
            return started
        parsed = parsed._replace(options=started)
    options = parsed.options
    if parsed.print_mode and parsed.input_format == "stream-json":
        if message := _credentials_problem(options.cwd, options.settings):
            _report_missing_credentials(message, parsed.output_format)
            return 1
        return _run_stream(parsed)
    if parsed.print_mode:
        return _run_one_prompt(parsed, piped=False)
    if not parsed.plain and stdin_is_piped():
        # `echo text | ccx`: as Claude Code, a prompt run whose answer alone is printed.
        return _run_one_prompt(parsed, piped=True)
    if interactive is None:
        print("ccx: no interactive front end is available; use -p", file=sys.stderr)
        return 2
    return interactive(options, parsed.prompt, parsed.plain)


RULE_WORD = re.compile(
    r"^[A-Z][A-Za-z0-9_]*(\(.*\))?(,\s*[A-Z][A-Za-z0-9_]*(\(.*\))?)*$", re.DOTALL
)
MCP_CONFIG_VALUE = re.compile(r"^(\s*\{.*|[^-\s]\S*\.json)$", re.DOTALL)  # JSON, or a .json path
# Options that take several values after one flag, as Claude Code's do, and what a value
# looks like (the first value is always taken; later ones only while they look like one, so
# a prompt after them stays the prompt).
LIST_OPTIONS: dict[str, re.Pattern[str]] = {
    "--allowedTools": RULE_WORD,
    "--allowed-tools": RULE_WORD,
    "--disallowedTools": RULE_WORD,
    "--disallowed-tools": RULE_WORD,
    "--mcp-config": MCP_CONFIG_VALUE,
}


def expand_list_options(argv: list[str]) -> list[str]:
    """Claude Code's `--allowedTools A B C` or `--mcp-config a.json '{...}'` (several values
    after one flag) as repeated flags."""
    expanded: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        expanded.append(arg)
        index += 1
        value = LIST_OPTIONS.get(arg)
        if value is None or index >= len(argv):
            continue
        expanded.append(argv[index])
        index += 1
        while index < len(argv) and value.match(argv[index]):
            expanded += [arg, argv[index]]
            index += 1
    return expanded


def stdin_is_piped() -> bool:
    """Whether stdin is open and not a terminal (a pipe, a file, /dev/null)."""
    try:
        return sys.stdin is not None and not sys.stdin.isatty()
    except (AttributeError, ValueError):  # closed, or replaced by something without a fd
        return False


def _run_one_prompt(parsed: ParsedArgs, piped: bool) -> int:
    """`-p`, or input piped in without it: the prompt (the argument, then stdin) run once.

    Piped without -p, the folder's trust follows the interactive rule, not -p's: nobody can
    be asked, so the project's own parts apply only if it was trusted before, and what
    stays off is said on stderr (stdout carries only the answer)."""
    options = parsed.options
    if piped and (message := _credentials_problem(options.cwd, options.settings)):
        # first, as in a terminal: without a key nothing else matters (`ccx < /dev/null` too)
        _report_missing_credentials(message, parsed.output_format)
        return 1
    text = _headless_prompt(parsed.prompt)
    if not text:
        if piped:
            print(
                "ccx: stdin is not a terminal and gave no prompt: pipe one in, give one as an "
                "argument, or use --plain for the line-by-line REPL",
                file=sys.stderr,
            )
        else:
            print("ccx: -p needs a prompt (as an argument or on stdin)", file=sys.stderr)
        return 2
    from tui.commands.slash import BLANK_PROMPT, is_blank

    if is_blank(text):  # as Claude Code: refused before anything starts, exit 1
        print(f"ccx: {BLANK_PROMPT} Give ccx a prompt with words in it.", file=sys.stderr)
        return 1
    if not piped and (message := _credentials_problem(options.cwd, options.settings)):
        _report_missing_credentials(message, parsed.output_format)
        return 1
    if piped:
        options = _piped_options(options, parsed.output_format)
    return _run_headless(options, text, parsed.output_format, parsed.include_partial)


def _piped_options(options: Any, output_format: str) -> Any:
    """The interactive options made a prompt run's, with the folder's trust settled
    without asking (an earlier "trust" counts; otherwise the project's parts stay off)."""
    import asyncio
    from dataclasses import replace

    from agent.core.events import Event, Notice
    from tui.session.folder_trust import settle_session_trust

    def tell(event: Event) -> None:
        if isinstance(event, Notice):
            print(event.text, file=sys.stderr)

    settled = asyncio.run(settle_session_trust(options, None, tell))
    show_thinking = output_format == "stream-json"
    return replace(settled or options, headless=True, show_thinking=show_thinking)


def _headless_prompt(prompt: str | None) -> str:
    """The prompt a run gets: the argument, then what stdin holds on the next line (as
    Claude Code joins them); stdin alone when there is no argument."""
    piped = "" if not stdin_is_piped() else sys.stdin.read()
    piped = piped.rstrip().lstrip("\r\n")
    if prompt in (None, "-"):
        return piped
    return f"{prompt}\n{piped}" if piped else prompt


def _credentials_problem(cwd: Path, flag: str | None) -> str | None:
    import os

    from tui.session.credentials import check_credentials

    return check_credentials(cwd, os.environ, flag)


def _report_missing_credentials(message: str, output_format: str) -> None:
    print(message, file=sys.stderr)
    if output_format != "text":  # scripts reading stdout still get one result object
        import json

        result = {"type": "result", "subtype": "error_during_execution", "is_error": True}
        print(json.dumps({**result, "result": message.splitlines()[0]}))


def _run_headless(options: object, prompt: str, output_format: str, include_partial: bool) -> int:
    import asyncio

    from tui.headless.run import HeadlessOutput, run_headless

    include_ccx = bool(getattr(options, "include_ccx_events", False))
    output = HeadlessOutput(output_format, include_partial, include_ccx=include_ccx)
    return asyncio.run(run_headless(options, prompt, output))  # type: ignore[arg-type]


def _run_stream(parsed: ParsedArgs) -> int:
    import asyncio

    from tui.headless.run import HeadlessOutput
    from tui.headless.stream_json.session import run_stream

    output = HeadlessOutput(
        "stream-json", parsed.include_partial, include_ccx=parsed.options.include_ccx_events
    )
    stdio = parsed.permission_prompt_tool == "stdio"
    return asyncio.run(
        run_stream(
            parsed.options, output, stdio_permissions=stdio, replay=parsed.replay_user_messages
        )
    )


def main() -> None:
    sys.exit(run(sys.argv[1:]))
