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


def test_a_stored_key_is_used_when_the_environment_has_none(ccx: Ccx) -> None:
    store(ccx)
    del ccx.env["ANTHROPIC_API_KEY"]
    ccx.api.add(text_reply("hello"), text_reply("stat"))
    run = ccx.run("-p", "hi", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert credential(ccx.api.requests[0].headers) == KEY
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
    run = ccx.run("-p", "hi")
    assert run.returncode == 0, run.stderr
    assert credential(ccx.api.requests[0].headers) == "test-key"
    refused = ccx.run("-p", "/login " + KEY)
    assert refused.returncode != 0 and "interactive ccx" in refused.stdout + refused.stderr
    out = ccx.run("-p", "/logout")
    assert "Removed the API key" in out.stdout and not path.exists()
