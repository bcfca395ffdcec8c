"""A warm worker for scripted `ccx -p` runs: ``CCX_WARM=1``, and under the Agent SDK.

Most of a one-turn ``ccx -p`` is Python importing the anthropic SDK and
ccx's own modules. With ``CCX_WARM=1`` the first run starts, beside doing
its own work, a worker that has imported all of it once and listens on a
private Unix socket. Later runs hand it their argv, cwd, environment and
their stdin/stdout/stderr file descriptors; the worker forks, and the child
becomes that run: it takes the descriptors, the cwd and the environment
(replaced whole), parses the argv, reads settings and sessions afresh and
exits with the run's code, which the client exits with. Nothing of one run
is left in the worker, whose state stays as it was just after its imports.
It is on with ``CCX_WARM=1`` and for runs the Agent SDK starts (it sets
``CLAUDE_CODE_ENTRYPOINT=sdk-...``: every query() is a new process, the case
this is for); ``CCX_WARM=0`` turns it off. An ordinary ``ccx -p`` leaves no
process behind unless asked to.

This module is the client (kept light: it runs before anything heavy is
imported); ``agent.app.warm_worker`` is the worker.

It stays correct when things change: the socket's name carries the ccx
version, the Python executable and a fingerprint of ccx's installed source
files (their sizes and mtimes), so new code never reaches an old worker;
cwd, env and settings are the client's on every run. The socket sits in a
0700 folder of the user's and the worker serves only its own uid
(SO_PEERCRED). It exits after ``IDLE_S`` idle seconds ($CCX_WARM_IDLE_S). Anything failing on
the way (no worker yet, a stale socket) falls back to running in-process.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import struct
import sys
import tempfile
from pathlib import Path

IDLE_S = float(os.environ.get("CCX_WARM_IDLE_S") or 600)
PACKAGES = ("agent", "compaction", "tools")
MAX_REQUEST = 4 * 1024 * 1024


def enabled(argv: list[str]) -> bool:
    """A headless run with the worker asked for (and not already inside it)."""
    setting = os.environ.get("CCX_WARM", "")
    sdk = os.environ.get("CLAUDE_CODE_ENTRYPOINT", "").startswith("sdk")
    if os.environ.get("CCX_WARM_CHILD") or setting == "0" or (setting != "1" and not sdk):
        return False
    return any(a in ("-p", "--print") or a.startswith("--input-format") for a in argv)


def socket_path() -> Path:
    folder = Path(tempfile.gettempdir()) / f"ccx-warm-{os.getuid()}"
    return folder / f"{_fingerprint()}.sock"


def _fingerprint() -> str:
    from agent import __version__

    digest = hashlib.sha256(f"{__version__}\0{sys.executable}".encode())
    root = Path(__file__).resolve().parents[2]
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            stat = path.stat()
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:20]


# -- the client ----------------------------------------------------------------------------


def run_warm(argv: list[str]) -> int | None:
    """The run's exit code from the worker; None to run in-process (and a worker is started)."""
    try:
        path = socket_path()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(str(path))
    except OSError:
        _spawn_worker()
        return None
    with conn:
        request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        try:
            socket.send_fds(conn, [struct.pack("!I", len(request)) + request], [0, 1, 2])
            pid = _read_int(conn)
        except OSError:
            return None
        forward = _forwarder(pid)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, forward)
        try:
            return _read_int(conn)
        except OSError:
            return 1


def _forwarder(pid: int):  # type: ignore[no-untyped-def]
    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except OSError:
            pass

    return forward


def _read_int(conn: socket.socket) -> int:
    data = b""
    while len(data) < 4:
        chunk = conn.recv(4 - len(data))
        if not chunk:
            raise OSError("the worker closed the connection")
        data += chunk
    return struct.unpack("!i", data)[0]


def _spawn_worker() -> None:
    """Start the worker, detached; this run goes on in-process meanwhile."""
    import subprocess

    try:
        subprocess.Popen(
            [sys.executable, "-m", "agent.app.warm_worker"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass
