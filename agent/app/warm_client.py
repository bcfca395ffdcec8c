"""The warm worker's client side of one run: hand it over, forward signals, exit as it did.

``agent.app.warm`` has the design; ``agent.app.warm_worker`` the other end.
Kept light: it runs before anything heavy is imported.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
from collections.abc import Callable
from pathlib import Path

from agent.app.warm import (
    FORWARDED,
    MESSAGE,
    START_WAIT_S,
    peer_uid,
    private_folder,
    socket_path,
    spawn_worker,
    worker_starting,
)


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
        try:
            cwd = os.getcwd()
        except OSError:  # a folder deleted under the shell: the in-process run says so
            return None
        request = {
            "argv": argv,
            "argv0": sys.argv[0] if sys.argv else "ccx",
            "cwd": cwd,
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

    try:  # the worker wrote when it started; one stuck importing is not waited for again
        started = float(path.with_suffix(".lock").read_text(encoding="ascii"))
    except (OSError, ValueError):
        started = time.time()
    while time.time() < started + START_WAIT_S and worker_starting(path):
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
