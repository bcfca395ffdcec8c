"""`ccx -p` killed while a Bash command runs: the command and its background child die too."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from agent.fake_api import text_reply, tool_reply
from tests.e2e.conftest import Ccx
from tests.tools.test_bash import alive, wait_dead

STARTED_WITHIN_S = 30.0  # ccx start-up (importing the SDK) plus the first request
GONE_WITHIN_S = 5.0


def wait_for_pids(path: Path, proc: subprocess.Popen[str]) -> list[int]:
    deadline = time.monotonic() + STARTED_WITHIN_S
    while time.monotonic() < deadline:
        if path.exists():
            pids = [int(p) for p in path.read_text().split()]
            if len(pids) == 2 and all(alive(p) for p in pids):
                return pids
        if proc.poll() is not None:
            pytest.fail(f"ccx exited early ({proc.returncode}): {proc.communicate()[1]}")
        time.sleep(0.05)
    pytest.fail("the Bash command did not start its sleeps")


@pytest.mark.parametrize(
    ("sig", "sandbox"),
    [
        (signal.SIGKILL, "0"),  # the guardian alone: no sandbox, so no death signal on the shell
        (signal.SIGKILL, "1"),
        (signal.SIGHUP, "1"),
        (signal.SIGTERM, "0"),
    ],
    ids=["kill-9-unsandboxed", "kill-9-sandboxed", "hangup", "terminate"],
)
def test_bash_children_die_with_ccx(ccx: Ccx, sig: signal.Signals, sandbox: str) -> None:
    pid_file = ccx.repo / "pids.txt"
    # One sleep in the background, one in the foreground (exec keeps the pid it reported).
    command = f"sleep 600 & echo $! >> {pid_file}; sh -c 'echo $$ >> {pid_file}; exec sleep 600'"
    ccx.api.add(tool_reply(("Bash", {"command": command})), text_reply("done"))
    ccx.env["CCX_SANDBOX"] = sandbox
    proc = ccx.popen("-p", "start two sleeps", "--permission-mode", "bypassPermissions")
    try:
        pids = wait_for_pids(pid_file, proc)
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        assert wait_dead(pids, within=GONE_WITHIN_S) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.communicate()
        for pid in [int(p) for p in pid_file.read_text().split()] if pid_file.exists() else []:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
