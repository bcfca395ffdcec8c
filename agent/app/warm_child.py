"""One headless run in a child forked by the warm worker: it becomes the client's run.

It takes the client's session of its own, descriptors, environment, umask,
cwd and argv (``agent.app.warm`` has the design), runs, tells the client its
code and exits; it never returns into the worker.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from typing import Any

from agent.app.warm import MESSAGE


def send(conn: socket.socket, kind: bytes, value: int) -> None:
    try:
        conn.sendall(MESSAGE.pack(kind, value))
    except OSError:
        pass


def become_run(conn: socket.socket, request: dict, fds: list[int]) -> None:
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
        send(conn, b"C", code)
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
        send(conn, b"D", 0)  # an interactive session after all: the client opens it itself
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
