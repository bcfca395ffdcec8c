"""Finding a test's processes by name, wherever they run.

A sandboxed command runs in its own PID namespace (bubblewrap), so the pid it
reports (``$$``, ``$!``) is not the one the test sees. Tests start the
processes they want to follow under a unique ``argv[0]`` (bash's ``exec -a``)
and look for that name in /proc, which shows every process of the host.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path


def new_tag(prefix: str = "ccx-test") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def tagged_sleep(tag: str, seconds: int = 600) -> str:
    """A bash snippet: ``sleep`` whose argv[0] is ``tag`` (``exec`` keeps the shell's pid)."""
    return f"exec -a {tag} sleep {seconds}"


def pids_tagged(tag: str) -> list[int]:
    """Live (not zombie) processes whose argv[0] starts with ``tag``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv0 = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0", 1)[0]
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if argv0.startswith(tag.encode()) and state not in ("Z", "X"):
            found.append(int(name))
    return found


def wait_for_tagged(tag: str, count: int, within: float = 30.0) -> list[int]:
    """The ``count`` processes tagged ``tag`` once they all run; fewer if time runs out."""
    deadline = time.monotonic() + within
    pids = pids_tagged(tag)
    while len(pids) < count and time.monotonic() < deadline:
        time.sleep(0.05)
        pids = pids_tagged(tag)
    return pids


def wait_tagged_gone(tag: str, within: float = 5.0) -> list[int]:
    """Processes tagged ``tag`` still alive after ``within`` seconds (empty: all gone)."""
    deadline = time.monotonic() + within
    while (pids := pids_tagged(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pids
