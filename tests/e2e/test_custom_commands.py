"""Custom slash commands end to end: `ccx -p "/name args"` with command files in the repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Ccx
from tui.fake_api import text_reply, tool_reply


def command_file(root: Path, name: str, text: str) -> Path:
    path = root / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def user_texts(request: Any) -> list[str]:
    last = request.messages[-1]
    return [b["text"] for b in last["content"] if b.get("type") == "text"]


def test_the_expanded_command_reaches_the_model(ccx: Ccx) -> None:
    """Arguments, a namespaced name, `!cmd` allowed by allowed-tools, `@file`, the turn's model."""
    commands = ccx.repo / ".claude" / "commands"
    command_file(
        commands,
        "frontend/build",
        "---\n"
        "description: Build the frontend\n"
        "argument-hint: [target] [mode]\n"
        "allowed-tools: Bash(echo:*)\n"
        "model: claude-haiku-4-5\n"
        "---\n"
        "Build $0 in mode $1 (all: $ARGUMENTS).\n"
        "Echo: !`echo SNIPPET-RAN`\n"
        "See @src/app.py\n",
    )
    ccx.api.add(text_reply("Built."))

    run = ccx.run("-p", "/frontend:build web prod", "--output-format", "json")

    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Built."
    (request,) = ccx.api.requests
    header, body, attached = user_texts(request)[-3:]
    assert "<command-name>/frontend:build</command-name>" in header
    assert "<command-args>web prod</command-args>" in header
    assert body.splitlines()[:2] == ["Build web in mode prod (all: web prod).", "Echo: SNIPPET-RAN"]
    assert "RETRY_LIMIT = 3" in attached and "src/app.py" in attached
    assert request.model == "claude-haiku-4-5"


def test_allowed_tools_hold_for_the_command_turn_only(ccx: Ccx) -> None:
    commands = ccx.repo / ".claude" / "commands"
    command_file(commands, "mk", "---\nallowed-tools: Bash(touch:*)\n---\nMake $ARGUMENTS\n")
    ccx.api.add(
        tool_reply(("Bash", {"command": "touch made.txt"})),
        text_reply("Made."),
    )
    run = ccx.run("-p", "/mk made.txt", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert (ccx.repo / "made.txt").exists()
    assert run.json()["permission_denials"] == []

    # The next turn, a plain prompt, has no such grant.
    ccx.api.add(tool_reply(("Bash", {"command": "touch again.txt"})), text_reply("Tried."))
    run = ccx.run("-c", "-p", "make again.txt", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert not (ccx.repo / "again.txt").exists()
    assert [d["tool_name"] for d in run.json()["permission_denials"]] == ["Bash"]


def test_a_shell_snippet_that_is_not_allowed_is_refused_and_nothing_is_sent(ccx: Ccx) -> None:
    commands = ccx.repo / ".claude" / "commands"
    command_file(commands, "evil", "Evil: !`touch pwned.txt && echo made`\n")
    command_file(
        commands,
        "evil2",
        "---\nallowed-tools: Bash(echo:*)\n---\n!`echo ok` then !`touch pwned.txt`\n",
    )
    for name in ("evil", "evil2"):
        run = ccx.run("-p", f"/{name}", "--output-format", "json")
        assert run.returncode == 1
        result = run.json()
        assert result["is_error"] is True
        assert "shell command permission check failed" in result["result"]
        assert "touch pwned.txt" in result["result"]
    assert not (ccx.repo / "pwned.txt").exists()
    assert ccx.api.requests == []


def test_a_deny_rule_beats_the_command_s_allowed_tools(ccx: Ccx) -> None:
    settings = ccx.repo / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(touch *)"]}}))
    command_file(
        ccx.repo / ".claude" / "commands", "t", "---\nallowed-tools: Bash\n---\n!`touch x.txt`\n"
    )
    run = ccx.run("-p", "/t", "--output-format", "json")
    assert run.returncode == 1 and "deny rule" in run.json()["result"]
    assert not (ccx.repo / "x.txt").exists()


def test_user_commands_listed_in_init_and_malformed_files_skipped(ccx: Ccx) -> None:
    user = ccx.config.parent / "home" / ".claude" / "commands"
    command_file(user, "greet", "---\ndescription: Say hello\n---\nGreet $ARGUMENTS warmly\n")
    project = ccx.repo / ".claude" / "commands"
    command_file(project, "broken", "---\ndescription: [unclosed\n  - nope: [\n---\nbody\n")
    (project / "binary.md").write_bytes(b"\xff\xfe not utf-8")
    command_file(project, "compact", "a project file named like a built-in command\n")
    ccx.api.add(text_reply("Hello!"))

    run = ccx.run("-p", "/greet the team", "--output-format", "stream-json", "--verbose")

    assert run.returncode == 0, run.stderr
    (init,) = [e for e in run.events() if e.get("subtype") == "init"]
    assert "greet" in init["slash_commands"] and "compact" in init["slash_commands"]
    assert "broken" not in init["slash_commands"] and "binary" not in init["slash_commands"]
    assert init["slash_commands"].count("compact") == 1
    warnings = [json.dumps(e) for e in run.events() if e.get("subtype") == "ccx_notice"]
    assert any("broken.md has malformed frontmatter" in w for w in warnings)
    assert any("binary.md is not UTF-8" in w for w in warnings)
    (request,) = ccx.api.requests
    assert user_texts(request)[-1] == "Greet the team warmly"
