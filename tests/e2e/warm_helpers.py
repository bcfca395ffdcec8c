"""Shared by the warm worker's e2e tests: a runtime folder, a worker started as ccx starts one,
and a run that shows whether it went through the worker.

The socket folder must not be in a temp folder (tui.warm.policy.socket_folder), so
each test's runtime folder is made under ~/.cache and removed at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.e2e.conftest import Ccx
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.warm import policy as warm

MARK = "echo warm=${CCX_WARM_CHILD:-no} home=$HOME mark=${MARK:-none}; pwd"


@contextmanager
def runtime_dir(parent: Path | None = None) -> Iterator[Path]:
    """A private folder for XDG_RUNTIME_DIR, outside the temp folders, short enough for a
    socket path (108 bytes)."""
    parent = parent or Path.home() / ".cache"
    parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="ccxw", dir=parent))  # 0700
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def worker_socket(runtime: Path) -> Path | None:
    return next(iter((runtime / "ccx-warm").glob("*.sock")), None)


def worker_pid(runtime: Path) -> int | None:
    path = worker_socket(runtime)
    if path is None:
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return None
        creds = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[0]


def wait_for_worker(runtime: Path, within: float = 60) -> int:
    deadline = time.monotonic() + within
    while (pid := worker_pid(runtime)) is None:
        assert time.monotonic() < deadline, "no worker started"
        time.sleep(0.1)
    return pid


def start_worker(runtime: Path, **env: str) -> subprocess.Popen[bytes]:
    """A worker started as a first run starts one: its command line and clean environment."""
    started = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "CCX_WARM_IDLE_S": "300", **env}
    proc = subprocess.Popen(warm.worker_command(), cwd="/", env=warm.worker_environment(started))
    deadline = time.monotonic() + 60
    while worker_pid(runtime) != proc.pid:
        assert proc.poll() is None, "the worker exited"
        assert time.monotonic() < deadline, "the worker did not start listening"
        time.sleep(0.05)
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
    assert proc.wait(timeout=10) == 0  # a stopped worker cleans up and exits 0


def warm_env(ccx: Ccx, runtime: Path) -> Ccx:
    ccx.env |= {"CCX_WARM": "1", "XDG_RUNTIME_DIR": str(runtime)}
    return ccx


def marked(ccx: Ccx, api: FakeApi, *args: str) -> str:
    """Run a prompt whose one Bash call prints the mark; that output, as the model saw it."""
    api.add(tool_reply(("Bash", {"command": MARK})), text_reply("done"))
    run = ccx.run("-p", "mark", "--output-format", "json", "--allowedTools", "Bash", *args)
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "done"
    return json.dumps(api.requests[-1].messages[-1])
