"""The key /login stores, through the `ccx` command: used by `ccx -p` when the environment has
none, named (never shown) by `ccx doctor` and /status; the environment's key wins; `-p /login`
says where to type it; /logout removes it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.conftest import CCX, Ccx
from tui.fake_api import text_reply

KEY = "sk-ant-api03-" + "k" * 40


def store(ccx: Ccx) -> Path:
    path = ccx.config / "credentials.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"apiKey": KEY}))
    path.chmod(0o600)
    return path


def credential(headers: dict[str, str]) -> str:
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def init_line(stdout: str) -> dict[str, object]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return next(line for line in lines if line.get("subtype") == "init")


def test_a_stored_key_is_used_when_the_environment_has_none(ccx: Ccx) -> None:
    store(ccx)
    del ccx.env["ANTHROPIC_API_KEY"]
    ccx.api.add(text_reply("hello"), text_reply("stat"))
    run = ccx.run("-p", "hi", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0, run.stderr
    assert credential(ccx.api.requests[0].headers) == KEY
    assert init_line(run.stdout)["apiKeySource"] == "/login managed key"  # Claude Code's words
    status = ccx.run("-p", "/status")
    assert "key stored by /login" in status.stdout and KEY not in status.stdout
    doctor = subprocess.run(
        [CCX, "doctor"], cwd=ccx.repo, env=ccx.env, capture_output=True, text=True, timeout=60
    )
    key_line = next(line for line in doctor.stdout.splitlines() if line[2:].startswith("key"))
    assert key_line.startswith("✓") and "stored by /login" in key_line and KEY not in doctor.stdout


def test_the_environments_key_wins_and_logout_removes_the_stored_one(ccx: Ccx) -> None:
    path = store(ccx)
    ccx.api.add(text_reply("hello"))
    run = ccx.run("-p", "hi", "--output-format", "stream-json", "--verbose")
    assert run.returncode == 0, run.stderr
    assert credential(ccx.api.requests[0].headers) == "test-key"
    assert init_line(run.stdout)["apiKeySource"] == "ANTHROPIC_API_KEY"
    refused = ccx.run("-p", "/login " + KEY)
    assert refused.returncode != 0 and "interactive ccx" in refused.stdout + refused.stderr
    out = ccx.run("-p", "/logout")
    assert "Removed the API key" in out.stdout and not path.exists()


def test_ccx_without_a_key_at_a_terminal_offers_to_log_in(tmp_path: Path, ccx: Ccx) -> None:
    import os
    import pty
    import select
    import time

    env = {k: v for k, v in ccx.env.items() if k != "ANTHROPIC_API_KEY"}
    env["ANTHROPIC_BASE_URL"] = "https://gateway.invalid"  # remote: a key is needed
    pid, fd = pty.fork()
    if pid == 0:  # the child: ccx on a terminal
        os.chdir(ccx.repo)
        os.execve(CCX, [CCX, "--plain"], env)
    seen = b""

    def until(text: bytes, times: int = 1, timeout: float = 30) -> None:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while seen.count(text) < times:
            assert time.monotonic() < deadline, seen.decode(errors="replace")
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    seen += os.read(fd, 4096)
                except OSError:
                    break
        assert seen.count(text) >= times, seen.decode(errors="replace")

    try:
        until(b"key: ")
        os.write(fd, b"sk-ant-bad\r")
        until(b"Not stored:")
        # Typed only once the second prompt has turned echo off: the prompt discards what
        # was typed before it (as getpass does), and a key typed earlier would show.
        until(b"key: ", times=2)
        os.write(fd, KEY.encode() + b"\r")
        until(b"API key stored in")
        until(b"/help lists the commands")  # the session started
    finally:
        try:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)
    assert KEY.encode() not in seen  # never echoed
    assert json.loads((ccx.config / "credentials.json").read_text()) == {"apiKey": KEY}
