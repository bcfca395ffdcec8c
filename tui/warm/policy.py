"""The warm worker for headless runs (``-p``): policy, socket, fingerprint; on by default.

Why a worker. A one-turn ``ccx -p`` spends most of its wall time in Python
importing the anthropic SDK (some 3,200 modules, 1-2 s here) and ccx itself;
the request and the reply take milliseconds. Lazy imports cannot remove that
(every run needs the SDK), nor can a thread (imports are CPU and hold the
GIL). Claude Code, one compiled binary, starts in about 0.6 s. A long-lived
server process would keep state between runs; a zygote that forks does not.
So the first headless run, after it has printed its result (so it is not
slowed), starts a detached worker (``tui.warm.worker``) that imports
everything once and listens on a Unix socket. A later ``ccx -p``
(``tui.warm.client``) connects, hands over its argv, cwd, environment,
umask, limits and stdin/stdout/stderr descriptors, and the worker forks: the
child (``tui.warm.child``) becomes that run and exits with its code,
which the client exits with. The fork is copy-on-write: nothing of one run
is seen by the next, and the worker's state stays as it was after its
imports (it reads no settings, no files of any project, no environment of a
run). A run that comes while the worker is still importing waits for it (up
to 15 s after the worker's start): that is sooner than importing again.

Never more than the user's own ``ccx -p``. A worker is an unsandboxed process
that runs what it is handed, so who may hand it a run is the whole question:
- The socket lives in ``socket_folder()``: ``$XDG_RUNTIME_DIR/ccx-warm`` (when
  that is a private folder of the user's outside the temp folders), else
  ``<config>/run`` (``~/.ccx/run``); never a temp folder a sandboxed command
  may write, and no worker at all if the config folder is in one. The folder
  is 0700 (checked before use), the socket 0600.
- Both sides pin the peer by a pidfd (SO_PEERPIDFD, Linux 6.5; older kernels
  get no worker) and compare what confines it with what confines themselves
  (``tui.warm.peer``): same uids, gids, groups and capabilities, every
  namespace, root folder, LSM label and cgroup; NoNewPrivs, seccomp and a
  tracer must all be off. ccx's Landlock sandbox always sets NoNewPrivs (as
  any non-root Landlock domain must); bubblewrap's commands are in other
  namespaces. The worker closes any other peer unread. It also checks itself
  when it starts: a worker started inside a confinement does not listen.
- A request must carry the worker's token, the name of a memfd the worker
  holds: readable only through /proc/PID/fd, which needs ptrace read access,
  which Landlock refuses to a process outside the worker's domain (root in a
  Landlock domain without NoNewPrivs included).
- The client checks, before it sends anything, that the process listening is
  such a worker: the same context, this Python (/proc/PID/exe) running
  ``-I -m tui.warm.worker``, holding a token. A squatter at the name
  (even with the lock) is told nothing; the run is in-process.
- The socket name keys on the client's context (namespaces, cgroups, ...):
  a user's confined ``ccx -p`` (``unshare``, ``systemd-run``, a container)
  finds its own worker or none, never an unconfined one.
- The worker starts with ``python -I`` and an environment of a few variables
  (``WORKER_ENV``) of the client's as it started, before any settings' ``env``
  applied: nothing a project sets (``PYTHONPATH``, ``CCX_WARM_IDLE_S``, ...)
  reaches it. Its child takes the client's environment whole.
- The child applies the client's resource limits, nice level, CPU affinity,
  scheduling policy and OOM score (as far as it may: it can end up more
  limited than its client, never less).
- Every step up to the worker's acceptance has a deadline: the worker reads
  each request without blocking, on its own deadline (``READ_S``), so a slow
  peer holds up nobody; the client gives up after ``HANDSHAKE_S`` and runs
  in-process. The forked run waits for the client's go-ahead (``MessageKind.GO``) after
  the client has its pid, so a client that gave up never has its run twice.
- Before each fork the worker re-reads the stat (device, inode, size, mtime,
  ctime) of every file it imported, the Python, ccx's data files and the
  folders and .pth files on sys.path; if any changed it declines (the run
  is in-process and starts a new worker) and leaves. Some 15-20 ms a run.

What it does not protect against, or keep:
- A process of the same user that nothing confines can use the worker: it
  could run ``ccx -p`` itself, so that is no more than it has.
- A confinement none of the checks sees: an LSM policy keyed on something
  other than the task's label or cgroup (a BPF LSM program keyed on a pid,
  say). A worker started by a root run inside a Landlock domain without
  NoNewPrivs cannot tell, and stays in that domain: its runs are confined
  like its starter (less than the user's, never more). Not carried over:
  I/O priority, the session keyring, the controlling terminal (the run is in
  a session of its own; -p never reads the terminal); limits above the
  worker's are not raised.
- Under Landlock the folder stays readable and its socket connectable
  (Landlock on Linux 6.18 cannot restrict connecting to a named socket):
  the peer checks are what refuse a sandboxed command there; bubblewrap hides
  the folder. A process that can write the folder (the user's, or a sandboxed
  command if the config folder is inside a writable project) can take the
  name or the lock: runs are then in-process (slower), never served by it.
- An edit that keeps a file's size, mtime and ctime (a changed clock, a file
  system that keeps no ctime) is not seen; a module that is not imported by
  the worker is imported by the run from the disk, as a cold run does.

Any failure on the way (no worker yet, a stale socket, a refused check, a
timeout) falls back to running in-process; a run that turns out not to be
headless is handed back (the client runs it itself). A worker exits after
``CCX_WARM_IDLE_S`` idle seconds (600). SIGINT, SIGTERM, SIGHUP, SIGQUIT,
SIGWINCH, SIGUSR1/2 are forwarded to the run (one the client ignores, as
under ``nohup``, stays ignored), Ctrl-Z stops it too; a client that dies
(SIGKILL) closes the socket and the run is cancelled (SIGTERM, then SIGKILL).
A run killed by a signal kills its client with the same signal, so exit
statuses are the ones a cold run gives; the terminal's modes are restored if
a run left them changed.

On by default for headless runs; off with ``CCX_WARM=0`` or
``"warmWorker": false`` in the user's settings (``~/.ccx/settings.json``;
``CCX_WARM=1`` wins over it). Linux 6.5 or later only (SO_PEERPIDFD). This
module runs before anything heavy is imported and must stay light.
"""

from __future__ import annotations

import fcntl
import json
import os
import struct
import sys
from collections.abc import Mapping
from enum import Enum, unique
from pathlib import Path

from tui.warm import peer as warm_peer

PACKAGES = ("tools", "agent", "compaction", "tui")  # all of ccx: what the worker may have imported
MAX_REQUEST = 4 * 1024 * 1024
MESSAGE = struct.Struct("!ci")  # a MessageKind byte and an int: the worker's and the run's messages
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGWINCH", "SIGUSR1", "SIGUSR2")
START_WAIT_S = 15.0  # how long after its start a worker still importing is waited for
HANDSHAKE_S = 5.0  # the client's bound on connecting, checking, sending and being accepted
READ_S = 3.0  # the worker's bound on one request, from accept to its last byte
# What the worker's environment is made of, from the client's as it started (no settings yet).
WORKER_ENV = (
    *("PATH", "HOME", "LANG", "TZ", "USER", "LOGNAME", "XDG_RUNTIME_DIR", "CCX_CONFIG_DIR"),
    "CCX_WARM_IDLE_S",  # the user's own choice: a project's settings never reach this far
)
WORKER_ENV_PREFIXES = ("LC_",)
TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


@unique  # two kinds on one byte would be one kind
class MessageKind(bytes, Enum):
    """What a message on a run's connection is, by its first byte. The worker and the forked
    run send ``MESSAGE`` (this byte and an int) to the client; the client sends GO alone."""

    PID = b"P"  # worker: the run is forked, the int is its pid; it waits for GO
    GO = b"G"  # client: the run may start (the client has its pid and will not run it itself)
    INSTALL_CHANGED = b"R"  # worker: ccx's files changed; the client runs in-process
    NOT_HEADLESS = b"D"  # run: an interactive session after all; the client runs it itself
    CHILD_CODE = b"C"  # run: its exit code, just before it exits (if the worker is gone)
    EXIT_CODE = b"X"  # worker: the run's exit code, from waitpid
    SIGNAL = b"S"  # worker: the signal that ended the run


def idle_seconds() -> float:
    try:
        return float(os.environ.get("CCX_WARM_IDLE_S") or 600)
    except ValueError:
        return 600.0


def enabled(argv: list[str]) -> bool:
    """A headless run, on Linux, with the worker not turned off."""
    if sys.platform != "linux" or not headless(argv):
        return False
    setting = os.environ.get("CCX_WARM", "")
    if setting in ("0", "false", "no", "off"):
        return False
    return setting not in ("", "auto") or _user_setting() is not False


def headless(argv: list[str]) -> bool:
    """-p / --print, or stream-json input (the Agent SDK's way): the runs the worker takes."""
    for index, arg in enumerate(argv):
        if arg == "--":
            return False
        if arg in ("-p", "--print", "--input-format=stream-json"):
            return True
        if arg == "--input-format" and argv[index + 1 : index + 2] == ["stream-json"]:
            return True
    return False


def _user_setting() -> bool | None:
    from agent.core.locations import config_dir

    try:
        value = json.loads((config_dir() / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    setting = value.get("warmWorker") if isinstance(value, dict) else None
    return setting if isinstance(setting, bool) else None


def socket_folder() -> Path:
    """Where the worker's socket lives, and what sandboxed commands must not see.

    ``$XDG_RUNTIME_DIR/ccx-warm`` when that is a private folder of this user's outside
    the temp folders, else ``run`` in ccx's config folder. If that one is in a temp
    folder too (a sandboxed command may write there), ``socket_path`` gives no worker.
    """
    from agent.core.locations import config_dir

    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime) and private_folder(Path(runtime)) and not _in_temp(runtime):
        return Path(runtime) / "ccx-warm"
    return config_dir() / "run"


def _in_temp(path: str) -> bool:
    real = os.path.realpath(path)
    temps = [*TEMP_DIRS, *(os.environ.get(k, "") for k in ("TMPDIR", "TEMP", "TMP"))]
    for temp in filter(None, temps):
        top = os.path.realpath(temp)
        if real == top or real.startswith(top.rstrip("/") + "/"):
            return True
    return False


def socket_path() -> Path | None:
    """This process's worker socket; None when there is none to use (confined, or the
    folder is in a temp folder)."""
    folder = socket_folder()
    mine = warm_peer.own()
    if _in_temp(str(folder)) or mine is None:
        return None
    return folder / f"{fingerprint(mine)}.sock"


def fingerprint(mine: warm_peer.Peer) -> str:
    """Which worker a run may use: ccx's version and place, the Python, and the run's
    confinement (namespaces, cgroups, ...: one worker per context, as a peer must match it).

    Whether the worker's imported files are still the installed ones, the worker checks
    before each run (``warm_worker.ImportedFiles``).
    """
    import hashlib

    from agent import __version__

    root = Path(__file__).resolve().parents[2]
    python = f"{sys.prefix}\0{os.path.realpath(sys.executable)}\0{sys.version}"
    digest = hashlib.sha256(f"{__version__}\0{root}\0{python}\0".encode())
    digest.update(repr(mine.confinement).encode())
    return digest.hexdigest()[:20]


def worker_command() -> list[str]:
    """The worker's command line: isolated (-I: no PYTHON* variables, no cwd or user site)."""
    return [sys.executable, "-I", "-m", "tui.warm.worker"]


def private_folder(folder: Path) -> bool:
    """The folder is a real directory of this user's that nobody else may enter."""
    try:
        stat = os.lstat(folder)
    except OSError:
        return False
    return (
        (stat.st_mode & 0o170000) == 0o040000
        and stat.st_uid == os.getuid()
        and not stat.st_mode & 0o077
    )


def worker_starting(path: Path) -> bool:
    """Whether a worker holds this fingerprint's lock (it is importing, serving or leaving)."""
    try:
        fd = os.open(path.with_suffix(".lock"), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def worker_environment(started: Mapping[str, str]) -> dict[str, str]:
    """The worker's whole environment: a few variables of the client's as it started."""
    return {
        name: value
        for name, value in started.items()
        if name in WORKER_ENV or name.startswith(WORKER_ENV_PREFIXES)
    }


def spawn_worker(started: Mapping[str, str]) -> None:
    """Start the worker, detached, with none of this run's descriptors and a clean environment.

    ``started`` is the environment this process started with, before any settings'
    ``env`` was applied: nothing a project sets reaches the worker.
    """
    import subprocess

    try:
        subprocess.Popen(
            worker_command(),
            cwd="/",
            env=worker_environment(started),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass
