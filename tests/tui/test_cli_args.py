"""Options that take several values after one flag, as Claude Code's command line does."""

from __future__ import annotations

from tui.cli.main import ParsedArgs, expand_list_options, mcp_config_values, parse_args


def test_several_values_after_one_flag_become_repeated_flags() -> None:
    config = '{"mcpServers": {"b": {"command": "b"}}}'
    argv = ["-p", "--mcp-config", "a.json", config, "--allowedTools", "Read", "Bash(ls *)", "hi"]
    assert expand_list_options(argv) == [
        "-p",
        "--mcp-config",
        "a.json",
        "--mcp-config",
        config,
        "--allowedTools",
        "Read",
        "--allowedTools",
        "Bash(ls *)",
        "hi",
    ]
    # the prompt after a list stays the prompt
    after = ["--mcp-config", "a.json", "read a.json"]
    assert expand_list_options(after) == after


def test_mcp_config_takes_a_file_and_a_json_string_in_one_go() -> None:
    config = '{"mcpServers": {}}'
    parsed = parse_args(["-p", "--mcp-config", "a.json", config, "hello"], standalone=False)
    assert isinstance(parsed, ParsedArgs)
    assert parsed.options.mcp_config == ["a.json", config]
    assert parsed.prompt == "hello"


def test_a_bare_ccx_parses_to_what_typer_gives(tmp_path, monkeypatch) -> None:
    # The app's fast path builds these without typer (tui.cli.main.no_arguments).
    from tui.cli.main import no_arguments, parse_interactive

    monkeypatch.chdir(tmp_path)
    typed = parse_args([], standalone=False)
    assert isinstance(typed, ParsedArgs)
    assert no_arguments() == typed
    assert parse_interactive([]) == typed
    assert typed.options.cwd == tmp_path.resolve() and not typed.options.headless


def test_the_mcp_config_values_started_early_are_the_ones_the_parser_reads() -> None:
    config = '{"mcpServers": {"b": {"command": "b"}}}'
    argv = ["-p", "--mcp-config", "a.json", config, "--mcp-config=c.json", "hi", "--", "x"]
    assert mcp_config_values(argv) == ["a.json", config, "c.json"]
    parsed = parse_args(argv[:-2], standalone=False)
    assert isinstance(parsed, ParsedArgs)
    assert parsed.options.mcp_config == mcp_config_values(argv)
    assert mcp_config_values(["-p", "hi", "--", "--mcp-config", "a.json"]) == []
    assert mcp_config_values(["-p", "--mcp-config"]) == []
