"""Hooks that leave a background child holding their stdout, end to end: the real `ccx -p` goes
on as soon as the hook exits (a tool call takes seconds, not the child's 30), the hook's output
counts, and the child does not outlive ccx, even one killed with SIGKILL. A project's hook runs
in the sandbox, whose children end with it; the user's own keeps them until ccx ends.

Children are found by a tagged argv[0] (tests/host_pids.py): in the sandbox's PID namespace
``$!`` is not the pid the test sees."""

from __future__ import annotations

import json
import signal
import time
from typing import Any

import pytest

from tests.e2e.conftest import Ccx
from tests.e2e.test_hooks import configure, hook, tool_results
from tests.host_pids import new_tag, pids_tagged, tagged_sleep, wait_for_tagged, wait_tagged_gone
from tui.fake_api import text_reply, tool_reply

CHILD_SLEEP_S = 30
QUICK_S = 15.0  # for a tool call: generous (the machine is shared); holding on takes 30 s
RUN_S = 25.0  # for the whole run, start-up included


def holding_child(tag: str, then: str = "") -> str:
    """A hook command that starts a child (tagged ``tag``) holding its stdout and stderr,
    prints ``then`` and exits."""
    return f"bash -c '{tagged_sleep(tag, CHILD_SLEEP_S)}' & {then}"


def configure_user(ccx: Ccx, hooks: dict[str, Any]) -> None:
    """Hooks in the user's own settings (not sandboxed)."""
    ccx.config.mkdir(parents=True, exist_ok=True)
    (ccx.config / "settings.json").write_text(json.dumps({"hooks": hooks}))


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
    tag = new_tag()
    configure(ccx, {event: [hook(holding_child(tag), matcher)]})
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
    assert wait_tagged_gone(tag) == [], "the hook's child outlived ccx"


def test_the_hooks_output_before_it_exits_counts(ccx: Ccx) -> None:
    tag = new_tag()
    deny = (
        'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
        '"permissionDecision": "deny", "permissionDecisionReason": "no tools today"}}\''
    )
    configure(ccx, {"PreToolUse": [hook(holding_child(tag, deny), "Bash")]})
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
    assert wait_tagged_gone(tag) == []


@pytest.mark.parametrize("whose", ["user", "project"])
def test_the_hooks_child_dies_with_a_ccx_killed_by_sigkill(ccx: Ccx, whose: str) -> None:
    tag = new_tag()
    started_marker = ccx.repo / "bash-started"
    hooks = {"PreToolUse": [hook(holding_child(tag), "Bash")]}
    (configure_user if whose == "user" else configure)(ccx, hooks)
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
        if whose == "user":  # the hook is done; its child still runs while ccx does
            assert len(wait_for_tagged(tag, 1)) == 1
        else:  # a project's hook ran in the sandbox: its child ended with it
            assert pids_tagged(tag) == []
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert wait_tagged_gone(tag) == [], "the hook's child outlived a ccx killed with SIGKILL"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
