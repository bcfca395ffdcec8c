"""The warm worker's client: headless runs (``-p``) fork from a worker that has imported ccx.

Why a worker. A one-turn ``ccx -p`` spends most of its wall time in Python
importing the anthropic SDK (some 3,200 modules, 1-2 s here) and ccx itself;
the request and the reply take milliseconds. Lazy imports cannot remove that:
every run needs the SDK. Claude Code, a single compiled binary, starts in
about 0.6 s. So the first headless run, after it has printed its result,
starts a detached worker (``agent.app.warm_worker``) that imports everything
once and listens on a private Unix socket; a later ``ccx -p`` connects, hands
over its argv, cwd, environment, umask and its stdin/stdout/stderr
descriptors, and the worker forks: the child becomes that run and exits with
its code, which the client exits with. The fork is copy-on-write: nothing of
one run is seen by the next, and the worker's state stays as it was just
after its imports (it reads no settings, no files of any project).

Why it stays correct. The child replaces its environment whole, takes the
client's cwd, umask, descriptors and argv, and reads settings, CLAUDE.md,
sessions and HOME afresh, as a cold run does. The socket's name carries the
ccx version, the Python executable and version, a fingerprint of ccx's
installed files (sizes and mtimes) and of the site-packages folders (an
install or upgrade changes them): new code never reaches an old worker, and a
worker whose install changed stops taking runs and exits. It lives in a 0700
folder of the user's (checked by the client before it connects); both sides
check the peer's uid (SO_PEERCRED). A worker exits after ``CCX_WARM_IDLE_S``
idle seconds (600). SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGUSR1/2 are
forwarded to the run, Ctrl-Z stops it too; a client that dies (SIGKILL)
closes the socket and the run is cancelled (SIGTERM, then SIGKILL). A run
killed by a signal kills its client with the same signal, so exit statuses
are the ones a cold run gives. Any failure on the way (no worker yet, a stale
socket, a worker of another uid) falls back to running in-process.

What it does not keep: the client's controlling terminal (the run is in a
session of its own; -p never reads the terminal), its resource limits, nice
level and cgroup (the worker's apply).

On by default for headless runs; off with ``CCX_WARM=0`` or
``"warmWorker": false`` in the user's settings (``~/.ccx/settings.json``).
Linux only (SO_PEERCRED, pidfd). This module runs before anything heavy is
imported and must stay light.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import struct
import sys
from collections.abc import Callable
from pathlib import Path

PACKAGES = ("agent", "compaction", "tools")
MAX_REQUEST = 4 * 1024 * 1024
MESSAGE = struct.Struct("!ci")  # one kind byte, one int: every message between worker and client
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGWINCH", "SIGUSR1", "SIGUSR2")
START_WAIT_S = 3.0  # how long a run waits for a worker that is still importing


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


def fingerprint() -> str:
    """Which code a worker runs: ccx's version and files, the Python, its site-packages."""
    import hashlib

    from agent import __version__

    digest = hashlib.sha256(f"{__version__}\0{sys.executable}\0{sys.version}".encode())
    root = Path(__file__).resolve().parents[2]
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


# -- the client ----------------------------------------------------------------------------


def run(argv: list[str], in_process: Callable[[], int]) -> int:
    """The run through the worker; else in-process, starting a worker once the run is done."""
    try:
        path = socket_path()
    except OSError:
        return in_process()
    code = run_warm(argv, path)
    if code is not None:
        return code
    try:
        return in_process()
    finally:
        for stream in (sys.stdout, sys.stderr):  # the run's output first, then the worker
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        if not worker_starting(path):
            spawn_worker()


def run_warm(argv: list[str], path: Path) -> int | None:
    """The run's exit code from the worker; None when it must run in-process."""
    conn = _connect(path)
    if conn is None and worker_starting(path):
        conn = _wait_for_worker(path)
    if conn is None:
        return None
    with conn:
        request = {
            "argv": argv,
            "argv0": sys.argv[0] if sys.argv else "ccx",
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "umask": _umask(),
        }
        data = json.dumps(request).encode()
        try:
            socket.send_fds(conn, [struct.pack("!I", len(data)) + data], [0, 1, 2])
        except OSError:
            return None
        return _Session(conn).wait()


def _connect(path: Path) -> socket.socket | None:
    if not private_folder(path.parent):
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
        if peer_uid(conn) == os.getuid():
            return conn
    except OSError:
        pass
    conn.close()
    return None


def _wait_for_worker(path: Path) -> socket.socket | None:
    """A worker is importing: waiting for it costs less than importing everything again."""
    import time

    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline and worker_starting(path):
        time.sleep(0.01)
        if (conn := _connect(path)) is not None:
            return conn
    return None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class _Session:
    """One run through the worker: forward signals, read its messages, give its exit status."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.pid: int | None = None
        self.pending: list[int] = []
        self.received: int | None = None  # the last signal forwarded to the run

    def wait(self) -> int | None:
        saved = _terminal_modes()
        for name in FORWARDED:
            signal.signal(getattr(signal, name), self._forward)
        signal.signal(signal.SIGTSTP, self._stop)
        kind, value = self._read_messages()
        _restore_terminal(saved)
        if kind == "signal":
            _die_of(value)
            return 128 + value
        return None if kind == "declined" else value

    def _read_messages(self) -> tuple[str, int]:
        """("code", n), ("signal", n), or ("declined", 0): the run is not one the worker takes."""
        declined, child_code = False, None
        while (message := self._next()) is not None:
            kind, value = message
            if kind == b"P":
                self.pid = value
                for signum in self.pending:
                    self._send_signal(signum)
            elif kind == b"D":
                declined = True
            elif kind == b"C":
                child_code = value
            elif kind == b"X":
                return ("declined", 0) if declined else ("code", value)
            elif kind == b"S":
                return "signal", value
        if declined:
            return "declined", 0
        if child_code is not None:
            return "code", child_code
        if self.received is not None:  # the worker went away with the run: end as the run did
            return "signal", self.received
        print("ccx: the warm worker ended without the run's exit status", file=sys.stderr)
        return "code", 1

    def _next(self) -> tuple[bytes, int] | None:
        data = b""
        while len(data) < MESSAGE.size:
            try:
                chunk = self.conn.recv(MESSAGE.size - len(data))
            except OSError:
                return None
            if not chunk:
                return None
            data += chunk
        return MESSAGE.unpack(data)

    def _forward(self, signum: int, _frame: object) -> None:
        if signum != signal.SIGWINCH:
            self.received = signum
        if self.pid is None:
            self.pending.append(signum)
        else:
            self._send_signal(signum)

    def _send_signal(self, signum: int) -> None:
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signum)
        except OSError:
            pass

    def _stop(self, _signum: int, _frame: object) -> None:
        """Ctrl-Z: stop the run, then this client; on `fg`, continue both."""
        self._send_signal(signal.SIGSTOP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)
        signal.signal(signal.SIGTSTP, self._stop)
        self._send_signal(signal.SIGCONT)


def _die_of(signum: int) -> None:
    """End this client by the signal that ended the run (its shell sees the same status)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
    except (OSError, ValueError):
        pass


def _terminal_modes() -> list | None:  # type: ignore[type-arg]
    if not os.isatty(0):
        return None
    import termios

    try:
        return termios.tcgetattr(0)
    except termios.error:
        return None


def _restore_terminal(saved: list | None) -> None:  # type: ignore[type-arg]
    """A run must never leave the terminal in another mode than it found it."""
    if saved is None:
        return
    import termios

    try:
        if termios.tcgetattr(0) != saved:
            termios.tcsetattr(0, termios.TCSADRAIN, saved)
    except termios.error:
        pass


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
