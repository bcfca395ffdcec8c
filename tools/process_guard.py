"""A guardian process that kills ccx's Bash process groups when ccx ends, however it ends.

Started once per ccx process, on the first Bash command, in a session of its
own (so terminal signals do not reach it). It holds the read end of a pipe
whose only write end is in ccx; ccx writes "+pgid" for each command's process
group and "-pgid" once the group is gone, and ">path" / "<path" for a temporary
file a command uses and once ccx has removed it. When the pipe closes — ccx
exited, crashed or was killed with SIGKILL — the guardian SIGKILLs every group
still registered, removes the files still registered and exits. A process that
leaves its group (``setsid``) escapes.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable

_GUARDIAN = r"""
import os, signal
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGTSTP, signal.SIGQUIT):
    signal.signal(s, signal.SIG_IGN)
groups, files, pending = set(), set(), b""
while True:
    try:
        data = os.read(0, 65536)
    except InterruptedError:
        continue
    except OSError:
        break
    if not data:
        break
    *lines, pending = (pending + data).split(b"\n")
    for line in lines:
        if line[:1] == b"+":
            groups.add(int(line[1:]))
        elif line[:1] == b"-":
            groups.discard(int(line[1:]))
        elif line[:1] == b">":
            files.add(line[1:])
        elif line[:1] == b"<":
            files.discard(line[1:])
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
for path in files:
    try:
        os.unlink(path)
    except OSError:
        pass
"""


class ProcessGuard:
    """ccx's side of the guardian: register and forget process groups."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._write_fd: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self.failed: str | None = None  # why the guardian could not be started

    def register(self, pgid: int) -> None:
        self._send(f"+{pgid}\n")

    def unregister(self, pgid: int) -> None:
        self._send(f"-{pgid}\n")

    def remove_at_end(self, path: str) -> None:
        """Remove the file ``path`` when ccx ends, unless ``forget`` comes first."""
        if "\n" not in path:
            self._send(f">{path}\n")

    def forget(self, path: str) -> None:
        """``path`` is gone (ccx removed it): nothing to remove at the end."""
        if "\n" not in path:
            self._send(f"<{path}\n")

    def child_registration(self) -> Callable[[], None] | None:
        """A preexec step that registers the new child's group from inside the child.

        The parent learns the pid only once the child runs; a ccx killed in between
        would leave the command unguarded. The child writes its own ``+pid`` (its group,
        as it starts a session) before it execs: one short write to a pipe is atomic.
        """
        with self._lock:
            if self._write_fd is None and not self._start():
                return None
            assert self._write_fd is not None
            fd = self._write_fd

        def register_self() -> None:
            with contextlib.suppress(OSError):
                os.write(fd, f"+{os.getpid()}\n".encode())

        return register_self

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def close(self) -> None:
        """End the guardian now; it kills whatever is still registered."""
        with self._lock:
            if self._write_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._write_fd)
                self._write_fd = None
            if self._process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=2)
                self._process = None

    def _send(self, line: str) -> None:
        with self._lock:
            if self._write_fd is None and not self._start():
                return
            assert self._write_fd is not None
            try:
                os.write(self._write_fd, line.encode())
            except OSError:  # the guardian died: start a new one next time
                with contextlib.suppress(OSError):
                    os.close(self._write_fd)
                self._write_fd = None

    def _start(self) -> bool:
        read_fd, write_fd = os.pipe()  # not inheritable: no Bash child can hold it open
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _GUARDIAN],
                stdin=read_fd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            os.close(write_fd)
            self.failed = str(exc)
            return False
        finally:
            os.close(read_fd)
        self._write_fd = write_fd
        return True


_guard = ProcessGuard()


def process_guard() -> ProcessGuard:
    """The guardian of this ccx process (one for every Bash tool in it)."""
    return _guard
