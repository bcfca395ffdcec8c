"""`ccx -p` killed while a Bash command runs: the command and its background child die too,
and the command's temporary file (where its shell leaves its last folder) goes with them."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.e2e.conftest import Ccx
from tests.host_pids import new_tag, pids_tagged, tagged_sleep, wait_tagged_gone
from tui.fake_api import text_reply, tool_reply

STARTED_WITHIN_S = 30.0  # ccx start-up (importing the SDK) plus the first request
GONE_WITHIN_S = 5.0


def wait_for_sleeps(tag: str, proc: subprocess.Popen[str]) -> list[int]:
    deadline = time.monotonic() + STARTED_WITHIN_S
    while time.monotonic() < deadline:
        if len(pids := pids_tagged(tag)) == 2:
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
    tag = new_tag()
    # One sleep in the background, one in the foreground.
    command = f"({tagged_sleep(tag + '-bg')}) & bash -c '{tagged_sleep(tag + '-fg')}'"
    ccx.api.add(tool_reply(("Bash", {"command": command})), text_reply("done"))
    ccx.env["CCX_SANDBOX"] = sandbox
    temp = ccx.repo.parent / "tmp"
    temp.mkdir()
    ccx.env["TMPDIR"] = str(temp)
    proc = ccx.popen("-p", "start two sleeps", "--permission-mode", "bypassPermissions")
    try:
        wait_for_sleeps(tag, proc)
        assert list(temp.glob("ccx-cwd-*")) != []  # the command's file, while it runs
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        assert wait_tagged_gone(tag, within=GONE_WITHIN_S) == []
        deadline = time.monotonic() + GONE_WITHIN_S
        while list(temp.glob("ccx-cwd-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(temp.glob("ccx-cwd-*")) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.communicate()
        for pid in pids_tagged(tag):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("sandbox", ["0", "1"])
def test_a_command_cannot_make_the_guard_remove_another_file(ccx: Ccx, sandbox: str) -> None:
    """A hostile command swaps its cwd file for a symlink to a file of the user's, then ccx is
    killed: the guardian removes the link it was told of, never what the link points to."""
    tag = new_tag()
    temp = ccx.repo.parent / "tmp"
    temp.mkdir()
    precious = ccx.repo / "precious.txt"  # writable by a sandboxed command too
    precious.write_text("keep me\n")
    swap = f'for f in "$TMPDIR"/ccx-cwd-*; do rm -f "$f"; ln -s {precious} "$f"; done'
    command = f"{swap}; bash -c '{tagged_sleep(tag + '-fg')}'"
    ccx.api.add(tool_reply(("Bash", {"command": command})), text_reply("done"))
    ccx.env |= {"CCX_SANDBOX": sandbox, "TMPDIR": str(temp)}
    proc = ccx.popen("-p", "swap it", "--permission-mode", "bypassPermissions")
    try:
        deadline = time.monotonic() + STARTED_WITHIN_S
        while not pids_tagged(tag) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1]
            time.sleep(0.05)
        assert any(p.is_symlink() for p in temp.glob("ccx-cwd-*"))  # the swap happened
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert wait_tagged_gone(tag, within=GONE_WITHIN_S) == []
        deadline = time.monotonic() + GONE_WITHIN_S
        while list(temp.glob("ccx-cwd-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(temp.glob("ccx-cwd-*")) == []  # the link is gone
        assert precious.read_text() == "keep me\n"  # its target is not
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.communicate()
        for pid in pids_tagged(tag):
            os.kill(pid, signal.SIGKILL)
