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
from typing import Annotated, Any, NamedTuple

from agent import __version__

Interactive = Callable[[Any, str | None, bool], int]


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
    if not {"--cwd", "-h", "--help"} & flags:
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
    from tui.cli.worktree_flag import worktree_flag

    holder: dict[str, ParsedArgs] = {}
    app = _typer_app(holder)
    try:
        argv, flags = sdk_flags.take(
            worktree_flag(expand_list_options(argv)), sdk_flags.known_options(app)
        )
        app(args=argv, prog_name="ccx", standalone_mode=standalone)
    except sdk_flags.FlagError as exc:
        return _flag_error(exc, standalone)
    except SystemExit as exc:  # typer exits when done; usage errors carry their own code
        code = exc.code if isinstance(exc.code, int) else 1
        if code or "parsed" not in holder:
            return code
    except Exception as exc:
        if standalone or not hasattr(exc, "format_message"):
            raise
        raise CliError(f"ccx: {exc.format_message()}", getattr(exc, "exit_code", 2)) from exc
    if "parsed" not in holder:
        return 0
    try:
        sdk_flags.apply(flags, holder["parsed"].options)
    except sdk_flags.FlagError as exc:
        return _flag_error(exc, standalone)
    sdk_flags.warn(flags)
    return holder["parsed"]


def _flag_error(exc: Exception, standalone: bool) -> int:
    if not standalone:
        raise CliError(f"ccx: {exc}") from exc
    print(f"ccx: {exc}", file=sys.stderr)
    return 2


def _typer_app(holder: dict[str, ParsedArgs]) -> Any:
    import typer

    # Plain help text (click's formatter): rich's panels cut option names at 80 columns.
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)

    @app.command(
        context_settings={"help_option_names": ["-h", "--help"]},
        help=(
            "A terminal coding agent. Without -p it opens an interactive session in this "
            "folder (/help lists its commands; /resume picks up an earlier session)."
        ),
        epilog=(
            "ccx demo: an offline tour with a scripted model, no key needed "
            "(ccx demo --help for its options)."
        ),
    )
    def ccx(
        prompt: Annotated[
            str | None, typer.Argument(help="The prompt; piped stdin follows it (or is the prompt)")
        ] = None,
        print_mode: Annotated[
            bool, typer.Option("-p", "--print", help="Run the prompt headless and print the result")
        ] = False,
        output_format: Annotated[
            str, typer.Option("--output-format", help="text | json | stream-json")
        ] = "text",
        include_partial: Annotated[
            bool,
            typer.Option("--include-partial-messages", help="stream-json: include text deltas"),
        ] = False,
        model: Annotated[
            str | None, typer.Option("--model", help="Model name or alias (opus, sonnet, haiku)")
        ] = None,
        fallback_model: Annotated[
            str | None,
            typer.Option("--fallback-model", help="Model to use when the main one is overloaded"),
        ] = None,
        permission_mode: Annotated[
            str | None,
            typer.Option(
                "--permission-mode", help="default | acceptEdits | plan | bypassPermissions"
            ),
        ] = None,
        skip_permissions: Annotated[
            bool,
            typer.Option(
                "--dangerously-skip-permissions",
                help="Same as --permission-mode bypassPermissions (unless settings turn it off)",
            ),
        ] = False,
        allowed_tools: Annotated[
            list[str] | None,
            typer.Option(
                "--allowedTools",
                "--allowed-tools",
                help='Rules to allow, e.g. "Bash(git log *)" Edit',
            ),
        ] = None,
        disallowed_tools: Annotated[
            list[str] | None,
            typer.Option("--disallowedTools", "--disallowed-tools", help="Rules to deny"),
        ] = None,
        max_turns: Annotated[
            int | None,
            typer.Option("--max-turns", help="Stop after this many model turns (headless)"),
        ] = None,
        continue_: Annotated[
            bool,
            typer.Option("-c", "--continue", help="Continue the latest session in this directory"),
        ] = False,
        resume: Annotated[
            str | None, typer.Option("-r", "--resume", help="Resume the session with this id")
        ] = None,
        autocompact: Annotated[
            str | None,
            typer.Option(
                "--autocompact", help="auto, or the window in tokens at which to auto-compact"
            ),
        ] = None,
        plain: Annotated[
            bool,
            typer.Option(
                "--plain", help="Use the plain line-by-line REPL instead of the full-screen app"
            ),
        ] = False,
        cwd: Annotated[
            Path | None,
            typer.Option("--cwd", help="Work in this directory instead of the current one"),
        ] = None,
        sandbox: Annotated[
            bool | None,
            typer.Option(
                "--sandbox/--no-sandbox",
                help="Run Bash commands in the OS sandbox (default: on where it works)",
            ),
        ] = None,
        sandbox_network: Annotated[
            bool | None,
            typer.Option(
                "--sandbox-network/--no-sandbox-network",
                help="Let sandboxed Bash commands use the network (default: yes)",
            ),
        ] = None,
        verbose: Annotated[
            bool, typer.Option("--verbose", help="Accepted for Claude Code's stream-json runs")
        ] = False,
        input_format: Annotated[
            str,
            typer.Option("--input-format", help="-p: text, or stream-json (user turns on stdin)"),
        ] = "text",
        system_prompt: Annotated[
            str | None,
            typer.Option("--system-prompt", help="Instructions to use instead of ccx's own"),
        ] = None,
        system_prompt_file: Annotated[
            Path | None,
            typer.Option("--system-prompt-file", help="--system-prompt, read from this file"),
        ] = None,
        append_system_prompt: Annotated[
            str | None,
            typer.Option("--append-system-prompt", help="Text to add to the system prompt"),
        ] = None,
        add_dir: Annotated[
            list[Path] | None,
            typer.Option("--add-dir", help="Another folder the tools may read without asking"),
        ] = None,
        settings: Annotated[
            str | None,
            typer.Option("--settings", help="A settings JSON file, or the JSON itself"),
        ] = None,
        session_id: Annotated[
            str | None, typer.Option("--session-id", help="The new session's id (a UUID)")
        ] = None,
        fork_session: Annotated[
            bool,
            typer.Option("--fork-session", help="With -c or -r: continue in a new session"),
        ] = False,
        permission_prompt_tool: Annotated[
            str | None,
            typer.Option(
                "--permission-prompt-tool",
                help="-p: who approves a tool: stdio (the stream-json client, as the Agent SDK)",
            ),
        ] = None,
        replay_user_messages: Annotated[
            bool,
            typer.Option(
                "--replay-user-messages", help="stream-json input: echo each user message back"
            ),
        ] = False,
        mcp_config: Annotated[
            list[str] | None,
            typer.Option("--mcp-config", help="MCP servers from a JSON file or a JSON string"),
        ] = None,
        plugin_dir: Annotated[
            list[Path] | None,
            typer.Option("--plugin-dir", help="Load the plugin in this folder for this session"),
        ] = None,
        worktree: Annotated[
            str | None,
            typer.Option("--worktree", "-w", help="Start in a new git worktree (optionally named)"),
        ] = None,
        version: Annotated[
            bool, typer.Option("--version", "-v", help="Print the version and exit")
        ] = False,
    ) -> None:
        if version:
            print(f"{__version__} (ccx)")
            return
        from tui.session.options import RunOptions

        if output_format not in ("text", "json", "stream-json"):
            raise typer.BadParameter("use text, json or stream-json", param_hint="--output-format")
        if autocompact is not None and not AUTOCOMPACT_VALUE.match(autocompact.replace("_", "")):
            raise typer.BadParameter(
                "use auto or a number of tokens, e.g. 120000 or 120k", param_hint="--autocompact"
            )
        _check_headless_flags(
            output_format, input_format, session_id, continue_ or bool(resume), fork_session
        )
        if permission_prompt_tool not in (None, "stdio"):
            raise typer.BadParameter(
                "only stdio (the stream-json client answers) is supported yet",
                param_hint="--permission-prompt-tool",
            )
        if system_prompt_file is not None:
            try:
                system_prompt = system_prompt_file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise typer.BadParameter(str(exc), param_hint="--system-prompt-file") from exc
        # The Agent SDK starts the CLI with --input-format stream-json and no -p: it is headless.
        print_mode = print_mode or input_format == "stream-json"
        options = RunOptions(
            cwd=(cwd or Path.cwd()).resolve(),
            model=model,
            permission_mode=permission_mode or ("bypassPermissions" if skip_permissions else None),
            allowed_tools=allowed_tools or [],
            disallowed_tools=disallowed_tools or [],
            max_turns=max_turns,
            continue_session=continue_,
            resume=resume,
            autocompact=autocompact,
            fallback_model=fallback_model,
            headless=print_mode,
            sandbox=sandbox,
            sandbox_network=sandbox_network,
            system_prompt=system_prompt,
            append_system_prompt=append_system_prompt,
            add_dirs=list(add_dir or []),
            settings=settings,
            session_id=session_id,
            fork_session=fork_session,
            mcp_config=mcp_config or [],
            plugin_dirs=[d.expanduser().resolve() for d in plugin_dir or []],
            stream_events=include_partial and output_format == "stream-json",
            # The TUI, the REPL and stream-json show thinking: ask the API for its text.
            show_thinking=not print_mode or output_format == "stream-json",
        )
        holder["parsed"] = ParsedArgs(
            options,
            prompt,
            print_mode,
            output_format,
            include_partial,
            plain,
            input_format,
            permission_prompt_tool,
            replay_user_messages,
            worktree,
        )

    return app


UUID_TEXT = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")


def _check_headless_flags(
    output_format: str, input_format: str, session_id: str | None, resumes: bool, fork: bool
) -> None:
    """Claude Code's rules for combining the headless flags (typer.BadParameter, exit 2)."""
    import typer

    if input_format not in ("text", "stream-json"):
        raise typer.BadParameter("use text or stream-json", param_hint="--input-format")
    if input_format == "stream-json" and output_format != "stream-json":
        raise typer.BadParameter(
            "--input-format stream-json needs --output-format stream-json",
            param_hint="--input-format",
        )
    if session_id is not None and not UUID_TEXT.match(session_id):
        raise typer.BadParameter("must be a UUID", param_hint="--session-id")
    if session_id is not None and resumes and not fork:
        raise typer.BadParameter(
            "with -c or -r it needs --fork-session too", param_hint="--session-id"
        )


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


AUTOCOMPACT_VALUE = re.compile(r"^(auto|\d+(\.\d+)?[kKmM]?)$")
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
