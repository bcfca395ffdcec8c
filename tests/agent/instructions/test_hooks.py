from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from agent.instructions.hooks import EVENTS, HookRunner, additional_context_text
from agent.permissions.settings import load_settings


def runner(tmp_path: Path, hooks: dict[str, Any]) -> HookRunner:
    return HookRunner(hooks, tmp_path, "sess-1", tmp_path / "sess-1.jsonl")


def group(command: str, matcher: str | None = None, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **extra}]}
    if matcher is not None:
        entry["matcher"] = matcher
    return entry


async def test_stdin_json_and_environment(tmp_path: Path) -> None:
    out = tmp_path / "stdin.json"
    env_out = tmp_path / "env.txt"
    command = f'cat > {out}; printf %s "$CLAUDE_PROJECT_DIR" > {env_out}'
    hooks = runner(tmp_path, {"PreCompact": [group(command, "manual")]})

    outcome = await hooks.run(
        "PreCompact", "manual", {"trigger": "manual", "custom_instructions": "keep API notes"}
    )

    assert outcome.ran == 1 and not outcome.blocked and outcome.messages == []
    assert json.loads(out.read_text()) == {
        "session_id": "sess-1",
        "transcript_path": str(tmp_path / "sess-1.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "PreCompact",
        "trigger": "manual",
        "custom_instructions": "keep API notes",
    }
    assert env_out.read_text() == str(tmp_path)


@pytest.mark.parametrize(
    ("matcher", "value", "runs"),
    [
        (None, "auto", True),
        ("", "auto", True),
        ("*", "manual", True),
        ("auto", "auto", True),
        ("auto", "manual", False),
        ("manual|auto", "auto", True),
        ("startup|resume", "compact", False),
        ("res.*", "resume", True),  # a regular expression
        ("^comp", "clear", False),
        ("(oops", "(oops", True),  # an invalid regex is compared as a plain name
        ("auto", None, True),  # an event without a matcher value runs every group
    ],
)
async def test_matcher_forms(
    tmp_path: Path, matcher: str | None, value: str | None, runs: bool
) -> None:
    hooks = runner(tmp_path, {"SessionStart": [group("true", matcher)]})
    assert hooks.has("SessionStart", value) is runs
    outcome = await hooks.run("SessionStart", value, {"source": value})
    assert outcome.ran == (1 if runs else 0)


async def test_other_events_and_no_hooks(tmp_path: Path) -> None:
    hooks = runner(tmp_path, {"PostCompact": [group("true")]})
    outcome = await hooks.run("PreCompact", "auto", {})
    assert outcome.ran == 0 and outcome.messages == [] and not outcome.blocked


async def test_exit_2_blocks_precompact_with_stderr_reason(tmp_path: Path) -> None:
    hooks = runner(tmp_path, {"PreCompact": [group("echo 'not now: deploying' >&2; exit 2")]})
    outcome = await hooks.run("PreCompact", "auto", {"trigger": "auto"})
    assert outcome.blocked and outcome.block_reason == "not now: deploying"


@pytest.mark.parametrize(
    ("stdout", "reason"),
    [
        ({"decision": "block", "reason": "tests running"}, "tests running"),
        ({"continue": False, "stopReason": "frozen"}, "frozen"),
    ],
)
async def test_json_output_blocks_precompact(
    tmp_path: Path, stdout: dict[str, Any], reason: str
) -> None:
    command = f"echo '{json.dumps(stdout)}'"
    hooks = runner(tmp_path, {"PreCompact": [group(command)]})
    outcome = await hooks.run("PreCompact", "manual", {})
    assert outcome.blocked and outcome.block_reason == reason


async def test_exit_2_does_not_block_session_start(tmp_path: Path) -> None:
    hooks = runner(tmp_path, {"SessionStart": [group("echo nope >&2; exit 2")]})
    outcome = await hooks.run("SessionStart", "startup", {"source": "startup"})
    assert not outcome.blocked
    assert len(outcome.messages) == 1 and "nope" in outcome.messages[0]


async def test_other_failures_are_reported_not_blocking(tmp_path: Path) -> None:
    hooks = runner(tmp_path, {"PreCompact": [group("echo broken >&2; exit 3")]})
    outcome = await hooks.run("PreCompact", "auto", {})
    assert not outcome.blocked and outcome.ran == 1
    assert outcome.messages == [
        "PreCompact hook `echo broken >&2; exit 3` failed with exit code 3: broken"
    ]


async def test_session_start_additional_context(tmp_path: Path) -> None:
    structured = {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "from json"},
        "systemMessage": "hello user",
    }
    hooks = runner(
        tmp_path,
        {
            "SessionStart": [
                group("echo 'branch: main'; echo 'open issues: 3'", "startup|resume"),
                group(f"echo '{json.dumps(structured)}'"),
                group("echo '{not json'"),  # looks like JSON but is not: plain text
                group("echo ignored; exit 1"),  # a failed hook's stdout is not context
            ]
        },
    )
    outcome = await hooks.run("SessionStart", "startup", {"source": "startup"})
    assert sorted(outcome.additional_context) == sorted(
        ["branch: main\nopen issues: 3", "from json", "{not json"]
    )
    assert "hello user" in outcome.messages
    assert outcome.ran == 4
    text = additional_context_text("SessionStart", outcome)
    assert text.startswith("SessionStart hook output:\n") and "from json" in text


async def test_precompact_stdout_is_not_context(tmp_path: Path) -> None:
    hooks = runner(tmp_path, {"PreCompact": [group("echo chatter")]})
    outcome = await hooks.run("PreCompact", "auto", {})
    assert outcome.additional_context == [] and not outcome.blocked


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = f"sleep 30 & echo $$ $! > {pids}; wait"
    hooks = runner(tmp_path, {"PreCompact": [group(command, timeout=0.5)]})
    started = time.monotonic()
    outcome = await hooks.run("PreCompact", "auto", {})
    assert time.monotonic() - started < 3
    assert not outcome.blocked and outcome.ran == 0
    assert len(outcome.messages) == 1 and "timed out after 0.5 s" in outcome.messages[0]
    for pid in map(int, pids.read_text().split()):
        deadline = time.monotonic() + 2
        while not _gone(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _gone(pid), pid


def rendezvous(folder: Path, name: str, count: int) -> str:
    """A command that checks in, waits (up to 10 s) for ``count`` check-ins, then prints how many it saw."""
    wait = f'for i in $(seq 200); do [ "$(ls {folder} | wc -l)" -ge {count} ] && break; sleep 0.05; done'
    return f"touch {folder}/{name}; {wait}; echo {name} $(ls {folder} | wc -l)"


async def test_matching_hooks_run_concurrently(tmp_path: Path) -> None:
    """Each hook waits for all three to check in: run one after another, the first sees only itself.

    The wall time of three 0.4 s hooks is measured by bench/speed_targets.py.
    """
    folder = tmp_path / "checked-in"
    folder.mkdir()
    hooks = runner(
        tmp_path,
        {
            "SessionStart": [
                group(rendezvous(folder, "one", 3)),
                group(rendezvous(folder, "two", 3), "startup"),
                {"hooks": [{"type": "command", "command": rendezvous(folder, "three", 3)}]},
            ]
        },
    )
    outcome = await hooks.run("SessionStart", "startup", {"source": "startup"})
    assert sorted(outcome.additional_context) == ["one 3", "three 3", "two 3"]


async def test_identical_commands_run_once(tmp_path: Path) -> None:
    log = tmp_path / "log"
    command = f"echo x >> {log}"
    hooks = runner(tmp_path, {"PostCompact": [group(command), group(command, "auto")]})
    outcome = await hooks.run("PostCompact", "auto", {"trigger": "auto", "compact_summary": "s"})
    assert outcome.ran == 1 and log.read_text() == "x\n"


def test_bad_configuration_is_reported_not_raised(tmp_path: Path) -> None:
    hooks = runner(
        tmp_path,
        {
            "PreCompact": "echo not a list",
            "SessionStart": [
                "not an object",
                {"matcher": 5, "hooks": [{"type": "command", "command": "true"}]},
                {"matcher": "startup"},
                {"hooks": [{"type": "command"}, {"type": "prompt", "prompt": "x"}, 7]},
                {"hooks": [{"type": "command", "command": "true", "timeout": "soon"}]},
                {"matcher": "(", "hooks": [{"type": "command", "command": "true"}]},
            ],
        },
    )
    assert len(hooks.warnings) == 9
    assert any("hooks.PreCompact" in w for w in hooks.warnings)
    assert not hooks.has("PreCompact")
    # the group with a bad timeout still runs (with the default), as does the bad regex one
    assert [g.commands[0].timeout for g in hooks.groups["SessionStart"]] == [60.0, 60.0]


def test_hooks_value_of_the_wrong_type(tmp_path: Path) -> None:
    hooks = runner(tmp_path, ["not", "a", "dict"])  # type: ignore[arg-type]
    assert hooks.groups == {} and len(hooks.warnings) == 1


async def test_missing_command_and_bad_cwd_do_not_raise(tmp_path: Path) -> None:
    hooks = runner(tmp_path, {"PreCompact": [group("definitely-not-a-command-xyz")]})
    outcome = await hooks.run("PreCompact", "auto", {})
    assert not outcome.blocked and len(outcome.messages) == 1
    assert "exit code 127" in outcome.messages[0]
    gone = HookRunner({"PreCompact": [group("true")]}, tmp_path / "nope", "s", tmp_path / "t")
    outcome = await gone.run("PreCompact", "auto", {})
    assert outcome.ran == 0 and "could not be started" in outcome.messages[0]


async def test_cancelling_the_run_kills_hooks(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    hooks = runner(tmp_path, {"PreCompact": [group(f"echo $$ > {pids}; sleep 30")]})
    task = asyncio.create_task(hooks.run("PreCompact", "auto", {}))
    deadline = time.monotonic() + 3
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pid = int(pids.read_text())
    assert _gone(pid)


def test_an_unknown_event_is_a_warning_not_silence(tmp_path: Path) -> None:
    hooks = runner(tmp_path, {"PreToolUze": [group("true")], "Stop": [group("true")]})
    assert hooks.has("Stop") and not hooks.has("PreToolUze")
    (warning,) = hooks.warnings
    assert "PreToolUze" in warning and "does not know" in warning and "PreToolUse" in warning


@pytest.mark.parametrize(
    ("outputs", "decision", "reason"),
    [
        ([{"permissionDecision": "allow"}], "allow", ""),
        ([{"permissionDecision": "ask", "permissionDecisionReason": "sure?"}], "ask", "sure?"),
        # several hooks: the strictest answer wins, whatever their order
        ([{"permissionDecision": "allow"}, {"permissionDecision": "deny"}], "deny", ""),
        ([{"permissionDecision": "ask"}, {"permissionDecision": "allow"}], "ask", ""),
        ([{"permissionDecision": "maybe"}], None, ""),  # not a decision: ignored
    ],
)
async def test_pre_tool_use_permission_decisions(
    tmp_path: Path, outputs: list[dict[str, Any]], decision: str | None, reason: str
) -> None:
    groups = [group(f"echo '{json.dumps({'hookSpecificOutput': out})}'", "Bash") for out in outputs]
    hooks = runner(tmp_path, {"PreToolUse": groups})
    outcome = await hooks.run("PreToolUse", "Bash", {"tool_name": "Bash"})
    assert (outcome.permission_decision, outcome.permission_reason) == (decision, reason)
    assert not outcome.blocked


async def test_pre_tool_use_updated_input_and_legacy_approve(tmp_path: Path) -> None:
    stdout = {
        "decision": "approve",
        "reason": "fine",
        "hookSpecificOutput": {"updatedInput": {"command": "ls -la"}},
    }
    hooks = runner(tmp_path, {"PreToolUse": [group(f"echo '{json.dumps(stdout)}'")]})
    outcome = await hooks.run("PreToolUse", "Bash", {})
    assert outcome.updated_input == {"command": "ls -la"}
    assert (outcome.permission_decision, outcome.permission_reason) == ("allow", "fine")


async def test_common_json_fields(tmp_path: Path) -> None:
    stdout = {
        "continue": False,
        "stopReason": "enough",
        "suppressOutput": True,
        "systemMessage": "said to the user",
        "hookSpecificOutput": {"additionalContext": "for the model"},
    }
    hooks = runner(tmp_path, {"PostToolUse": [group(f"echo '{json.dumps(stdout)}'")]})
    outcome = await hooks.run("PostToolUse", "Bash", {})
    assert outcome.stop_turn and outcome.stop_reason == "enough" and outcome.suppress_output
    assert outcome.messages == ["said to the user"]
    assert outcome.additional_context == ["for the model"]


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"])
async def test_exit_2_blocks_the_blockable_events(tmp_path: Path, event: str) -> None:
    hooks = runner(tmp_path, {event: [group("echo nope >&2; exit 2")]})
    outcome = await hooks.run(event, "Bash", {})
    assert outcome.blocked and outcome.block_reason == "nope"


async def test_exit_2_on_notification_is_only_reported(tmp_path: Path) -> None:
    hooks = runner(tmp_path, {"Notification": [group("echo nope >&2; exit 2")]})
    outcome = await hooks.run("Notification", None, {})
    assert not outcome.blocked and "nope" in outcome.messages[0]


async def test_payload_carries_mode_and_prompt_id(tmp_path: Path) -> None:
    out = tmp_path / "stdin.json"
    hooks = HookRunner(
        {"Stop": [group(f"cat > {out}")], "SessionEnd": [group(f"cat >> {out}.end")]},
        tmp_path,
        "sess-1",
        tmp_path / "t.jsonl",
        mode=lambda: "acceptEdits",
    )
    hooks.prompt_id = "p-1"
    await hooks.run("Stop", None, {"stop_hook_active": False})
    data = json.loads(out.read_text())
    assert data["permission_mode"] == "acceptEdits" and data["prompt_id"] == "p-1"
    assert data["hook_event_name"] == "Stop" and data["stop_hook_active"] is False
    await hooks.run("SessionEnd", "other", {"reason": "other"})
    end = json.loads(Path(f"{out}.end").read_text())
    assert "permission_mode" not in end and end["reason"] == "other"


@pytest.mark.parametrize("event", EVENTS)
def test_an_untrusted_project_runs_no_hook_of_any_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, event: str
) -> None:
    monkeypatch.setenv("CCX_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".git").mkdir()
    settings = {"hooks": {event: [group("touch PWN", "*")]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    untrusted = load_settings(project, trusted=False)
    assert not runner(project, untrusted.hooks).has(event, "x")
    assert runner(project, load_settings(project).hooks).has(event, "x")


async def test_stdout_is_shown_unless_suppressed_or_context(tmp_path: Path) -> None:
    shown: list[str] = []
    quiet = json.dumps({"suppressOutput": True, "systemMessage": "checked"})
    loud = json.dumps({"decision": "approve"})
    hooks = HookRunner(
        {
            "PostToolUse": [group("echo formatted 3 files"), group(f"echo '{quiet}'")],
            "Stop": [group(f"echo '{loud}'"), group("true"), group("echo oops; exit 1")],
            "UserPromptSubmit": [group("echo context for the model")],
        },
        tmp_path,
        "sess-1",
        tmp_path / "t.jsonl",
        on_output=shown.append,
    )
    post = await hooks.run("PostToolUse", "Bash", {})
    assert shown == ["PostToolUse hook `echo formatted 3 files`: formatted 3 files"]
    assert post.messages == ["checked"] and post.suppress_output  # the message still shows
    await hooks.run("Stop", None, {})
    assert shown[1:] == [f"Stop hook `echo '{loud}'`: {loud}"]  # failures are told otherwise
    prompt = await hooks.run("UserPromptSubmit", None, {"prompt": "hi"})
    assert prompt.additional_context == ["context for the model"] and len(shown) == 2
