"""The warm worker for headless runs (``-p``): policy, socket, fingerprint; on by default.

Why a worker. A one-turn ``ccx -p`` spends most of its wall time in Python
importing the anthropic SDK (some 3,200 modules, 1-2 s here) and ccx itself;
the request and the reply take milliseconds. Lazy imports cannot remove that
(every run needs the SDK), nor can a thread (imports are CPU and hold the
GIL). Claude Code, one compiled binary, starts in about 0.6 s. A long-lived
server process would keep state between runs; a zygote that forks does not.
So the first headless run, after it has printed its result (so it is not
slowed), starts a detached worker (``agent.app.warm_worker``) that imports
everything once and listens on a private Unix socket. A later ``ccx -p``
(``agent.app.warm_client``) connects, hands over its argv, cwd, environment,
umask and stdin/stdout/stderr descriptors, and the worker forks: the child
(``agent.app.warm_child``) becomes that run and exits with its code, which
the client exits with. The fork is copy-on-write: nothing of one run is seen
by the next, and the worker's state stays as it was after its imports (it
reads no settings, no files of any project, no environment of a run). A run
that comes while the worker is still importing waits for it (up to 15 s
after the worker's start): that is sooner than importing everything again.

Why it stays correct. The child replaces its environment whole, takes the
client's cwd, umask, descriptors and argv, and reads settings, CLAUDE.md,
sessions and HOME afresh, as a cold run does. The socket's name carries the
ccx version, the Python executable and version, a fingerprint of ccx's
installed files (sizes and mtimes, data files too) and of the site-packages
folders (an install or upgrade changes them): new code never reaches an old
worker, and a worker whose install changed stops taking runs and exits. It
lives in a 0700 folder of the user's (checked by the client before it
connects), the socket is 0600, and both sides check the peer's uid
(SO_PEERCRED). A worker exits after ``CCX_WARM_IDLE_S`` idle seconds (600),
and is started without the run's secrets (API keys, tokens). SIGINT,
SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGUSR1/2 are forwarded to the run,
Ctrl-Z stops it too; a client that dies (SIGKILL) closes the socket and the
run is cancelled (SIGTERM, then SIGKILL). A run killed by a signal kills its
client with the same signal, so exit statuses are the ones a cold run gives;
the terminal's modes are restored if a run left them changed. Any failure on
the way (no worker yet, a stale socket, an open folder, a worker of another
uid) falls back to running in-process; a run that turns out not to be
headless is handed back (the client runs it itself).

What it does not keep: the client's controlling terminal (the run is in a
session of its own; -p never reads the terminal), its resource limits, nice
level and cgroup (the worker's apply).

On by default for headless runs; off with ``CCX_WARM=0`` or
``"warmWorker": false`` in the user's settings (``~/.ccx/settings.json``;
``CCX_WARM=1`` wins over it). Linux only (SO_PEERCRED, pidfd). This module
runs before anything heavy is imported and must stay light.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import struct
import sys
from pathlib import Path

PACKAGES = ("agent", "compaction", "tools")
MAX_REQUEST = 4 * 1024 * 1024
MESSAGE = struct.Struct("!ci")  # one kind byte, one int: every message between worker and client
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGWINCH", "SIGUSR1", "SIGUSR2")
START_WAIT_S = 15.0  # how long after its start a worker still importing is waited for


def idle_seconds() -> float:
    try:
        return float(os.environ.get("CCX_WARM_IDLE_S") or 600)
    except ValueError:
        return 600.0


def enabled(argv: list[str]) -> bool:
    """A headless run, on Linux, with the worker not turned off."""
    if sys.platform != "linux" or not headless(argv):
        return False
    setting = os.environ.get("CCX_WARM", "")
    if setting in ("0", "false", "no", "off"):
        return False
    return setting not in ("", "auto") or _user_setting() is not False


def headless(argv: list[str]) -> bool:
    """-p / --print, or stream-json input (the Agent SDK's way): the runs the worker takes."""
    for index, arg in enumerate(argv):
        if arg == "--":
            return False
        if arg in ("-p", "--print", "--input-format=stream-json"):
            return True
        if arg == "--input-format" and argv[index + 1 : index + 2] == ["stream-json"]:
            return True
    return False


def _user_setting() -> bool | None:
    from agent.core.locations import config_dir

    try:
        value = json.loads((config_dir() / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    setting = value.get("warmWorker") if isinstance(value, dict) else None
    return setting if isinstance(setting, bool) else None


def socket_folder() -> Path:
    tmp = next((os.environ[k] for k in ("TMPDIR", "TEMP", "TMP") if os.environ.get(k)), "/tmp")
    return Path(tmp) / f"ccx-warm-{os.getuid()}"


def socket_path() -> Path:
    return socket_folder() / f"{fingerprint()}.sock"


def fingerprint(root: Path | None = None) -> str:
    """Which code a worker runs: ccx's version and files (under ``root``), the Python, its
    site-packages."""
    import hashlib

    from agent import __version__

    python = f"{sys.prefix}\0{os.path.realpath(sys.executable)}\0{sys.version}"
    digest = hashlib.sha256(f"{__version__}\0{python}".encode())  # bin/python or bin/python3
    root = root or Path(__file__).resolve().parents[2]
    for package in PACKAGES:
        for folder, dirs, files in os.walk(root / package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                stat = os.stat(os.path.join(folder, name))
                digest.update(f"{folder}/{name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    for entry in sys.path:
        if entry.endswith("-packages") and os.path.isdir(entry):
            digest.update(f"{entry}\0{os.stat(entry).st_mtime_ns}\n".encode())
    return digest.hexdigest()[:20]


def private_folder(folder: Path) -> bool:
    """The folder is a real directory of this user's that nobody else may enter."""
    try:
        stat = os.lstat(folder)
    except OSError:
        return False
    return (
        (stat.st_mode & 0o170000) == 0o040000
        and stat.st_uid == os.getuid()
        and not stat.st_mode & 0o077
    )


def peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def worker_starting(path: Path) -> bool:
    """Whether a worker holds this fingerprint's lock (it is importing, serving or leaving)."""
    try:
        fd = os.open(path.with_suffix(".lock"), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def spawn_worker() -> None:
    """Start the worker, detached, with none of this run's descriptors and none of its secrets."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if not _secret(k)}
    try:
        subprocess.Popen(
            [sys.executable, "-P", "-m", "agent.app.warm_worker"],
            cwd="/",
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


def _secret(name: str) -> bool:
    upper = name.upper()
    return upper.startswith(("ANTHROPIC_", "AWS_", "CLAUDE_")) or any(
        word in upper for word in ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
    )
