"""Hooks that leave a background child holding their stdout, end to end: the real `ccx -p` goes
on as soon as the hook exits (a tool call takes seconds, not the child's 30), the hook's output
counts, and the child does not outlive ccx, even one killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from agent.fake_api import text_reply, tool_reply
from tests.e2e.conftest import Ccx
from tests.e2e.test_hooks import configure, hook, tool_results

CHILD_SLEEP_S = 30
QUICK_S = 15.0  # for a tool call: generous (the machine is shared); holding on takes 30 s
RUN_S = 25.0  # for the whole run, start-up included


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def wait_dead(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def holding_child(pid_file: Path, then: str = "") -> str:
    """A hook command that starts a child holding its stdout and stderr, notes the child's pid,
    prints ``then`` and exits."""
    return f"sleep {CHILD_SLEEP_S} & echo $! >> {pid_file}; {then}"


def pids(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()] if path.exists() else []


@pytest.mark.parametrize(
    ("event", "matcher"),
    [
        ("PreToolUse", "Bash"),
        ("PostToolUse", "Bash"),
        ("UserPromptSubmit", None),
        ("SessionStart", None),
        ("Stop", None),
        ("SessionEnd", None),
    ],
)
def test_a_child_holding_the_hooks_stdout_holds_nothing(
    ccx: Ccx, event: str, matcher: str | None
) -> None:
    pid_file = ccx.repo / "child.pid"
    configure(ccx, {event: [hook(holding_child(pid_file), matcher)]})
    ccx.api.add(
        tool_reply(("Bash", {"command": "echo tool-ran", "description": "Say it"})),
        text_reply("Done."),
    )
    started = time.monotonic()
    run = ccx.run("-p", "go", "--allowedTools", "Bash", "--output-format", "json", timeout=120)
    elapsed = time.monotonic() - started
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Done."
    assert elapsed < RUN_S, f"ccx -p took {elapsed:.1f} s"
    first, second = ccx.api.requests
    assert second.received_at - first.received_at < QUICK_S
    assert [r["content"] for r in tool_results(second)] == ["tool-ran"]
    (child,) = pids(pid_file)
    assert wait_dead(child), "the hook's child outlived ccx"


def test_the_hooks_output_before_it_exits_counts(ccx: Ccx) -> None:
    pid_file = ccx.repo / "child.pid"
    deny = (
        'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
        '"permissionDecision": "deny", "permissionDecisionReason": "no tools today"}}\''
    )
    configure(ccx, {"PreToolUse": [hook(holding_child(pid_file, deny), "Bash")]})
    marker = ccx.repo / "ran"
    ccx.api.add(
        tool_reply(("Bash", {"command": f"touch {marker}", "description": "Touch"})),
        text_reply("Refused."),
    )
    started = time.monotonic()
    run = ccx.run("-p", "go", "--allowedTools", "Bash", "--output-format", "json", timeout=120)
    assert run.returncode == 0, run.stderr
    assert time.monotonic() - started < RUN_S
    assert not marker.exists()
    (result,) = tool_results(ccx.api.requests[1])
    assert "no tools today" in str(result["content"]) and result.get("is_error")
    assert wait_dead(pids(pid_file)[0])


def test_the_hooks_child_dies_with_a_ccx_killed_by_sigkill(ccx: Ccx) -> None:
    pid_file = ccx.repo / "child.pid"
    started_marker = ccx.repo / "bash-started"
    configure(ccx, {"PreToolUse": [hook(holding_child(pid_file), "Bash")]})
    ccx.api.add(
        tool_reply(
            ("Bash", {"command": f"touch {started_marker}; sleep 60", "description": "Wait"})
        ),
        text_reply("never"),
    )
    proc = ccx.popen("-p", "go", "--allowedTools", "Bash")
    try:
        deadline = time.monotonic() + 60
        while not started_marker.exists():
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the Bash call did not start"
            time.sleep(0.05)
        (child,) = pids(pid_file)
        assert alive(child)  # the hook is done; its child still runs while ccx does
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert wait_dead(child), "the hook's child outlived a ccx killed with SIGKILL"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
