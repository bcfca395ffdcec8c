"""Hooks (and the statusLine command) whose background children hold their pipes: ccx waits for
the command, not the children; the output up to its exit counts; what it left is killed when
the session ends (the statusLine's at once)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from agent.core.events import HookResponse
from agent.instructions.hooks import HookRunner
from agent.instructions.hooks.outcome import MAX_OUTPUT_CHARS
from tui.session.status_line import StatusLineConfig, run_status_command

CHILD_SLEEP_S = 30
QUICK_S = 10.0  # generous: the machine is shared; the wait it replaces is the child's 30 s


def runner(tmp_path: Path, hooks: dict[str, Any]) -> HookRunner:
    return HookRunner(hooks, tmp_path, "sess-1", tmp_path / "sess-1.jsonl")


def group(command: str, matcher: str = "Bash") -> dict[str, Any]:
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes (its parent has not reaped it yet).
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def wait_dead(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def child_pid(path: Path) -> int:
    return int(path.read_text().split()[0])


async def test_a_child_holding_stdout_does_not_hold_the_hook(tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    command = (
        f"sleep {CHILD_SLEEP_S} & echo $! > {pid}; "
        'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
        '"permissionDecision": "deny", "permissionDecisionReason": "said before exiting"}}\''
    )
    hooks = runner(tmp_path, {"PreToolUse": [group(command)]})
    started = time.monotonic()
    outcome = await hooks.run("PreToolUse", "Bash", {"tool_name": "Bash", "tool_input": {}})
    assert time.monotonic() - started < QUICK_S
    # Its output up to its exit counts: the JSON after the background start was read.
    assert outcome.permission_decision == "deny"
    assert outcome.permission_reason == "said before exiting"
    child = child_pid(pid)
    assert alive(child)  # left to run until the session ends...
    hooks.kill_lingering()
    assert wait_dead(child)  # ...and killed then


async def test_a_child_holding_stderr_does_not_hold_a_blocking_hook(tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    command = f"sleep {CHILD_SLEEP_S} & echo $! > {pid}; echo 'not now' >&2; exit 2"
    hooks = runner(tmp_path, {"PreToolUse": [group(command)]})
    started = time.monotonic()
    outcome = await hooks.run("PreToolUse", "Bash", {"tool_name": "Bash", "tool_input": {}})
    assert time.monotonic() - started < QUICK_S
    assert outcome.blocked and outcome.block_reason == "not now"
    hooks.kill_lingering()
    assert wait_dead(child_pid(pid))


async def test_a_child_that_closed_its_pipes_is_killed_with_the_session_too(
    tmp_path: Path,
) -> None:
    pid = tmp_path / "pid"
    command = f"sleep {CHILD_SLEEP_S} >/dev/null 2>&1 & echo $! > {pid}"
    hooks = runner(tmp_path, {"SessionStart": [group(command, "")]})
    outcome = await hooks.run("SessionStart", "startup", {"source": "startup"})
    assert outcome.messages == []
    child = child_pid(pid)
    assert alive(child)
    hooks.kill_lingering()
    assert wait_dead(child)


async def test_ended_children_are_forgotten(tmp_path: Path) -> None:
    """A group whose processes ended is not kept: its id may be reused by another process."""
    pid = tmp_path / "pid"
    hooks = runner(tmp_path, {"Stop": [group(f"sleep 0.2 & echo $! > {pid}", "")]})
    await hooks.run("Stop", None, {})
    assert len(hooks.lingering) == 1
    deadline = time.monotonic() + 30  # an orphan's zombie lasts until init reaps it
    while Path(f"/proc/{child_pid(pid)}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    hooks.groups["Stop"] = runner(tmp_path, {"Stop": [group("true", "")]}).groups["Stop"]
    await hooks.run("Stop", None, {})
    assert hooks.lingering == frozenset()


async def test_a_hook_that_never_reads_a_large_payload_does_not_block(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hooks = runner(tmp_path, {"PreToolUse": [group(f"touch {marker}")]})
    payload = {"tool_name": "Write", "tool_input": {"content": "x" * 5_000_000}}
    started = time.monotonic()
    outcome = await hooks.run("PreToolUse", "Bash", payload)
    assert time.monotonic() - started < QUICK_S
    assert marker.exists() and outcome.messages == []


async def test_a_flood_of_output_is_cut_with_a_note(tmp_path: Path) -> None:
    hooks = runner(tmp_path, {"Stop": [group("head -c 20000000 /dev/zero | tr '\\0' a", "")]})
    responses: list[HookResponse] = []
    hooks.on_event = responses.append  # type: ignore[assignment]
    outcome = await hooks.run("Stop", None, {})
    assert not outcome.blocked
    stdout = next(r.stdout for r in responses if isinstance(r, HookResponse))
    assert stdout.startswith("a" * MAX_OUTPUT_CHARS)
    assert stdout.endswith(f"({20_000_000 - MAX_OUTPUT_CHARS:,} more bytes cut)")


async def test_the_status_line_is_read_when_its_command_exits(tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    config = StatusLineConfig(f"sleep {CHILD_SLEEP_S} & echo $! > {pid}; echo 'main | 42%'")
    started = time.monotonic()
    text = await run_status_command(config, {"model": {}}, tmp_path)
    assert time.monotonic() - started < QUICK_S
    assert text == "main | 42%"
    assert wait_dead(child_pid(pid))  # a status line leaves nothing running
