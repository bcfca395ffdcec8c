"""The command line read without typer (tui.cli.arguments) gives exactly what typer gives,
and leaves to typer everything it cannot be sure of."""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.import_graph import ROOT
from tui.cli.arguments import (
    FLAG,
    NUMBER,
    OFF,
    ON,
    OPTIONS,
    PATH,
    PATHS,
    TEXT,
    TEXTS,
    TYPER_ONLY,
    BadValue,
    ParsedArgs,
    build,
    read,
)
from tui.cli.main import parse_args
from tui.cli.typer_app import typer_app

KIND_OF_TYPE = {str: TEXT, int: NUMBER, Path: PATH, list[str]: TEXTS, list[Path]: PATHS}


def typer_result(argv: list[str]) -> ParsedArgs | str:
    """What typer makes of argv: the ParsedArgs, or the name of the error it raised."""
    holder: dict[str, ParsedArgs] = {}
    try:
        typer_app(holder)(args=argv, prog_name="ccx", standalone_mode=False)
    except Exception as exc:  # click's usage errors
        return type(exc).__name__
    return holder.get("parsed", "nothing parsed")


def plain_result(argv: list[str]) -> ParsedArgs | str | None:
    """What tui.cli.arguments makes of argv; None when it leaves argv to typer."""
    values = read(argv)
    if values is None:
        return None
    try:
        return build(values)
    except BadValue:
        return "refused"


def test_the_table_is_typers_options() -> None:
    import typer.main

    app = typer_app({})
    command = typer.main.get_command(app)
    hints = typing.get_type_hints(app.registered_commands[0].callback)
    names = {"-h", "--help"}
    for param in command.params:
        if param.param_type_name == "argument":
            assert param.name == "prompt"
            continue
        names |= {*param.opts, *param.secondary_opts}
        if param.name == "version":
            assert {*param.opts} <= TYPER_ONLY
            continue
        annotation = hints[param.name]
        if typing.get_origin(annotation) not in (None, list):  # X | None
            annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        kind = FLAG if annotation is bool else KIND_OF_TYPE[annotation]
        for name in param.opts:
            assert OPTIONS[name] == (param.name, ON if param.secondary_opts else kind), name
        for name in param.secondary_opts:
            assert OPTIONS[name] == (param.name, OFF), name
    assert names == set(OPTIONS) | TYPER_ONLY


USUAL = [
    [],
    ["-p", "Say hello.", "--permission-mode", "bypassPermissions", "--output-format", "json"],
    ["-p", "hi", "--model", "claude-sonnet-4-5", "--max-turns", "3", "--autocompact", "120k"],
    ["--print", "--output-format=stream-json", "--include-partial-messages", "--verbose", "x"],
    ["--input-format", "stream-json", "--output-format", "stream-json", "--replay-user-messages"],
    ["-c", "-p", "go on", "--fork-session", "--session-id", "12345678-1234-1234-1234-123456789abc"],
    [
        "-r",
        "abc",
        "--allowedTools",
        "Read",
        "--allowed-tools",
        "Bash(ls *)",
        "--disallowed-tools=X",
    ],
    ["--sandbox", "--no-sandbox", "--no-sandbox-network", "--sandbox-network", "--plain"],
    ["the prompt", "-p", "--cwd", ".", "--add-dir", "a", "--add-dir=b", "--plugin-dir", "p"],
    ["--mcp-config", "a.json", "--mcp-config", '{"mcpServers": {}}', "--settings", "{}"],
    ["--worktree=", "--system-prompt", "be brief", "--append-system-prompt", "and kind"],
    ["--worktree=feature", "-p", "-", "--dangerously-skip-permissions", "--model", ""],
    ["-p", "x", "--model", "a", "--model", "b", "--max-turns", "007", "--max-turns=2"],
    ["--fallback-model", "haiku", "--permission-prompt-tool", "stdio", "--input-format", "text"],
]
# Refused by build: typer refuses them too, in its own words.
REFUSED = [
    ["--output-format", "xml"],
    ["--autocompact", "soon"],
    ["--input-format", "stream-json"],
    ["--session-id", "not-a-uuid"],
    ["-c", "--session-id", "12345678-1234-1234-1234-123456789abc"],
    ["--permission-prompt-tool", "mcp"],
    ["--system-prompt-file", "no-such-file"],
]
# Left to typer: help, the version, anything unusual.
LEFT_TO_TYPER = [
    ["--help"],
    ["-h"],
    ["--version"],
    ["-p", "--", "-x"],
    ["-pc", "x"],
    ["-p", "one", "two"],
    ["--model"],
    ["--model", "-p"],
    ["--max-turns", "many"],
    ["--max-turns", " 3"],
    ["--print=yes"],
    ["-r=abc"],
    ["--unknown"],
    ["--cwd", ""],
]


@pytest.fixture(autouse=True)
def in_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prompt.md").write_text("Be brief.", encoding="utf-8")


@pytest.mark.parametrize("argv", USUAL)
def test_usual_command_lines_are_read_as_typer_reads_them(argv: list[str]) -> None:
    plain = plain_result(argv)
    assert isinstance(plain, ParsedArgs)
    assert plain == typer_result(argv)


def test_a_system_prompt_file_is_read_the_same(tmp_path: Path) -> None:
    argv = ["-p", "hi", "--system-prompt-file", str(tmp_path / "prompt.md")]
    plain = plain_result(argv)
    assert isinstance(plain, ParsedArgs) and plain.options.system_prompt == "Be brief."
    assert plain == typer_result(argv)


@pytest.mark.parametrize("argv", REFUSED)
def test_what_build_refuses_typer_refuses(argv: list[str]) -> None:
    assert plain_result(argv) == "refused"
    assert typer_result(argv) == "BadParameter"


@pytest.mark.parametrize("argv", LEFT_TO_TYPER)
def test_the_unusual_is_left_to_typer(argv: list[str]) -> None:
    assert read(argv) is None


VALUES = st.sampled_from(
    ["x", "", "-", "7", "-y", "a=b", "say hi", ".", "text", "json", "stream-json", "stdio",
     "auto", "120k", "prompt.md", "12345678-1234-1234-1234-123456789abc"]
)  # fmt: skip


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """Mostly well-formed command lines of ccx's options, now and then with a slip."""
    argv: list[str] = []
    for _ in range(draw(st.integers(0, 7))):
        name = draw(st.sampled_from([*sorted(OPTIONS), "prompt"]))
        if name == "prompt":
            argv.append(draw(VALUES))
        elif OPTIONS[name][1] in (FLAG, ON, OFF) or draw(st.integers(0, 15)) == 0:
            argv.append(name)  # a flag, or now and then an option without its value
        elif name.startswith("--") and draw(st.booleans()):
            argv.append(f"{name}={draw(VALUES)}")
        else:
            argv += [name, draw(VALUES)]
    return argv


@given(command_lines())
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_any_command_line_read_without_typer_is_read_as_typer_reads_it(argv: list[str]) -> None:
    plain = plain_result(argv)
    if plain is None:
        return
    typed = typer_result(argv)
    if plain == "refused":
        assert typed == "BadParameter", argv
    else:
        assert plain == typed, argv


def test_a_usual_print_run_does_not_import_typer() -> None:
    code = (
        "import sys; from tui.cli.main import parse_args\n"
        "parsed = parse_args(['-p', 'hi', '--model', 'm', '--output-format', 'json'], "
        "standalone=True)\n"
        "assert not isinstance(parsed, int) and parsed.options.model == 'm'\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click')))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_typer_still_says_what_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_args(["-p", "hi", "--output-format", "xml"], standalone=True) == 2
    assert "use text, json or stream-json" in capsys.readouterr().err
    assert parse_args(["-p", "hi", "--max-turns", "many"], standalone=True) == 2
    assert "--max-turns" in capsys.readouterr().err
    assert parse_args(["--version"], standalone=True) == 0
    assert "(ccx)" in capsys.readouterr().out


def test_sdk_flags_are_taken_out_before_either_reader() -> None:
    parsed = parse_args(["-p", "hi", "--effort", "high", "--model", "m"], standalone=False)
    assert isinstance(parsed, ParsedArgs)
    assert parsed.options.effort == "high" and parsed.options.model == "m"
