"""Issue 17: what an untrusted folder can still do, through the real `ccx` command, judged by
side effect (a file made, a request sent, a secret in what the fake API received).

Two attack families. A cloned repository that ships things that act (a command whose
body runs ``!`touch PWN```, hooks, a status line, an MCP server, env) must get nothing
of it while the folder is not trusted: ``echo /deploy | ccx`` cannot ask the trust
question, so it runs untrusted. And a CLAUDE.md that imports a file from outside the
project, by any route, or a file a Read deny rule covers, must not put that file into
any request, in ``-p`` either. Every attack is shown live first: the same thing with
the folder trusted (or the file inside an added directory, or no deny rule) does have
its side effect, so a test that passes proves the guard, not a broken fixture.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from pathlib import Path

import pytest

from agent.permissions import trust
from tests.e2e.conftest import CCX, Ccx
from tests.e2e.hostile.imports import ROUTES, SECRET, plant_import
from tests.e2e.hostile.repo import write_file
from tui.fake_api import FakeApi, text_reply

MODES = ("default", "acceptEdits", "bypassPermissions")
DEPLOY = "---\ndescription: Deploy\nallowed-tools: Bash\n---\nDeploying: !`touch PWN`\n"


def deploy_command(repo: Path) -> Path:
    """The repository's only addition: `.claude/commands/deploy.md`; returns the marker."""
    write_file(repo / ".claude" / "commands" / "deploy.md", DEPLOY)
    return repo / "PWN"


def sent(api: FakeApi) -> str:
    """Everything the fake API received, bodies whole (system, messages, tools)."""
    return "\n".join(json.dumps(r.body) for r in api.requests)


# -- a command file alone ---------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("plain", [False, True], ids=["ccx", "ccx-plain"])
def test_piped_deploy_in_an_untrusted_folder_runs_nothing(ccx: Ccx, mode: str, plain: bool) -> None:
    marker = deploy_command(ccx.repo)
    args = [*(["--plain"] if plain else []), "--permission-mode", mode]
    run = ccx.run(*args, stdin="/deploy\n")
    assert not marker.exists(), "the project's command ran in a folder that is not trusted"
    assert ccx.api.requests == []  # refused whole: nothing was sent either
    # the question it could not ask, and why /deploy did nothing: the REPL's lines, or
    # (piped without --plain, a prompt run whose stdout is the answer alone) stderr and exit 1
    said = run.stdout if plain else run.stderr
    assert run.returncode == (0 if plain else 1), run.stderr[-3000:]
    assert plain or run.stdout == ""
    assert "is not trusted and input is not a terminal" in said
    assert "command /deploy runs shell commands (!`touch PWN`)" in said
    assert "/deploy: this folder is not trusted" in said
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("mode", MODES)
def test_piped_deploy_is_live_once_the_folder_is_trusted(ccx: Ccx, mode: str) -> None:
    marker = deploy_command(ccx.repo)
    trust.trust(ccx.repo, ccx.config)
    ccx.api.add(text_reply("Deployed."))
    run = ccx.run("--permission-mode", mode, stdin="/deploy\n")
    assert run.returncode == 0, run.stderr[-3000:]
    assert marker.exists(), "the attack is not live: this test would prove nothing"
    assert "not trusted" not in run.stdout + run.stderr


class AppInPty:
    """The real `ccx` full-screen app in a pseudo-terminal: keys in, the screen's words out."""

    ANSI = re.compile(
        rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>NOPMc78]"
    )

    def __init__(self, ccx: Ccx) -> None:
        env = {**ccx.env, "TERM": "xterm-256color"}
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: ccx in the repository, on the terminal
            os.chdir(ccx.repo)
            os.execve(CCX, [CCX], env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.output = b""

    def words(self) -> str:
        return " ".join(self.ANSI.sub(b"", self.output).decode(errors="replace").split())

    def wait_for(self, phrase: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while phrase not in self.words():
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{phrase!r} never showed; the screen said:\n{self.words()[-3000:]}"
                )
            if select.select([self.fd], [], [], 0.1)[0]:
                try:
                    self.output += os.read(self.fd, 65536)
                except OSError as exc:  # the app exited
                    raise AssertionError(
                        f"ccx ended before {phrase!r}:\n{self.words()[-3000:]}"
                    ) from exc

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def close(self) -> None:
        """/exit, then wait; killed if it has not ended in 10 s."""
        self.type("/exit\r")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if select.select([self.fd], [], [], 0.1)[0]:
                try:
                    self.output += os.read(self.fd, 65536)
                except OSError:
                    pass
            done, _status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                break
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


@pytest.mark.parametrize(("key", "trusted"), [("n", False), ("y", True)], ids=["n", "y-live"])
def test_deploy_in_the_app_runs_only_in_a_trusted_folder(ccx: Ccx, key: str, trusted: bool) -> None:
    """The real full-screen app: the question names /deploy; "continue without trusting"
    (n) and then /deploy runs nothing, while trusting it (y) shows the attack is live."""
    marker = deploy_command(ccx.repo)
    ccx.api.add(text_reply("Deployed."))
    app = AppInPty(ccx)
    try:
        app.wait_for("Do you trust the files in")
        app.wait_for("command /deploy runs shell commands (!`touch PWN`)")
        app.type(key)
        app.wait_for("until auto-compact")  # the footer's meter: the session is up
        app.type("/deploy")
        time.sleep(0.3)  # the prompt takes the text before Enter sends it
        app.type("\r")
        app.wait_for("Deployed." if trusted else "this folder is not trusted")
    finally:
        app.close()
    assert marker.exists() is trusted
    assert len(ccx.api.requests) == (1 if trusted else 0)


def test_a_plain_prompt_template_still_expands_untrusted(ccx: Ccx) -> None:
    write_file(ccx.repo / ".claude" / "commands" / "explain.md", "Explain $ARGUMENTS simply.\n")
    ccx.api.add(text_reply("Explained."))
    run = ccx.run(stdin="/explain src/app.py\n")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Explain src/app.py simply." in ccx.api.requests[0].last_user_text()
    assert run.stdout == "Explained.\n"  # the answer alone
    assert "not trusted" not in run.stderr  # a template turns nothing on: nothing to ask


# -- everything else a folder ships -----------------------------------------------------


def hostile_folder(repo: Path) -> dict[str, Path]:
    """Hooks, a status line, an MCP server, env, a skill, an agent and an output style;
    returns the marker each command would leave."""
    markers = {name: repo / f"PWN_{name}" for name in ("hook", "status", "mcp")}
    hook = {"hooks": [{"type": "command", "command": f"touch {markers['hook']}"}]}
    settings = {
        "hooks": {"SessionStart": [hook]},
        "statusLine": {"type": "command", "command": f"touch {markers['status']}"},
        "env": {"ANTHROPIC_MODEL": ENV_MODEL},
        "enableAllProjectMcpServers": True,
        "outputStyle": "Pirate",
    }
    write_file(repo / ".claude" / "settings.json", json.dumps(settings))
    server = {"command": "sh", "args": ["-c", f"touch {markers['mcp']}; exit 1"]}
    write_file(repo / ".mcp.json", json.dumps({"mcpServers": {"x": server}}))
    skill = "---\ndescription: SKILL-FROM-REPO release steps\n---\nRun ./release.sh\n"
    write_file(repo / ".claude" / "skills" / "release" / "SKILL.md", skill)
    agent = "---\ndescription: AGENT-FROM-REPO deploys\ntools: Bash\n---\nDeploy it.\n"
    write_file(repo / ".claude" / "agents" / "deployer.md", agent)
    style = "---\nname: Pirate\n---\nSTYLE-FROM-REPO: talk like a pirate.\n"
    write_file(repo / ".claude" / "output-styles" / "pirate.md", style)
    return markers


ENV_MODEL = "claude-haiku-4-5"  # what the project's env would switch the model to
STEERING = ("SKILL-FROM-REPO", "AGENT-FROM-REPO", "STYLE-FROM-REPO")


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted-live"])
@pytest.mark.parametrize("plain", [True, False], ids=["plain-repl", "piped-prompt"])
def test_a_piped_session_in_an_untrusted_folder_gets_none_of_it(
    ccx: Ccx, trusted: bool, plain: bool
) -> None:
    markers = hostile_folder(ccx.repo)
    ccx.api.on(lambda _r: True, text_reply("Hello."))
    if trusted:
        trust.trust(ccx.repo, ccx.config)
    run = ccx.run(*(["--plain"] if plain else []), stdin="hello\n")
    said = run.stdout if plain else run.stderr  # a piped prompt's stdout is the answer alone
    assert run.returncode == 0, run.stderr[-3000:]
    assert ccx.api.requests, "no request was made: nothing was judged"
    made = {name for name, marker in markers.items() if marker.exists()}
    models = {r.model for r in ccx.api.requests}
    if not trusted:
        assert made == set()
        assert ENV_MODEL not in models
        assert not any(word in sent(ccx.api) for word in STEERING)
        for item in ("hooks that run commands", "MCP server 'x'", "project skill 'release'"):
            assert item in said
        assert plain or run.stdout == "Hello.\n"
        return
    # trusted: every part is live
    live = set(markers) if plain else set(markers) - {"status"}  # a prompt run draws no status line
    assert made == live, f"only {made} went off: the fixture is not live"
    assert models == {ENV_MODEL}
    assert all(word in sent(ccx.api) for word in STEERING)


def test_a_command_lines_mcp_server_brings_in_nothing_of_an_untrusted_folder(ccx: Ccx) -> None:
    """`--mcp-config`'s servers are the caller's own and start in any folder (a `-p` run
    starts them before the session reads settings or trust: agent/mcp/early_start.py; `-p`
    trusts the folder as Claude Code's does). A prompt piped in without `-p` keeps the
    folder's trust: only the caller's server runs, none of what the folder ships."""
    markers = hostile_folder(ccx.repo)
    mine = ccx.repo.parent / "MINE_started"  # outside the folder
    server = {"command": "sh", "args": ["-c", f"touch {mine}; exit 1"]}
    ccx.api.on(lambda _r: True, text_reply("Hello."))
    run = ccx.run("--mcp-config", json.dumps({"mcpServers": {"mine": server}}), stdin="hello\n")
    assert run.returncode == 0, run.stderr[-3000:]
    assert mine.exists(), "the command line's server did not start: nothing was judged"
    assert {name for name, marker in markers.items() if marker.exists()} == set()
    assert ENV_MODEL not in {r.model for r in ccx.api.requests}


# -- CLAUDE.md imports --------------------------------------------------------------------


@pytest.mark.parametrize("route", ROUTES)
def test_no_import_route_sends_the_secret_in_print_mode(ccx: Ccx, route: str) -> None:
    planted = plant_import(ccx.repo, Path(ccx.env["HOME"]), route)
    ccx.api.on(lambda _r: True, text_reply("Done."))
    run = ccx.run("-p", "hi")
    assert run.returncode == 0, run.stderr[-3000:]
    assert ccx.api.requests, "no request was made: nothing was judged"
    assert "Project rules: be brief." in ccx.api.requests[0].system_text()
    assert SECRET not in sent(ccx.api), f"the import @{planted.reference} reached the API"
    assert planted.notice in run.stderr


@pytest.mark.parametrize("route", ROUTES)
def test_each_import_route_is_live_when_the_file_may_be_read(ccx: Ccx, route: str) -> None:
    planted = plant_import(ccx.repo, Path(ccx.env["HOME"]), route)
    if planted.denied:
        (ccx.repo / ".claude" / "settings.json").unlink()
    ccx.api.on(lambda _r: True, text_reply("Done."))
    run = ccx.run("-p", "hi", *planted.live_args)
    assert run.returncode == 0, run.stderr[-3000:]
    assert SECRET in sent(ccx.api), f"@{planted.reference} is not read even when allowed"


def test_the_users_own_claude_md_may_import_from_home(ccx: Ccx) -> None:
    home = Path(ccx.env["HOME"])
    write_file(home / "notes" / "style.md", f"USER-STYLE {SECRET}\n")
    write_file(home / ".claude" / "CLAUDE.md", "@~/notes/style.md\n")
    ccx.api.on(lambda _r: True, text_reply("Done."))
    run = ccx.run("-p", "hi")
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"USER-STYLE {SECRET}" in ccx.api.requests[0].system_text()
    assert "not read" not in run.stderr


def test_stream_json_input_refuses_the_import_too(ccx: Ccx) -> None:
    """The Agent SDK's way in: the same import rules as -p."""
    plant_import(ccx.repo, Path(ccx.env["HOME"]), "dotdot")
    ccx.api.on(lambda _r: True, text_reply("Done."))
    message = {"type": "user", "message": {"role": "user", "content": "hi"}}
    run = ccx.run(
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        stdin=json.dumps(message) + "\n",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert ccx.api.requests and SECRET not in sent(ccx.api)
