"""Issue 21: a Claude Code user's settings files, through the real `ccx -p` and the fake API.

HOME is a temporary folder (the Ccx fixture's), so ``~/.claude/settings.json``
here is the test's own; the managed policy file is moved with
``CCX_MANAGED_SETTINGS_FILE``. Each behaviour is judged by what the fake API
received or by a file a command made.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply


def write_json(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def user_settings(ccx: Ccx, data: dict[str, Any]) -> Path:
    return write_json(Path(ccx.env["HOME"]) / ".claude" / "settings.json", data)


def managed_settings(ccx: Ccx, data: dict[str, Any]) -> Path:
    return write_json(Path(ccx.env["CCX_MANAGED_SETTINGS_FILE"]), data)


def tool_result_text(ccx: Ccx, request: int = 1) -> str:
    blocks = ccx.api.requests[request].body["messages"][-1]["content"]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    return json.dumps(results)


def marker_hook(marker: Path) -> dict[str, Any]:
    command = f"{sys.executable} -c \"open({str(marker)!r}, 'a').write('ran')\""
    return {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}


def test_the_model_from_claude_codes_user_settings_is_sent(ccx: Ccx) -> None:
    user_settings(ccx, {"model": "claude-haiku-4-5"})
    ccx.api.add(text_reply("ok"))
    run = ccx.run("-p", "hi")
    assert run.returncode == 0, run.stderr
    assert ccx.api.requests[0].body["model"] == "claude-haiku-4-5"


def test_ccx_own_user_settings_win_over_claude_codes(ccx: Ccx) -> None:
    user_settings(ccx, {"model": "claude-haiku-4-5"})
    write_json(ccx.config / "settings.json", {"model": "claude-sonnet-4-5"})
    ccx.api.add(text_reply("ok"))
    assert ccx.run("-p", "hi").returncode == 0
    assert ccx.api.requests[0].body["model"] == "claude-sonnet-4-5"


def test_the_user_settings_env_reaches_bash(ccx: Ccx) -> None:
    user_settings(ccx, {"env": {"CCX_TEST_GREETING": "hello-from-settings"}})
    ccx.api.add(tool_reply(("Bash", {"command": "echo $CCX_TEST_GREETING"})), text_reply("done"))
    run = ccx.run("-p", "greet", "--allowedTools", "Bash(echo *)")
    assert run.returncode == 0, run.stderr
    assert "hello-from-settings" in tool_result_text(ccx)


def test_a_user_hook_runs_and_disable_all_hooks_stops_it(ccx: Ccx, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    user_settings(ccx, {"hooks": marker_hook(marker)})
    ccx.api.add(text_reply("ok"), text_reply("ok"))
    assert ccx.run("-p", "hi").returncode == 0
    assert marker.read_text() == "ran"
    marker.unlink()
    user_settings(ccx, {"hooks": marker_hook(marker), "disableAllHooks": True})
    assert ccx.run("-p", "hi").returncode == 0
    assert not marker.exists(), "disableAllHooks did not stop the user's hook"


def test_additional_directories_let_read_outside_the_project(ccx: Ccx, tmp_path: Path) -> None:
    outside = tmp_path / "shared-docs"
    outside.mkdir()
    (outside / "notes.txt").write_text("OUTSIDE-SECRET-NOTE\n")
    read = tool_reply(("Read", {"file_path": str(outside / "notes.txt")}))
    ccx.api.add(read, text_reply("no"), read, text_reply("yes"))
    assert ccx.run("-p", "read it").returncode == 0
    assert "OUTSIDE-SECRET-NOTE" not in tool_result_text(ccx, 1)  # refused without the key
    user_settings(ccx, {"permissions": {"additionalDirectories": [str(outside)]}})
    assert ccx.run("-p", "read it").returncode == 0
    assert "OUTSIDE-SECRET-NOTE" in tool_result_text(ccx, 3)


def test_managed_deny_beats_the_projects_allow(ccx: Ccx) -> None:
    write_json(ccx.repo / ".claude" / "settings.json", {"permissions": {"allow": ["Bash"]}})
    marker = ccx.repo / "made-by-bash"
    touch = tool_reply(("Bash", {"command": f"touch {marker}"}))
    ccx.api.add(touch, text_reply("done"), touch, text_reply("done"))
    assert ccx.run("-p", "make it").returncode == 0
    assert marker.exists(), "the project's allow rule did not let Bash run: proves nothing"
    marker.unlink()
    managed_settings(ccx, {"permissions": {"deny": ["Bash(touch *)"]}})
    assert ccx.run("-p", "make it").returncode == 0
    assert not marker.exists(), "the managed deny rule did not win over the project's allow"


def test_an_unknown_key_is_named_once(ccx: Ccx) -> None:
    user_settings(ccx, {"model": "claude-haiku-4-5", "fancyNewKey": 1, "spinnerVerbs": []})
    ccx.api.add(text_reply("ok"))
    run = ccx.run("-p", "hi")
    assert run.returncode == 0
    assert run.stderr.count("fancyNewKey") == 1, run.stderr
    assert "unknown: fancyNewKey" in run.stderr
    assert "not supported by ccx: spinnerVerbs" in run.stderr


def test_bypass_refused_when_the_settings_disable_it(ccx: Ccx) -> None:
    marker = ccx.repo / "bypassed"
    touch = tool_reply(("Bash", {"command": f"touch {marker}"}))
    ccx.api.add(touch, text_reply("done"), touch, text_reply("done"))
    assert ccx.run("-p", "go", "--permission-mode", "bypassPermissions").returncode == 0
    assert marker.exists(), "bypass did not run the command: this test would prove nothing"
    marker.unlink()
    user_settings(ccx, {"permissions": {"disableBypassPermissionsMode": "disable"}})
    run = ccx.run("-p", "go", "--dangerously-skip-permissions")
    assert run.returncode == 0
    assert not marker.exists()
    assert "Bypass permissions mode is turned off" in run.stderr


def test_api_key_helper_gives_the_key(ccx: Ccx, tmp_path: Path) -> None:
    del ccx.env["ANTHROPIC_API_KEY"]
    count = tmp_path / "helper-runs"
    helper = f"echo run >> {count}; echo sk-from-helper-123"
    user_settings(ccx, {"apiKeyHelper": helper})
    ccx.api.add(text_reply("ok"))
    run = ccx.run("-p", "hi")
    assert run.returncode == 0, run.stderr
    headers = ccx.api.requests[0].headers  # the SDK sends a key as a bearer token
    assert "sk-from-helper-123" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
    assert count.read_text().count("run") == 1


def test_a_failing_api_key_helper_is_reported(ccx: Ccx) -> None:
    del ccx.env["ANTHROPIC_API_KEY"]
    user_settings(ccx, {"apiKeyHelper": "echo vault is locked >&2; exit 3"})
    run = ccx.run("-p", "hi")
    assert run.returncode == 1
    assert "apiKeyHelper exited with status 3: vault is locked" in run.stderr
    assert ccx.api.requests == []
    assert "Traceback" not in run.stderr


def test_co_author_line_follows_include_co_authored_by(ccx: Ccx) -> None:
    shutil.rmtree(ccx.repo / ".git")
    subprocess.run(["git", "init", "-q", str(ccx.repo)], check=True)  # a real repository
    ccx.api.add(text_reply("ok"), text_reply("ok"))
    assert ccx.run("-p", "hi").returncode == 0
    system = json.dumps(ccx.api.requests[0].body["system"])
    assert "Co-Authored-By: Claude <noreply@anthropic.com>" in system
    user_settings(ccx, {"includeCoAuthoredBy": False})
    assert ccx.run("-p", "hi").returncode == 0
    assert "Co-Authored-By" not in json.dumps(ccx.api.requests[1].body["system"])


def test_old_transcripts_are_cleaned_up_at_start(ccx: Ccx) -> None:
    ccx.api.add(text_reply("ok"), text_reply("ok"))
    assert ccx.run("-p", "first").returncode == 0
    (old,) = ccx.transcripts()
    month_ago = time.time() - 10 * 86400
    os.utime(old, (month_ago, month_ago))
    user_settings(ccx, {"cleanupPeriodDays": 20})
    assert ccx.run("-p", "second").returncode == 0
    assert old.exists(), "a 10-day-old transcript went with a 20-day period"
    user_settings(ccx, {"cleanupPeriodDays": 5})
    ccx.api.add(text_reply("ok"))
    assert ccx.run("-p", "third").returncode == 0
    assert not old.exists()
    assert len(ccx.transcripts()) == 2  # the second and the third stay


def test_config_shows_each_value_and_its_file(ccx: Ccx) -> None:
    user = user_settings(ccx, {"model": "claude-haiku-4-5", "respectGitignore": False})
    write_json(ccx.repo / ".claude" / "settings.local.json", {"permissions": {"deny": ["Read"]}})
    run = ccx.run("-p", "/config")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), run.stdout
    model = next(line for line in lines if line.strip().startswith("model "))
    assert "claude-haiku-4-5" in model and "~/.claude/settings.json" in model
    deny = next(line for line in lines if "permissions.deny" in line)
    assert ".claude/settings.local.json" in deny
    assert str(user) not in run.stdout  # shown as ~/.claude/settings.json
    status = ccx.run("-p", "/status")
    assert "claude-haiku-4-5 (from ~/.claude/settings.json)" in status.stdout
    assert all(len(line) <= 80 for line in status.stdout.splitlines())
