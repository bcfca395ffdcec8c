"""ccx's command line as typer declares it: the options' help, and typer's messages for
help, ``--version`` and usage errors. ``tui.cli.arguments`` reads the usual command lines
without it and builds what both give."""

from pathlib import Path
from typing import Annotated, Any

from agent import __version__
from tui.cli.arguments import OPTIONS, BadValue, ParsedArgs, build

# The callback's parameters that are options' values (--version is typer's alone).
PARAMETERS = frozenset(param for param, _kind in OPTIONS.values()) | {"prompt"}


def typer_app(holder: dict[str, ParsedArgs]) -> Any:
    """The typer command for ccx's options; its callback puts the ParsedArgs in ``holder``."""
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
        given = locals()  # first: only the parameters (and names the body uses) are bound
        values = {name: given[name] for name in PARAMETERS}
        if version:
            print(f"{__version__} (ccx)")
            return
        try:
            holder["parsed"] = build(values)
        except BadValue as exc:
            raise typer.BadParameter(exc.message, param_hint=exc.option) from exc

    return app
