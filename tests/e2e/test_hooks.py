"""Hooks end to end: the real `ccx -p` with hooks in the project's settings, every event."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply

# A hook that logs its stdin (one JSON line per call) to the file given as its argument.
LOGGER = """import json, os, sys
data = json.load(sys.stdin)
data["env_project_dir"] = os.environ.get("CLAUDE_PROJECT_DIR")
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(data) + "\\n")
"""


def hook(command: str, matcher: str | None = None, **extra: Any) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **extra}]}
    if matcher is not None:
        group["matcher"] = matcher
    return group


def configure(ccx: Ccx, hooks: dict[str, list[dict[str, Any]]]) -> None:
    folder = ccx.repo / ".claude"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"hooks": hooks}))


def script(ccx: Ccx, name: str, body: str) -> str:
    """A Python hook script in the repository; the command that runs it."""
    path = ccx.repo / name
    path.write_text(body)
    return f"{sys.executable} {path}"


def logged(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tool_results(request: Any) -> list[dict[str, Any]]:
    last = request.messages[-1]
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def test_pre_tool_use_exit_2_blocks_the_command(ccx: Ccx) -> None:
    """The issue's example: matcher Bash, exit 2 on BLOCKME; `echo BLOCKME` never runs."""
    guard = script(
        ccx,
        "guard.py",
        "import json, sys\n"
        "command = json.load(sys.stdin)['tool_input'].get('command', '')\n"
        "if 'BLOCKME' in command:\n"
        "    print('commands with BLOCKME are not allowed here', file=sys.stderr)\n"
        "    sys.exit(2)\n",
    )
    log = ccx.repo / "pre.jsonl"
    configure(
        ccx,
        {
            "PreToolUse": [
                hook(guard, "Bash"),
                hook(f"{script(ccx, 'log.py', LOGGER)} {log}", "Bash"),
            ]
        },
    )
    readme = str(ccx.repo / "README.md")
    ccx.api.add(
        tool_reply(("Bash", {"command": "echo BLOCKME > blocked.txt"})),
        tool_reply(("Bash", {"command": "echo fine > fine.txt"}), ("Read", {"file_path": readme})),
        text_reply("Done."),
    )

    run = ccx.run("-p", "try it", "--output-format", "json", "--allowedTools", "Bash")

    assert run.returncode == 0, run.stderr
    assert not (ccx.repo / "blocked.txt").exists()
    assert (ccx.repo / "fine.txt").read_text() == "fine\n"
    (blocked,) = tool_results(ccx.api.requests[1])
    assert blocked["is_error"] is True
    assert "commands with BLOCKME are not allowed here" in json.dumps(blocked["content"])
    payloads = logged(log)
    assert [p["tool_input"]["command"] for p in payloads] == [
        "echo BLOCKME > blocked.txt",
        "echo fine > fine.txt",
    ]  # the Read call does not match "Bash"
    first = payloads[0]
    assert first["hook_event_name"] == "PreToolUse" and first["tool_name"] == "Bash"
    assert first["tool_use_id"].startswith("toolu_") and first["permission_mode"] == "default"
    assert first["cwd"] == str(ccx.repo) and first["env_project_dir"] == str(ccx.repo)
    assert Path(first["transcript_path"]).exists() and first["session_id"]
    assert run.json()["session_id"] == first["session_id"]


def test_pre_tool_use_json_decisions_and_updated_input(ccx: Ccx) -> None:
    """allow + updatedInput runs the rewritten call; allow does not open a protected path;
    deny refuses with its reason."""
    decide = script(
        ccx,
        "decide.py",
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "tool_input = data['tool_input']\n"
        "out = {'hookSpecificOutput': {'hookEventName': 'PreToolUse'}}\n"
        "specific = out['hookSpecificOutput']\n"
        "if data['tool_name'] == 'Read':\n"
        "    specific.update(permissionDecision='deny', permissionDecisionReason='no reading')\n"
        "elif 'one' in tool_input['command']:\n"
        "    specific.update(permissionDecision='allow', updatedInput={**tool_input,\n"
        "        'command': tool_input['command'].replace('one', 'two')})\n"
        "else:\n"
        "    specific.update(permissionDecision='allow')\n"
        "print(json.dumps(out))\n",
    )
    configure(ccx, {"PreToolUse": [hook(decide, "Bash|Read")]})
    ccx.api.add(
        tool_reply(("Bash", {"command": "echo one > out.txt"})),
        tool_reply(("Bash", {"command": "echo evil > .git/config"})),
        tool_reply(("Read", {"file_path": str(ccx.repo / "README.md")})),
        text_reply("Done."),
    )

    run = ccx.run("-p", "go", "--output-format", "json")  # default mode, no one to ask

    assert run.returncode == 0, run.stderr
    assert (ccx.repo / "out.txt").read_text() == "two\n"
    assert not (ccx.repo / ".git" / "config").exists()
    (protected,) = tool_results(ccx.api.requests[2])
    assert protected["is_error"] is True and "denied" in json.dumps(protected["content"])
    (denied,) = tool_results(ccx.api.requests[3])
    assert denied["is_error"] is True and "no reading" in json.dumps(denied["content"])


def test_prompt_post_tool_stop_and_session_end(ccx: Ccx) -> None:
    log = ccx.repo / "events.jsonl"
    logger = f"{script(ccx, 'log.py', LOGGER)} {log}"
    post = script(
        ccx,
        "post.py",
        "import json\n"
        "print(json.dumps({'decision': 'block', 'reason': 'POST-BLOCK-9',\n"
        "    'hookSpecificOutput': {'hookEventName': 'PostToolUse',\n"
        "                           'additionalContext': 'POST-CONTEXT-7'}}))\n",
    )
    stop = script(
        ccx,
        "stop.py",
        "import json, sys\n"
        "if not json.load(sys.stdin)['stop_hook_active']:\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'STOP-AGAIN-3'}))\n",
    )
    configure(
        ccx,
        {
            "UserPromptSubmit": [hook("echo PROMPT-CONTEXT-42"), hook(logger)],
            "PostToolUse": [hook(post, "Bash"), hook(logger, "*")],
            "Stop": [hook(stop), hook(logger)],
            "SessionEnd": [hook(logger)],
        },
    )
    ccx.api.add(
        tool_reply(("Bash", {"command": "echo hello"})),
        text_reply("First stop."),
        text_reply("Second stop."),
    )

    run = ccx.run("-p", "hello there", "--output-format", "json", "--allowedTools", "Bash")

    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Second stop."
    first, second, third = ccx.api.requests
    assert "PROMPT-CONTEXT-42" in first.all_text()
    assert "POST-BLOCK-9" in second.last_user_text()
    assert "POST-CONTEXT-7" in second.last_user_text()
    assert "STOP-AGAIN-3" in third.last_user_text()
    events = logged(log)
    assert [e["hook_event_name"] for e in events] == [
        "UserPromptSubmit",
        "PostToolUse",
        "Stop",
        "Stop",
        "SessionEnd",
    ]
    prompt, tool, stop_1, stop_2, end = events
    assert prompt["prompt"] == "hello there" and prompt["prompt_id"]
    assert tool["tool_input"] == {"command": "echo hello"} and tool["duration_ms"] >= 0
    assert tool["tool_response"]["output"].strip() == "hello"
    assert tool["tool_response"]["stdout"].strip() == "hello"  # Claude Code's Bash keys
    assert tool["tool_response"]["interrupted"] is False
    assert (stop_1["stop_hook_active"], stop_2["stop_hook_active"]) == (False, True)
    assert stop_1["background_tasks"] == [] and stop_1["session_crons"] == []
    assert stop_2["last_assistant_message"] == "Second stop."
    assert end["reason"] == "other" and "permission_mode" not in end


def test_prompt_blocked_and_an_unknown_event_warned(ccx: Ccx) -> None:
    configure(
        ccx,
        {
            "UserPromptSubmit": [hook("echo 'secrets do not go to the model' >&2; exit 2")],
            "PreToolUze": [hook("true")],
        },
    )
    ccx.api.add(text_reply("never"))

    run = ccx.run("-p", "my password is hunter2")

    assert run.returncode == 0  # as in Claude Code: the hook's answer is the result
    assert "secrets do not go to the model" in run.stdout
    assert "The prompt, not sent: my password is hunter2" in run.stdout
    assert "PreToolUze" in run.stderr and "does not know" in run.stderr
    assert not [r for r in ccx.api.requests if "hunter2" in r.all_text()]


def test_stop_hook_that_always_blocks_is_stopped_by_the_guard(ccx: Ccx) -> None:
    configure(ccx, {"Stop": [hook('echo \'{"decision": "block", "reason": "more"}\'')]})
    ccx.api.add(*(text_reply(f"stop {n}") for n in range(20)))

    run = ccx.run("-p", "go", "--output-format", "json")

    assert run.returncode == 0, run.stderr
    assert len(ccx.api.requests) == 9  # the first stop and 8 hook-driven continues
    assert run.json()["result"] == "stop 8"
