"""One headless run in a child forked by the warm worker: it becomes the client's run.

It waits for the client's go-ahead (a client that gave up waiting runs
in-process, so this run must then never start), takes the client's session
of its own, descriptors, environment, signal dispositions, umask, cwd, argv and limits
(``tui.warm.policy`` has the design), runs, tells the client its code and
exits; it never returns into the worker.
"""

from __future__ import annotations

import os
import resource
import signal
import socket
import sys
import time
from typing import Any

from tui.warm.policy import FORWARDED, HANDSHAKE_S, MESSAGE, MessageKind


def send(conn: socket.socket, kind: MessageKind, value: int) -> None:
    try:
        conn.sendall(MESSAGE.pack(kind, value))
    except OSError:
        pass


def become_run(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the child: become the client's run, report, exit. Never returns into the worker."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the worker's handler would unwind into it
    if not _go_ahead(conn):
        os._exit(0)  # the client gave up and runs in-process: this run must never start
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
        send(conn, MessageKind.CHILD_CODE, code)
        os._exit(code & 0xFF)


def _go_ahead(conn: socket.socket) -> bool:
    try:
        conn.settimeout(HANDSHAKE_S + 5)
        return conn.recv(1) == MessageKind.GO
    except OSError:
        return False


def _take_over(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """The client's session, descriptors, environment, umask, limits, cwd and argv."""
    import tempfile

    conn.settimeout(None)
    os.setsid()
    for target, fd in enumerate(fds):
        if fd != target:
            os.dup2(fd, target)
            os.close(fd)
    _take_signals(request.get("ignored") or [])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ["CCX_WARM_CHILD"] = "1"  # for the run's tools to tell (and the tests)
    os.umask(int(request["umask"]))
    _take_limits(request.get("limits") or {})
    os.chdir(request["cwd"])
    tempfile.tempdir = None  # gettempdir() caches: read TMPDIR again
    sys.argv = [str(request.get("argv0") or "ccx"), *request["argv"]]
    _reopen_std_streams()
    _watch_client(conn)


def _take_signals(ignored: list[str]) -> None:
    """The client's signal dispositions, whatever the worker was started with: the ones the
    client ignores ignored (and so by the run's commands), the others at their defaults."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for name in FORWARDED:
        signum = getattr(signal, name)
        if name in ignored:
            signal.signal(signum, signal.SIG_IGN)
        elif signum == signal.SIGINT:
            signal.signal(signum, signal.default_int_handler)
        else:
            signal.signal(signum, signal.SIG_DFL)


def _take_limits(limits: dict[str, Any]) -> None:
    """The client's resource limits, nice level, CPUs, scheduling and OOM score, as far as
    the worker may set them: a run may end up more limited than its client, never less."""
    for name, (soft, hard) in (limits.get("rlimits") or {}).items():
        which = getattr(resource, name, None)
        if not name.startswith("RLIMIT_") or not isinstance(which, int):
            continue
        _, current_hard = resource.getrlimit(which)
        hard = _lower(hard, current_hard)  # a hard limit cannot be raised
        try:
            resource.setrlimit(which, (_lower(soft, hard), hard))
        except (OSError, ValueError):
            pass
    for apply in (
        lambda: os.setpriority(os.PRIO_PROCESS, 0, int(limits["nice"])),
        lambda: os.sched_setaffinity(0, [int(cpu) for cpu in limits["cpus"]]),
        lambda: os.sched_setscheduler(0, *_scheduling(limits["scheduler"])),
        lambda: _write("/proc/self/oom_score_adj", str(int(limits["oom_score_adj"]))),
    ):
        try:
            apply()
        except (KeyError, OSError, TypeError, ValueError):
            pass  # raising a priority or lowering the OOM score: the worker's, lower, stays


def _lower(a: int, b: int) -> int:
    if a == resource.RLIM_INFINITY:
        return b
    if b == resource.RLIM_INFINITY:
        return a
    return min(a, b)


def _scheduling(value: list[int]) -> tuple[int, Any]:
    policy, priority = value
    return int(policy), os.sched_param(int(priority))


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as file:
        file.write(text)


def _run(conn: socket.socket, argv: list[str]) -> int:
    from tui.cli import main as cli

    parsed = cli.parse_args(argv, standalone=True)
    if isinstance(parsed, int):
        return parsed
    if not parsed.print_mode:
        send(conn, MessageKind.NOT_HEADLESS, 0)  # the client opens the session itself
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
    # typeshed marks these Final; the warm child must point them at the client's descriptors.
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr  # type: ignore[misc]


def _text(fd: int, mode: str, errors: str, line_buffered: bool) -> Any:
    buffering = 1 if line_buffered else -1
    return open(fd, mode, encoding="utf-8", errors=errors, closefd=False, buffering=buffering)
