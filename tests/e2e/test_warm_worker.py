"""CCX_WARM=1: later `ccx -p` runs go through a warm worker, with their own cwd and env."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import tempfile
import time
from pathlib import Path

from agent.fake_api import FakeApi, text_reply, tool_reply
from tests.e2e.conftest import Ccx


def worker_pid(folder: Path) -> int | None:
    for path in folder.glob("ccx-warm-*/*.sock"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(path))
            except OSError:
                continue
            creds = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            return struct.unpack("3i", creds)[0]
    return None


def test_a_warm_run_takes_the_clients_cwd_env_and_exit_code(ccx: Ccx, tmp_path: Path) -> None:
    short_tmp = Path(tempfile.mkdtemp(prefix="ccxw", dir="/tmp"))  # a socket path under 108 bytes
    ccx.env |= {"CCX_WARM": "1", "TMPDIR": str(short_tmp), "CCX_WARM_IDLE_S": "60"}
    ccx.api.add(text_reply("cold"))
    assert ccx.run("-p", "hi").stdout == "cold\n"
    deadline = time.time() + 30
    while (pid := worker_pid(short_tmp)) is None and time.time() < deadline:
        time.sleep(0.2)
    assert pid is not None, "the worker did not start"
    try:
        other = tmp_path / "elsewhere"
        other.mkdir()
        with FakeApi() as second:
            second.add(
                tool_reply(("Bash", {"command": "echo warm=$CCX_WARM_CHILD; pwd"})),
                text_reply("warm"),
            )
            ccx.env["ANTHROPIC_BASE_URL"] = second.url
            ccx.repo = other
            run = ccx.run("-p", "where?", "--output-format", "json", "--allowedTools", "Bash")
            assert run.returncode == 0, run.stderr
            assert run.json()["result"] == "warm"
            tool_output = json.dumps(second.requests[1].messages[-1])
            assert "warm=1" in tool_output and str(other) in tool_output
        assert ccx.run("-p", "x", "--session-id", "nope").returncode == 2
    finally:
        os.kill(pid, signal.SIGTERM)
