"""The warm worker's client side of one run: check the worker, hand the run over, forward
signals, exit as it did.

``tui.warm.policy`` has the design; ``tui.warm.worker`` the other end.
Before it sends anything the client checks the process behind the socket is
a worker ccx started for this user in this very context (``warm_peer``);
every step up to the worker's acceptance has a deadline, and a client that
gives up runs in-process (the forked run waits for its go-ahead, so it is
never run twice). Kept light: it runs before anything heavy is imported.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui.warm import peer as warm_peer
from tui.warm.policy import (
    FORWARDED,
    HANDSHAKE_S,
    MESSAGE,
    START_WAIT_S,
    MessageKind,
    private_folder,
    socket_path,
    spawn_worker,
    worker_command,
    worker_starting,
)


def run(argv: list[str], in_process: Callable[[], int]) -> int:
    """The run through the worker; else in-process, starting a worker once the run is done."""
    started = dict(os.environ)  # before any settings' env: all a worker may be given
    try:
        path = socket_path()
    except OSError:
        path = None
    if path is None:  # confined (a sandbox's, the user's), or no safe folder: no worker
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
            spawn_worker(started)


def run_warm(argv: list[str], path: Path) -> int | None:
    """The run's exit code from the worker; None when it must run in-process."""
    mine = warm_peer.own()
    if mine is None:
        return None
    deadline = time.monotonic() + HANDSHAKE_S
    try:
        found = _connect(path, mine, deadline)
        if found is None and worker_starting(path):
            found = _wait_for_worker(path, mine)
            deadline = time.monotonic() + HANDSHAKE_S
    except NotAWorker:
        return None
    if found is None:
        return None
    conn, token = found
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
            "limits": _limits(),
            "ignored": _ignored_signals(),
            "token": token,
        }
        session = _Session(conn)
        session.start()
        pid = _hand_over(conn, json.dumps(request).encode(), deadline)
        if pid is None:
            session.abandon()
            return None
        session.accepted(pid)
        return session.wait()


class NotAWorker(Exception):
    """Something answers at the worker's name that is not a worker ccx started for this
    user in this context (a squatter, a confined process, a worker of another program), or
    the folder is open to others."""


def _connect(path: Path, mine: warm_peer.Peer, deadline: float) -> tuple[socket.socket, str] | None:
    """A connection to a worker ccx started for this user, here, and its token; None when
    nothing listens there."""
    if not private_folder(path.parent):
        raise NotAWorker(str(path.parent))
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(max(0.01, deadline - time.monotonic()))
        conn.connect(str(path))
    except OSError:
        conn.close()
        return None
    worker = warm_peer.peer_of(conn, identity=True)
    if worker is None or not _is_worker(worker, mine):
        conn.close()  # it is told nothing
        raise NotAWorker(str(path))
    return conn, worker.token


def _is_worker(worker: warm_peer.Peer, mine: warm_peer.Peer) -> bool:
    return (
        warm_peer.same_confinement(worker, mine)
        and worker.exe == os.path.realpath(sys.executable)
        and worker.cmdline[1:] == tuple(worker_command()[1:])
        and len(worker.token) == 64
    )


def _wait_for_worker(path: Path, mine: warm_peer.Peer) -> tuple[socket.socket, str] | None:
    """A worker is importing: waiting for it costs less than importing everything again."""
    try:  # the worker wrote when it started; one stuck importing is not waited for again
        started = float(path.with_suffix(".lock").read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None  # not a worker's lock (or one that has only just taken it)
    while time.time() < started + START_WAIT_S and worker_starting(path):
        time.sleep(0.01)
        found = _connect(path, mine, time.monotonic() + HANDSHAKE_S)
        if found is not None:
            return found
    return None


def _hand_over(conn: socket.socket, data: bytes, deadline: float) -> int | None:
    """Send the request; the run's pid once the worker forked it and the run may go; None
    when the worker declined, left or was too slow (the run then never starts)."""
    try:
        conn.settimeout(max(0.01, deadline - time.monotonic()))
        socket.send_fds(conn, [struct.pack("!I", len(data)) + data], [0, 1, 2])
        reply = b""
        while len(reply) < MESSAGE.size:
            conn.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = conn.recv(MESSAGE.size - len(reply))
            if not chunk:
                return None
            reply += chunk
        kind, pid = MESSAGE.unpack(reply)
        if kind != MessageKind.PID:
            return None  # INSTALL_CHANGED: the worker declined
        conn.sendall(MessageKind.GO)
    except OSError:
        return None
    conn.settimeout(None)  # from here on the run takes as long as it takes
    return pid


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _limits() -> dict[str, object]:
    """What the run must not exceed in the worker: this process's limits and priorities."""
    import resource

    limits: dict[str, object] = {
        "rlimits": {
            name: list(resource.getrlimit(getattr(resource, name)))
            for name in dir(resource)
            if name.startswith("RLIMIT_")
        }
    }
    readers: dict[str, Callable[[], object]] = {
        "nice": lambda: os.getpriority(os.PRIO_PROCESS, 0),
        "cpus": lambda: sorted(os.sched_getaffinity(0)),
        "scheduler": lambda: [os.sched_getscheduler(0), os.sched_getparam(0).sched_priority],
        "oom_score_adj": lambda: int(Path("/proc/self/oom_score_adj").read_text()),
    }
    for name, read in readers.items():
        try:
            limits[name] = read()
        except (OSError, ValueError):
            pass
    return limits


def _ignored_signals() -> list[str]:
    """The forwarded signals this process ignores (``nohup``, a script's background job):
    the run ignores them too, as a run in this process would."""
    return [name for name in FORWARDED if signal.getsignal(getattr(signal, name)) is signal.SIG_IGN]


class _Session:
    """One run through the worker: forward signals, read its messages, give its exit status."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.pid: int | None = None
        self.pending: list[int] = []
        self.received: int | None = None  # the last signal forwarded to the run
        self.saved_terminal: list[Any] | None = None
        self.previous: dict[int, object] = {}

    def start(self) -> None:
        """Signals from now on are the run's: held until it has a pid, then forwarded.

        One this process ignores (``nohup``) stays ignored, as the run would ignore it.
        """
        self.saved_terminal = _terminal_modes()
        for name in (*FORWARDED, "SIGTSTP"):
            signum = getattr(signal, name)
            previous = signal.getsignal(signum)
            if previous is not signal.SIG_IGN:
                self.previous[signum] = previous
                signal.signal(signum, self._stop if name == "SIGTSTP" else self._forward)

    def accepted(self, pid: int) -> None:
        self.pid = pid
        for signum in self.pending:
            self._send_signal(signum)

    def abandon(self) -> None:
        """No run in the worker after all: signals are this process's again, and those that
        came meanwhile are raised again for it."""
        for signum, previous in self.previous.items():
            signal.signal(signum, previous)  # type: ignore[arg-type]
        for signum in self.pending:
            signal.raise_signal(signum)

    def wait(self) -> int | None:
        kind, value = self._read_messages()
        _restore_terminal(self.saved_terminal)
        if kind == "signal":
            _die_of(value)
            return 128 + value
        return None if kind == "declined" else value

    def _read_messages(self) -> tuple[str, int]:
        """("code", n), ("signal", n), or ("declined", 0): the run is not one the worker takes."""
        declined, child_code = False, None
        while (message := self._next()) is not None:
            kind, value = message
            if kind == MessageKind.NOT_HEADLESS:
                declined = True
            elif kind == MessageKind.CHILD_CODE:
                child_code = value
            elif kind == MessageKind.EXIT_CODE:
                return ("declined", 0) if declined else ("code", value)
            elif kind == MessageKind.SIGNAL:
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


def _terminal_modes() -> list[Any] | None:
    if not os.isatty(0):
        return None
    import termios

    try:
        return termios.tcgetattr(0)
    except termios.error:
        return None


def _restore_terminal(saved: list[Any] | None) -> None:
    """A run must never leave the terminal in another mode than it found it."""
    if saved is None:
        return
    import termios

    try:
        if termios.tcgetattr(0) != saved:
            termios.tcsetattr(0, termios.TCSADRAIN, saved)
    except termios.error:
        pass
