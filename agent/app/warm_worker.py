"""The warm worker behind ``agent.app.warm``: imports once, forks one child per headless run.

Started detached by a headless run (``python -P -m agent.app.warm_worker``);
``agent.app.warm`` has the design and what keeps it correct. One thread, one
selector: the listening socket, and a pidfd per running child, so the worker
reports each child's exit status (code or signal) to its client. It holds a
lock per fingerprint for its whole life, so two first runs start one worker.

Messages to the client (``warm.MESSAGE``): P pid (worker, after the fork),
D (child: not a headless run after all, run in-process), C code (child, just
before it exits: the fallback if the worker is gone), X code / S signal
(worker, from waitpid).
"""

from __future__ import annotations

import fcntl
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

from agent.app import warm

CHECK_S = 2.0  # how often the worker looks whether its install changed


def main() -> None:
    path = warm.socket_path()
    folder = path.parent
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return
    if not warm.private_folder(folder):
        return  # somebody else's folder, or one others may enter: no worker at all
    lock = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another worker of this fingerprint is starting or serving
    worker = Worker(path, lock)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stopped: leave no socket behind
    try:
        _preload()
        if warm.socket_path() == path:  # the install did not change while importing
            worker.serve()
    finally:
        worker.release_lock()


# Imported by a run's first request, beyond what the modules below import at their top.
REQUEST_MODULES = (
    "agent.app.credentials",
    "anyio._backends._asyncio",
    "concurrent.futures.thread",
    "h11",
    "httpcore2",
    "importlib.resources.readers",
    "opentelemetry.propagate",
    "truststore",
)


def _preload() -> None:
    """Import everything a headless run needs, so that a child imports (almost) nothing."""
    import importlib

    import anthropic

    import agent.app.headless
    import agent.app.runtime
    import agent.app.stream_json.session  # noqa: F401
    from agent.app import cli
    from agent.shell import split

    for name in REQUEST_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # another version of a dependency: the child imports what it needs
            pass
    cli.parse_args(["-p", "warm-up"], standalone=False)  # typer, click and the options, run once
    split._parser()  # the bash grammar: the same for every run
    anthropic.AsyncAnthropic  # noqa: B018  (resolves the SDK's lazily imported client)
    _warm_stream_parser()


def _warm_stream_parser() -> None:
    """Build the SDK's (cached) validator of stream events once: some 20 ms of every run."""
    try:
        from anthropic import _models
        from anthropic.types import RawMessageStreamEvent

        _models.validate_type(type_=RawMessageStreamEvent, value={"type": "message_stop"})  # type: ignore[arg-type]
    except Exception:  # a private part of the SDK: another version may not have it
        pass


class Worker:
    """The listening socket and the children it forked, until idle or its install changed."""

    def __init__(self, path: Path, lock: int) -> None:
        self.path = path
        self.lock: int | None = lock
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, conn)
        self.listener: socket.socket | None = None
        self.identity: tuple[int, int] | None = None

    def serve(self) -> None:
        self._listen()
        try:
            self._loop()
        finally:
            if self.listener is not None:
                self._stop_listening()

    def _loop(self) -> None:
        last_active = time.monotonic()
        idle = warm.idle_seconds()
        while self.listener is not None or self.children:
            for key, _events in self.selector.select(timeout=CHECK_S):
                if key.fileobj is self.listener:
                    self._accept()
                else:
                    self._reap(int(key.fd))
                last_active = time.monotonic()
            quiet = not self.children and time.monotonic() - last_active > idle
            if self.listener is not None and (quiet or not self._still_current()):
                self._stop_listening()

    def _listen(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        temporary = self.path.with_suffix(f".{os.getpid()}")
        listener.bind(str(temporary))
        os.chmod(temporary, 0o600)
        os.replace(temporary, self.path)  # never a half-made socket under the real name
        stat = os.stat(self.path)
        self.identity = (stat.st_dev, stat.st_ino)
        listener.listen(64)
        self.listener = listener
        self.selector.register(listener, selectors.EVENT_READ)

    def _still_current(self) -> bool:
        """The socket is still ours and the install is the one this worker imported."""
        try:
            stat = os.stat(self.path)
        except OSError:
            return False
        return (stat.st_dev, stat.st_ino) == self.identity and warm.socket_path() == self.path

    def _stop_listening(self) -> None:
        assert self.listener is not None
        self.selector.unregister(self.listener)
        if self._still_ours():
            os.unlink(self.path)
        self.listener.close()
        self.listener = None
        self.release_lock()  # a new worker may start while this one's runs finish

    def release_lock(self) -> None:
        if self.lock is None:
            return
        try:
            os.unlink(self.path.with_suffix(".lock"))
        except OSError:
            pass
        os.close(self.lock)
        self.lock = None

    def _still_ours(self) -> bool:
        try:
            stat = os.stat(self.path)
        except OSError:
            return False
        return (stat.st_dev, stat.st_ino) == self.identity

    def _accept(self) -> None:
        assert self.listener is not None
        try:
            conn, _addr = self.listener.accept()
        except OSError:
            return
        if warm.peer_uid(conn) != os.getuid():
            conn.close()  # never another user's run
            return
        conn.settimeout(5)  # a client that connects and says nothing must not hold the worker
        try:
            request, fds = _read_request(conn)
        except (OSError, ValueError):
            conn.close()
            return
        pid = os.fork()
        if pid == 0:
            self._close_in_child(conn)
            _become_run(conn, request, fds)
        for fd in fds:
            os.close(fd)
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = None
        if pidfd is not None:
            self.children[pidfd] = (pid, conn)
            self.selector.register(pidfd, selectors.EVENT_READ)
        _send(conn, b"P", pid)
        if pidfd is None:
            conn.close()  # the child's own C message is the client's exit code

    def _close_in_child(self, keep: socket.socket) -> None:
        self.selector.close()
        if self.listener is not None:
            self.listener.close()
        for pidfd, (_pid, conn) in self.children.items():
            os.close(pidfd)
            if conn is not keep:
                conn.close()
        if self.lock is not None:
            os.close(self.lock)  # the lock stays the worker's

    def _reap(self, pidfd: int) -> None:
        pid, conn = self.children.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        try:
            _pid, status = os.waitpid(pid, 0)
        except ChildProcessError:
            status = None
        if status is not None and os.WIFSIGNALED(status):
            _send(conn, b"S", os.WTERMSIG(status))
        elif status is not None:
            _send(conn, b"X", os.waitstatus_to_exitcode(status))
        conn.close()


def _send(conn: socket.socket, kind: bytes, value: int) -> None:
    try:
        conn.sendall(warm.MESSAGE.pack(kind, value))
    except OSError:
        pass


def _read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    head, fds, _flags, _addr = socket.recv_fds(conn, 4 + 65536, 3)
    if len(fds) != 3 or len(head) < 4:
        for fd in fds:
            os.close(fd)
        raise ValueError("a request needs its three descriptors")
    size = struct.unpack("!I", head[:4])[0]
    body = head[4:]
    while len(body) < size <= warm.MAX_REQUEST:
        chunk = conn.recv(size - len(body))
        if not chunk:
            break
        body += chunk
    if len(body) != size:
        for fd in fds:
            os.close(fd)
        raise ValueError("a truncated or oversized request")
    return json.loads(body), fds


def _become_run(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the child: become the client's run, report, exit. Never returns into the worker."""
    code = 1
    try:
        _take_over(conn, request, fds)
        code = _run(conn, list(request["argv"]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        _send(conn, b"C", code)
        os._exit(code & 0xFF)


def _take_over(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """The client's session, descriptors, environment, umask, cwd and argv."""
    import tempfile

    conn.settimeout(None)
    os.setsid()
    for target, fd in enumerate(fds):
        if fd != target:
            os.dup2(fd, target)
            os.close(fd)
    for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ["CCX_WARM_CHILD"] = "1"  # for the run's tools to tell (and the tests)
    os.umask(int(request["umask"]))
    os.chdir(request["cwd"])
    tempfile.tempdir = None  # gettempdir() caches: read TMPDIR again
    sys.argv = [str(request.get("argv0") or "ccx"), *request["argv"]]
    _reopen_std_streams()
    _watch_client(conn)


def _run(conn: socket.socket, argv: list[str]) -> int:
    from agent.app import cli

    parsed = cli.parse_args(argv, standalone=True)
    if isinstance(parsed, int):
        return parsed
    if not parsed.print_mode:
        _send(conn, b"D", 0)  # an interactive session after all: the client opens it itself
        return 0
    return cli.dispatch(parsed)


def _watch_client(conn: socket.socket) -> None:
    """When the client goes away (killed, even with SIGKILL), cancel the run as SIGTERM does."""
    import threading

    def watch() -> None:
        try:
            while conn.recv(4096):
                pass
        except OSError:
            pass
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="ccx-warm-client", daemon=True).start()


def _reopen_std_streams() -> None:
    """sys.stdin/out/err on the client's descriptors, buffered as Python would for them."""
    line_out = bool(os.environ.get("PYTHONUNBUFFERED")) or os.isatty(1)
    sys.stdin = _text(0, "r", "surrogateescape", False)
    sys.stdout = _text(1, "w", "surrogateescape", line_out)
    sys.stderr = _text(2, "w", "backslashreplace", True)
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr


def _text(fd: int, mode: str, errors: str, line_buffered: bool) -> Any:
    buffering = 1 if line_buffered else -1
    return open(fd, mode, encoding="utf-8", errors=errors, closefd=False, buffering=buffering)


if __name__ == "__main__":
    main()
