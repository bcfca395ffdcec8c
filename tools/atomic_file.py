"""Replacing a file whole: readers see the old content or the new, never half of either."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once: os.umask can only be read by setting it, which is not thread-safe later on.
_UMASK = _current_umask()


def atomic_write(
    path: Path, data: bytes | Iterable[bytes], *, durable: bool = False, mode: int | None = None
) -> None:
    """Write to a temp file beside ``path``, then rename it over. ``data`` may come in
    pieces (a large file need not be in memory whole); if making them raises, the file is
    left as it was.

    A symlink is written through, not replaced; an existing file keeps its
    permissions, a new one gets the umask's, unless ``mode`` is given (a secret's
    0600: the temp file has it from its creation). ``durable`` also syncs the data
    to disk before the rename (for files a crash must not empty, like settings).
    """
    target = Path(os.path.realpath(path))
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_UMASK
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".ccx-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                for piece in data:
                    handle.write(piece)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
