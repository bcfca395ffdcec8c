"""The bubblewrap backend: the Bash command runs in ``bwrap`` with a read-only view of
the filesystem and writable bind mounts of the project and temp directories.

Protected paths that exist are read-only bind mounts, and their ``.git``
parent is bound onto itself so it cannot be renamed away from under them;
denied files are masked with ``/dev/null`` and denied directories with an
empty read-only tmpfs. The sandbox gets a user namespace (so even root inside
cannot remount), all capabilities dropped, a fresh minimal ``/dev``, and
``--die-with-parent``. There is no PID namespace: background processes must
outlive the command's shell and keep their real pids, as without the sandbox.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tools.sandbox.policy import SandboxPolicy

_PROBE_TIMEOUT_S = 5.0
_probed: dict[str, str | None] = {}  # bwrap path -> None if it works, else why not


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def unavailable_reason() -> str | None:
    """None when bwrap is on PATH and can build a sandbox here (probed once per process)."""
    path = find_bwrap()
    if path is None:
        return "bwrap (bubblewrap) is not on PATH"
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
        "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev",
    ]  # fmt: skip


def bwrap_argv(
    policy: SandboxPolicy, cwd: Path, protected: list[Path], masked: list[Path]
) -> list[str]:
    """The ``bwrap ... --`` prefix for one command run in ``cwd``."""
    path = find_bwrap()
    assert path is not None
    args = [path, *_base_args()]
    if not policy.network:
        args.append("--unshare-net")
    for directory in policy.writable_dirs():
        args += ["--bind", str(directory), str(directory)]
    args += _protect_args(protected)
    args += _mask_args(masked)
    args += ["--chdir", str(cwd), "--"]
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
