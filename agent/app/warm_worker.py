"""The warm worker behind ``agent.app.warm``: imports once, forks one child per run.

Started by the first warm-enabled run (``python -m agent.app.warm_worker``);
see ``agent.app.warm`` for the design and what keeps it correct.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

from agent.app import cli
from agent.app.warm import IDLE_S, MAX_REQUEST, socket_path


def serve() -> None:
    """Import everything a run needs, then fork one child per connection until idle."""
    import anthropic  # noqa: F401  (the point: imported once, here)

    import agent.app.headless
    import agent.app.runtime
    import agent.app.stream_json.session  # noqa: F401
    cli._typer_app({})  # typer and click imported too
    path = socket_path()
    path.parent.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path.parent, 0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    temporary = path.with_suffix(f".{os.getpid()}")
    listener.bind(str(temporary))
    os.replace(temporary, path)  # never a half-made socket under the real name
    listener.listen(16)
    listener.settimeout(IDLE_S)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    try:
        while True:
            try:
                conn, _addr = listener.accept()
            except TimeoutError:
                break
            with conn:
                _serve_one(conn, listener)
    finally:
        try:
            if path.exists() and os.path.samestat(path.stat(), os.stat(listener.getsockname())):
                path.unlink()
        except OSError:
            pass


def _serve_one(conn: socket.socket, listener: socket.socket) -> None:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    if struct.unpack("3i", creds)[1] != os.getuid():
        return
    conn.settimeout(5)  # a client that connects and says nothing must not hold the worker
    try:
        request, fds = _read_request(conn)
    except (OSError, ValueError):
        return
    pid = os.fork()
    if pid == 0:
        listener.close()
        _become_run(conn, request, fds)
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(struct.pack("!i", pid))
    except OSError:
        pass


def _read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    head, fds, _flags, _addr = socket.recv_fds(conn, 4 + 65536, 3)
    if len(fds) != 3 or len(head) < 4:
        raise ValueError("a request needs its three descriptors")
    size = struct.unpack("!I", head[:4])[0]
    if size > MAX_REQUEST:
        raise ValueError("request too large")
    body = head[4:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ValueError("truncated request")
        body += chunk
    return json.loads(body), fds


def _become_run(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """In the child: take the client's descriptors, cwd and env, run, report, exit."""
    code = 1
    try:
        conn.settimeout(None)
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ["CCX_WARM_CHILD"] = "1"
        os.chdir(request["cwd"])
        _reopen_std_streams()
        code = cli.run(list(request["argv"]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # report and exit: a child must never return into the worker
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        try:
            conn.sendall(struct.pack("!i", code))
        except OSError:
            pass
        os._exit(code)


def _reopen_std_streams() -> None:
    """sys.stdin/out/err on the client's descriptors, with the client's encoding settings."""
    sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115


if __name__ == "__main__":
    serve()
