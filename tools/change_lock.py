"""One change at a time to a file, across every ccx process on the machine.

Edit, Write and NotebookEdit each read a file, check it is still what the model read,
and replace it. Two sessions doing that to one file at once could both pass the check
and the later write would silently drop the earlier one's change. Holding this lock
from the read to the write makes the second one see the first one's change (and refuse
as "modified on disk"). The lock is an advisory ``flock`` on a small file named by a
hash of the target's real path, in the system's temporary folder; the target itself
cannot carry it, as each change replaces its inode.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import stat
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from tools.base import ToolResult

WAIT_S = 10.0  # an edit holds the lock for milliseconds; this long means something is stuck
POLL_S = 0.01


class ChangeLockTimeout(Exception):
    """Another change to the file held the lock for longer than ``WAIT_S``."""


def lock_path(path: Path) -> Path:
    real = os.path.realpath(path)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return Path(tempfile.gettempdir()) / f"ccx-change-locks-{os.getuid()}" / digest


@contextlib.asynccontextmanager
async def changing(path: Path, wait_s: float = WAIT_S) -> AsyncIterator[None]:
    """Hold the lock for changing ``path``; ChangeLockTimeout after ``wait_s``. Waits without
    blocking the event loop. Where no lock can be taken (a read-only temp folder), the
    change goes ahead unlocked, as it did before locks existed."""
    try:
        target = lock_path(path)
        target.parent.mkdir(mode=0o700, exist_ok=True)
        folder = os.lstat(target.parent)
        if not stat.S_ISDIR(folder.st_mode) or folder.st_uid != os.getuid():
            raise PermissionError(f"{target.parent} is not this user's folder")  # planted
        fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except (OSError, ValueError):  # ValueError: a NUL in the path, which the tool reports
        yield
        return
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if loop.time() >= deadline:
                    raise ChangeLockTimeout(
                        f"another change to {path} has been in progress for over {wait_s:.0f} s"
                    ) from None
                await asyncio.sleep(POLL_S)
        yield
    finally:
        os.close(fd)  # closing releases the lock


async def change_locked(path: Path, change: Callable[[], Awaitable[ToolResult]]) -> ToolResult:
    """``change()`` run holding the lock for ``path``; a tool error when it stays taken."""
    try:
        async with changing(path):
            return await change()
    except ChangeLockTimeout as exc:
        return ToolResult.error(f"{exc}; try again in a moment.")
