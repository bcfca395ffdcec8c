"""The `ccx` entry points a newcomer meets first: no key, `ccx --plain` on a pipe, `ccx demo`."""

from __future__ import annotations

import io
import os
import re
import subprocess
from pathlib import Path

import pytest

from tui.fake_api import FakeApi, text_reply
from tui.session.credentials import (
    LOCAL_PLACEHOLDER_KEY,
    check_credentials,
    missing_credentials_message,
)

from .conftest import CCX, Ccx

CLEARED_PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_USE_", "CCX_")


def bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of someone who has never configured anything."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED_PREFIXES)}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), CCX_CONFIG_DIR=str(tmp_path / "config"), CCX_WARM="0", **extra)
    return env


def run(
    args: list[str], cwd: Path, env: dict[str, str], stdin: str | None = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CCX, *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("args", [[], ["-p", "hi"], ["-p", "hi", "--output-format", "json"]])
def test_without_a_key_ccx_says_how_to_set_one(repo: Path, tmp_path: Path, args: list[str]) -> None:
    proc = run(args, repo, bare_env(tmp_path))
    assert proc.returncode == 1
    assert "ANTHROPIC_API_KEY" in proc.stderr
    assert "ANTHROPIC_AUTH_TOKEN" in proc.stderr and "CLAUDE_CODE_USE_BEDROCK" in proc.stderr
    assert "ccx demo" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    if "json" in args:
        assert '"is_error": true' in proc.stdout


def test_help_and_version_need_no_key(repo: Path, tmp_path: Path) -> None:
    env = bare_env(tmp_path)
    assert run(["--version"], repo, env).returncode == 0
    helped = run(["--help"], repo, env)
    assert helped.returncode == 0
    words = " ".join(helped.stdout.split())
    assert "ccx demo: an offline tour" in words and "/resume" in words
    demo_help = run(["demo", "--help"], repo, env)
    assert demo_help.returncode == 0 and "usage: ccx demo" in demo_help.stdout


async def test_a_local_endpoint_needs_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent.model.client import make_client

    for name in [k for k in os.environ if k.startswith(("ANTHROPIC_", "CLAUDE_CODE_USE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "config"))
    with FakeApi([text_reply("Local hello.")]) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        assert check_credentials(tmp_path, os.environ) is None
        client = make_client()
        reply = await client.messages.create(
            model="claude-haiku-4-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.content[0].text == "Local hello."  # type: ignore[union-attr]
        headers = api.requests[0].headers
        sent = headers.get("x-api-key") or headers.get("authorization", "")
        assert LOCAL_PLACEHOLDER_KEY in sent


def test_plain_repl_on_piped_stdin_runs_a_turn(ccx: Ccx) -> None:
    ccx.api.add(text_reply("Hello from the fake model."))
    proc = ccx.run("--plain", stdin="hello there\n")
    assert proc.returncode == 0, proc.stderr
    assert "> hello there" in proc.stdout
    assert "● Hello from the fake model." in proc.stdout
    assert re.search(r"\d+% until auto-compact", proc.stdout)
    assert ccx.api.requests[-1].last_user_text() == "hello there"
    assert "Traceback" not in proc.stderr
    assert ccx.api.errors == []


def test_interactive_without_a_terminal_falls_back_to_plain(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tui.plain.repl
    from tui.cli.interactive import plain_reason, start_interactive
    from tui.session.options import RunOptions

    calls: list[tuple[object, str | None]] = []
    monkeypatch.setattr(
        tui.plain.repl, "run_plain", lambda options, prompt: calls.append((options, prompt)) or 0
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert plain_reason() == "stdin is not a terminal"
    options = RunOptions(cwd=repo)
    assert start_interactive(options, "hi", plain=False, check=False) == 0
    assert calls == [(options, "hi")]
    assert "stdin is not a terminal; using the plain REPL" in capsys.readouterr().err


def test_demo_runs_offline_without_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.demo.tour import main as demo_main

    for name in [k for k in os.environ if k.startswith(("ANTHROPIC_", "CLAUDE_CODE_USE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    before = dict(os.environ)
    assert demo_main(["--plain", "--pace", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ccx demo — a scripted model, no API calls")
    assert "Compacted (auto)" in out and "That's the tour." in out
    assert dict(os.environ) == before
    sample = re.search(r"Sample project: (\S+)", out)
    assert sample is not None and not Path(sample.group(1)).exists()  # cleaned up


def test_missing_credentials_rules(tmp_path: Path) -> None:
    assert missing_credentials_message({}) is not None
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
    ):
        assert missing_credentials_message({name: "1"}) is None
    assert missing_credentials_message({"ANTHROPIC_API_KEY": "  "}) is not None
    remote = missing_credentials_message({"ANTHROPIC_BASE_URL": "https://gw.example.com"})
    assert remote is not None and "gw.example.com" in remote
    for url in ("http://localhost:4000", "http://127.0.0.1:8080/v1", "http://[::1]:9"):
        assert missing_credentials_message({"ANTHROPIC_BASE_URL": url}) is None
    environ = {"ANTHROPIC_BASE_URL": "http://localhost:4000"}
    assert check_credentials(tmp_path, environ) is None
    assert environ["ANTHROPIC_API_KEY"] == LOCAL_PLACEHOLDER_KEY


def test_a_key_in_the_settings_env_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text('{"env": {"ANTHROPIC_API_KEY": "sk-from-settings"}}')
    monkeypatch.setenv("CCX_CONFIG_DIR", str(config))
    environ: dict[str, str] = {}
    assert check_credentials(tmp_path, environ) is None
    assert environ == {}  # the runtime applies the settings' env itself


def test_parse_interactive_raises_instead_of_printing() -> None:
    import pytest

    from tui.cli.main import CliError, parse_interactive

    parsed = parse_interactive(["-c", "--model", "haiku", "fix it"])
    assert parsed.options.continue_session and parsed.options.model == "haiku"
    assert parsed.prompt == "fix it" and not parsed.print_mode
    with pytest.raises(CliError) as info:
        parse_interactive(["--no-such-flag"])
    assert info.value.exit_code == 2 and "no-such-flag" in info.value.message


def test_only_plain_interactive_arguments_take_the_paint_first_path(monkeypatch) -> None:
    from tui.cli import launcher

    monkeypatch.setattr(launcher, "plain_reason", lambda: None)
    assert launcher.deferrable([]) and launcher.deferrable(["-c", "--model", "opus", "hello"])
    for flag in ("-p", "--print", "--help", "--plain", "--cwd=/tmp", "--version"):
        assert not launcher.deferrable([flag])
    monkeypatch.setattr(launcher, "plain_reason", lambda: "stdout is not a terminal")
    assert not launcher.deferrable([])
