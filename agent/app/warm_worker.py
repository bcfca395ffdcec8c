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

from agent.app import warm
from agent.app.warm_child import become_run, send

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
    os.ftruncate(lock, 0)
    os.write(lock, repr(time.time()).encode())  # when it started, for runs that wait for it
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
    from tools import registry
    from tools.exit_plan_mode import ExitPlanModeTool
    from tools.skill import SkillTool

    for name in REQUEST_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # another version of a dependency: the child imports what it needs
            pass
    cli.parse_args(["-p", "warm-up"], standalone=False)  # typer, click and the options, run once
    split._parser()  # the bash grammar: the same for every run
    for tool in (*registry.default_tools(), SkillTool, ExitPlanModeTool):
        tool.input_schema()  # the tools' JSON schemas (cached): the same for every run
    anthropic.AsyncAnthropic  # noqa: B018  (resolves the SDK's lazily imported client)
    _warm_sdk()


def _warm_sdk() -> None:
    """Build the SDK's (cached) validators a run needs once: some 50-100 ms of every run."""
    import typing

    try:
        from anthropic import _models
        from anthropic.types import ModelInfo, RawMessageStreamEvent

        union = typing.get_args(RawMessageStreamEvent)[0]  # the SDK validates the bare Union
        _models.validate_type(type_=union, value={"type": "message_stop"})
        info = {"id": "m", "type": "model", "created_at": "2025-01-01T00:00:00Z"}
        _models.construct_type(type_=ModelInfo, value=info | {"display_name": "m"})
    except Exception:  # private parts of the SDK: another version may not have them
        pass


class Worker:
    """The listening socket and the children it forked, until idle or its install changed."""

    def __init__(self, path: Path, lock: int) -> None:
        self.path = path
        self.lock: int | None = lock
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, conn)
        self.listener: socket.socket | None = None
        self.untracked: set[int] = set()  # children without a pidfd (an old kernel): reaped here
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
            self._reap_untracked()
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
            become_run(conn, request, fds)
        for fd in fds:
            os.close(fd)
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = None
        if pidfd is not None:
            self.children[pidfd] = (pid, conn)
            self.selector.register(pidfd, selectors.EVENT_READ)
        send(conn, b"P", pid)
        if pidfd is None:
            self.untracked.add(pid)
            conn.close()  # the child's own C message is the client's exit code

    def _reap_untracked(self) -> None:
        for pid in list(self.untracked):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.untracked.discard(pid)

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
            send(conn, b"S", os.WTERMSIG(status))
        elif status is not None:
            send(conn, b"X", os.waitstatus_to_exitcode(status))
        conn.close()


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


if __name__ == "__main__":
    try:
        main()
    except SystemExit:  # SIGTERM: main() has cleaned up on the way out
        pass
    os._exit(0)  # no teardown of thousands of modules, one by one
