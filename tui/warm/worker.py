"""The warm worker behind ``tui.warm.policy``: imports once, forks one child per headless run.

Started detached by a headless run (``python -I -m tui.warm.worker``)
with a clean environment; ``tui.warm.policy`` has the design and what keeps it
correct. One thread, one selector: the listening socket, each connection
still sending its request (non-blocking, each with its own deadline, so a
slow peer holds nobody else up), and a pidfd per running child, so the worker
reports each child's exit status (code or signal) to its client. It holds a
lock per fingerprint for its whole life, so two first runs start one worker.

Each peer is checked when it is accepted (``tui.warm.peer``: the same
unconfined context as the worker's, else it is closed unread); its request
must carry the worker's token. Before each fork the worker re-reads the
stat of every file it imported (``ImportedFiles``); if one changed it
declines the run and leaves.

Messages to the client (``warm.MESSAGE``, their kinds ``warm.MessageKind``):
PID (worker, after the fork; the child waits for the client's GO before it
does anything), INSTALL_CHANGED (worker: run in-process), NOT_HEADLESS
(child: not a headless run after all, run in-process), CHILD_CODE (child,
just before it exits: the fallback if the worker is gone), EXIT_CODE /
SIGNAL (worker, from waitpid).
"""

from __future__ import annotations

import fcntl
import hmac
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tui.warm import peer as warm_peer
from tui.warm import policy as warm
from tui.warm.child import become_run

CHECK_S = 2.0  # how often the worker looks whether its socket and name are still its own
STALE_CHECK_S = 30.0  # how often an idle worker looks whether its imported files changed
MAX_PENDING = 32  # connections still sending their request


def main() -> None:
    mine = warm_peer.own()
    path = warm.socket_path()
    if mine is None or path is None:
        return  # confined (a sandbox's, a user's), or nowhere safe for a socket: no worker
    folder = path.parent
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return
    if not warm.private_folder(folder):
        return  # somebody else's folder, or one others may enter: no worker at all
    lock = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another worker of this fingerprint is starting or serving
    os.ftruncate(lock, 0)
    os.write(lock, repr(time.time()).encode())  # when it started, for runs that wait for it
    worker = Worker(path, lock, *warm_peer.token_holder())
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stopped: leave no socket behind
    try:
        _preload()
        worker.imported = ImportedFiles.snapshot()
        worker.serve()
    finally:
        worker.release_lock()


# Imported by a run's first request, beyond what the modules below import at their top.
REQUEST_MODULES = (
    "tui.session.credentials",
    "anyio._backends._asyncio",
    "concurrent.futures.thread",
    "h11",
    "httpcore2",
    "importlib.resources.readers",
    "opentelemetry.propagate",
    "truststore",
)
# What a cold run imports only when it is used (tests/e2e/test_cold_path.py): the worker
# has it ready for the runs that do use it.
WHEN_USED_MODULES = (
    "agent.permissions.bash",
    "agent.plugins.manifest",
    "agent.plugins.marketplaces",
    "difflib",
    "tui.cli.typer_app",
    "tui.commands.builtin",
    "tui.session.rewind",
    "tui.session.status_line",
    "typer",
)


def _preload() -> None:
    """Import everything a headless run needs, so that a child imports (almost) nothing."""
    import importlib

    from agent.mcp.client_import import import_client
    from agent.model.sdk_import import import_sdk
    from agent.shell import split
    from tools import registry
    from tools.base import Tool
    from tools.exit_plan_mode import ExitPlanModeTool
    from tools.skill import SkillTool
    from tui.cli import main as cli

    for name in (*REQUEST_MODULES, *WHEN_USED_MODULES):
        try:
            importlib.import_module(name)
        except ImportError:  # another version of a dependency: the child imports what it needs
            pass
    import_client()  # the mcp package's client side, for runs with MCP servers
    cli.parse_args(["-p", "warm-up"], standalone=False)  # the options, read once
    split._parser()  # the bash grammar: the same for every run
    warmed: list[type[Tool[Any]]] = [type(t) for t in registry.default_tools()]
    warmed += [SkillTool, ExitPlanModeTool]
    for tool in warmed:
        tool.input_schema()  # the tools' JSON schemas (cached): the same for every run
    import_sdk()  # the SDK as far as a request needs it (agent/model/sdk_import.py)
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


class ImportedFiles:
    """The stat of every file the worker's code came from, to tell when one changed.

    Every imported module's file, the Python, ccx's data files (prompts) and the
    folders and .pth files on sys.path (an install adds or removes entries there).
    An edit in place changes a file's mtime and ctime, a replacement its inode;
    ctime cannot be set back without changing the clock.
    """

    def __init__(self, stats: dict[str, tuple[int, ...] | None]) -> None:
        self.stats = stats

    @classmethod
    def snapshot(cls) -> ImportedFiles:
        return cls.of(_imported_paths())

    @classmethod
    def of(cls, paths: Iterable[str]) -> ImportedFiles:
        return cls({path: _stat(path) for path in sorted(paths)})

    def changed(self) -> bool:
        return any(_stat(path) != stat for path, stat in self.stats.items())


def _imported_paths() -> set[str]:
    paths = {os.path.realpath(sys.executable)}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            paths.add(file)
    root = Path(__file__).resolve().parents[2]
    for package in warm.PACKAGES:
        for folder, dirs, files in os.walk(root / package):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            paths.update(os.path.join(folder, name) for name in files)
    for entry in sys.path:
        if os.path.isdir(entry):
            paths.add(entry)
            paths.update(
                os.path.join(entry, name) for name in os.listdir(entry) if name.endswith(".pth")
            )
    return paths


def _stat(path: str) -> tuple[int, ...] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


class Worker:
    """The listening socket, the requests on their way and the children it forked, until
    idle or its install changed."""

    def __init__(self, path: Path, lock: int, token: str, token_fd: int) -> None:
        self.path = path
        self.lock: int | None = lock
        self.token = token
        self.token_fd = token_fd  # held open: its name is the token (warm_peer)
        self.imported = ImportedFiles({})
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, conn)
        self.pending: dict[int, PendingRequest] = {}  # by the connection's descriptor
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
        last_active = last_check = time.monotonic()
        idle = warm.idle_seconds()
        while self.listener is not None or self.children or self.pending:
            for key, _events in self.selector.select(timeout=self._timeout()):
                if key.fileobj is self.listener:
                    self._accept()
                elif key.data == "child":
                    self._reap(int(key.fd))
                else:
                    self._receive(int(key.fd))
                last_active = time.monotonic()
            now = time.monotonic()
            for fd in [fd for fd, request in self.pending.items() if request.deadline <= now]:
                self._drop(fd)  # too slow: its client runs in-process
            if self.listener is None:
                continue
            stale = now - last_check > STALE_CHECK_S
            if stale:
                last_check = now
            quiet = not self.children and not self.pending and now - last_active > idle
            if quiet or not self._still_current() or (stale and self.imported.changed()):
                self._stop_listening()

    def _timeout(self) -> float:
        now = time.monotonic()
        return max(0.0, min([CHECK_S, *(r.deadline - now for r in self.pending.values())]))

    def _listen(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        temporary = self.path.with_suffix(f".{os.getpid()}")
        listener.bind(str(temporary))
        os.chmod(temporary, 0o600)
        os.replace(temporary, self.path)  # never a half-made socket under the real name
        stat = os.stat(self.path)
        self.identity = (stat.st_dev, stat.st_ino)
        listener.listen(64)
        listener.setblocking(False)
        self.listener = listener
        self.selector.register(listener, selectors.EVENT_READ)

    def _stop_listening(self) -> None:
        assert self.listener is not None
        self.selector.unregister(self.listener)
        if self._still_ours():
            os.unlink(self.path)
        self.listener.close()
        self.listener = None
        for fd in list(self.pending):
            self._drop(fd)
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

    def _still_current(self) -> bool:
        """The socket is still this worker's, and still the name for the context it is in
        (moved to another cgroup, say, its clients are elsewhere: it would refuse them all)."""
        try:
            return self._still_ours() and warm.socket_path() == self.path
        except OSError:
            return False

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
        mine = warm_peer.own()
        if len(self.pending) >= MAX_PENDING or mine is None:
            conn.close()
            return
        peer = warm_peer.peer_of(conn, identity=False)
        if peer is None or not warm_peer.same_confinement(peer, mine):
            conn.close()  # another user, a sandboxed or otherwise confined process: unread
            return
        conn.setblocking(False)
        self.pending[conn.fileno()] = PendingRequest(conn, time.monotonic() + warm.READ_S)
        self.selector.register(conn, selectors.EVENT_READ, "request")

    def _receive(self, fd: int) -> None:
        request = self.pending[fd]
        try:
            complete = request.read()
        except (OSError, ValueError):
            self._drop(fd)
            return
        if complete:
            self.selector.unregister(request.conn)
            del self.pending[fd]
            self._start(request)

    def _drop(self, fd: int) -> None:
        request = self.pending.pop(fd)
        self.selector.unregister(request.conn)
        request.close()

    def _start(self, request: PendingRequest) -> None:
        """Fork the run, unless the request is not one of ccx's or the install changed."""
        try:
            body = json.loads(request.data[4:])
        except ValueError:
            body = None
        token = body.get("token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not hmac.compare_digest(token, self.token):
            request.close()  # a peer that may not read the worker's /proc/PID/fd
            return
        if self.imported.changed():
            _tell(request.conn, warm.MessageKind.INSTALL_CHANGED, 0)  # the client runs in-process
            request.close()
            self._stop_listening()
            return
        conn, fds = request.conn, request.fds
        pid = os.fork()
        if pid == 0:
            self._close_in_child(conn)
            become_run(conn, body, fds)
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.children[pidfd] = (pid, conn)
        self.selector.register(pidfd, selectors.EVENT_READ, "child")
        _tell(conn, warm.MessageKind.PID, pid)

    def _close_in_child(self, keep: socket.socket) -> None:
        self.selector.close()
        if self.listener is not None:
            self.listener.close()
        for pidfd, (_pid, conn) in self.children.items():
            os.close(pidfd)
            conn.close()
        for request in self.pending.values():
            request.close()
        if self.lock is not None:
            os.close(self.lock)  # the lock stays the worker's
        os.close(self.token_fd)  # the token stays the worker's: no run can show it

    def _reap(self, pidfd: int) -> None:
        pid, conn = self.children.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        try:
            _pid, status = os.waitpid(pid, 0)
        except ChildProcessError:
            status = None
        if status is not None and os.WIFSIGNALED(status):
            _tell(conn, warm.MessageKind.SIGNAL, os.WTERMSIG(status))
        elif status is not None:
            _tell(conn, warm.MessageKind.EXIT_CODE, os.waitstatus_to_exitcode(status))
        conn.close()


def _tell(conn: socket.socket, kind: warm.MessageKind, value: int) -> None:
    """A message to a client, never waiting on it (the child sets the shared socket's mode)."""
    try:
        conn.send(warm.MESSAGE.pack(kind, value), socket.MSG_DONTWAIT)
    except OSError:
        pass


class PendingRequest:
    """A connection still sending its request: 4 bytes of length, the JSON, and the
    client's three descriptors (stdin, stdout, stderr) along the way."""

    def __init__(self, conn: socket.socket, deadline: float) -> None:
        self.conn = conn
        self.deadline = deadline
        self.data = bytearray()
        self.fds: list[int] = []

    def read(self) -> bool:
        """What has arrived; True once the request is whole. ValueError: not a request."""
        try:
            data, fds, _flags, _addr = socket.recv_fds(self.conn, 65536, 3)
        except BlockingIOError:
            return False
        self.fds.extend(fds)
        self.data += data
        if not data and not fds:
            raise ValueError("the client left before its request was whole")
        if len(self.fds) > 3:
            raise ValueError("more descriptors than a request has")
        if len(self.data) < 4:
            return False
        size = struct.unpack("!I", self.data[:4])[0]
        if size > warm.MAX_REQUEST or len(self.data) > 4 + size:
            raise ValueError("an oversized request")
        if len(self.data) < 4 + size:
            return False
        if len(self.fds) != 3:
            raise ValueError("a request needs its three descriptors")
        return True

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []
        self.conn.close()


if __name__ == "__main__":
    try:
        main()
    except SystemExit:  # SIGTERM: main() has cleaned up on the way out
        pass
    os._exit(0)  # no teardown of thousands of modules, one by one
