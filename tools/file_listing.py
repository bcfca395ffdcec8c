"""Listing a tree's files fast: `rg --files` when ripgrep is installed, else a walk in Python.

`list_files` is what a person's `@` file completion and similar pickers use: the
files a search would look at (ignore files honoured, hidden entries skipped
unless asked for, .git never), as paths relative to the root, streamed so the
first ones arrive before the walk ends and a big tree never sits in memory.
`rg_files` is the streaming `rg --files` underneath, which Glob uses too.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from tools import rg_binary
from tools.ignore_walk import WalkFilter, walk_files

_READ_BYTES = 1 << 16


def list_files(
    root: str | Path, cancel: threading.Event | None = None, *, hidden: bool = False
) -> Iterator[str]:
    """Relative paths ("src/app.py", with "/" on every platform) of the files under `root`.

    Order is not defined (rg lists in parallel). Stops early when `cancel` is set or when the
    caller stops iterating; an `rg` still running is ended then.
    """
    cancel = cancel or threading.Event()
    base = os.path.abspath(root)
    rg = rg_binary.find_rg()
    if rg is not None:
        args = ["--no-require-git", "--no-ignore-global", "--glob=!.git/"]
        if hidden:
            args.append("--hidden")
        for rel in rg_files(rg, base, args, cancel):
            yield rel.replace(os.sep, "/")
        return
    prefix = base.rstrip(os.sep) + os.sep
    for path in walk_files(base, WalkFilter(base, ("!.git/",), hidden=hidden), cancel):
        yield path.removeprefix(prefix).replace(os.sep, "/")


def rg_files(
    rg: str, root: str, args: Sequence[str], cancel: threading.Event | None = None
) -> Iterator[str]:
    """What `rg --files ARGS` prints when run in `root`: paths relative to it, one at a time.

    No config file is read and symlinks are not followed. The process is killed when `cancel`
    is set (checked between reads) or when the iteration stops early.
    """
    cancel = cancel or threading.Event()
    proc = subprocess.Popen(
        [rg, "--files", "--no-config", "--null", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=0,  # unbuffered: each read returns what rg has written so far
    )
    assert proc.stdout is not None  # piped above
    pending = b""
    try:
        while not cancel.is_set():
            chunk = proc.stdout.read(_READ_BYTES)
            if not chunk:
                break
            pending += chunk
            *paths, pending = pending.split(b"\0")
            for path in paths:
                yield os.fsdecode(path)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        proc.wait()
