"""Who is at the other end of the warm worker's socket: the checks both sides make.

A uid (SO_PEERCRED) cannot tell the user's own ``ccx -p`` from a command in
ccx's sandbox, a process in another namespace, or one the user confined. So
each side pins the peer with a pidfd (SO_PEERPIDFD: the process that called
connect() or listen(); a reused pid cannot stand in for it), reads its
confinement from /proc through a directory descriptor opened while the pidfd
showed it alive, and compares it with its own: uids, gids, groups,
capabilities, NoNewPrivs, seccomp, tracer, every namespace, root directory,
LSM labels and cgroups must all be the same, and nothing may be confined
(NoNewPrivs 0, no seccomp, no tracer). ccx's Landlock sandbox always sets
NoNewPrivs, as does any non-root Landlock domain; bubblewrap's runs in other
namespaces. The client also reads the worker's program, command line and
token: the name of a memfd the worker holds open, which only a process that
may read the link /proc/PID/fd/N sees (ptrace read access: Landlock refuses it
to any process outside the worker's domain, root included; /proc/PID/environ
and maps are no proof, Landlock lets those be read). Needs Linux 6.5
(SO_PEERPIDFD); without it nothing is trusted.

Kept light: the client runs this before anything heavy is imported.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
from typing import NamedTuple

SO_PEERPIDFD = getattr(socket, "SO_PEERPIDFD", 77)  # Linux 6.5; Python 3.13 names it
STATUS_FIELDS = (
    "Uid",
    "Gid",
    "Groups",
    "CapInh",
    "CapPrm",
    "CapEff",
    "CapBnd",
    "CapAmb",
    "NoNewPrivs",
    "Seccomp",
    "Seccomp_filters",
    "TracerPid",
)
UNCONFINED = {"NoNewPrivs": "0", "Seccomp": "0", "TracerPid": "0"}
LSM_LABELS = ("attr/current", "attr/apparmor/current", "attr/smack/current")
TOKEN_NAME = "ccx-warm-token:"  # a memfd's name: /proc/PID/fd/N reads "/memfd:NAME (deleted)"


class Peer(NamedTuple):
    """A process as the checks see it; ``confinement`` is compared whole."""

    pid: int
    confinement: tuple[tuple[str, str], ...]
    exe: str = ""
    cmdline: tuple[str, ...] = ()
    token: str = ""


def own() -> Peer | None:
    """This process, or None when it is confined (a sandbox's, a user's) or unreadable."""
    peer = _read(os.getpid(), None, identity=False)
    return peer if peer is not None and unconfined(peer) else None


def unconfined(peer: Peer) -> bool:
    fields = dict(peer.confinement)
    return all(fields.get(name) == value for name, value in UNCONFINED.items())


def peer_of(conn: socket.socket, *, identity: bool) -> Peer | None:
    """The process at the other end of ``conn``, read while it is pinned; None if unsure.

    ``identity`` also reads its program, command line and token (the client's
    check of the worker).
    """
    try:
        uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        pidfd = conn.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD)
    except OSError:
        return None  # a kernel without SO_PEERPIDFD: a pid alone could be another process
    try:
        pid = _pidfd_pid(pidfd)
        if uid != os.getuid() or pid <= 0:
            return None
        return _read(pid, pidfd, identity=identity)
    finally:
        os.close(pidfd)


def same_confinement(peer: Peer, mine: Peer) -> bool:
    return unconfined(peer) and peer.confinement == mine.confinement


def _pidfd_pid(pidfd: int) -> int:
    """The pid the pidfd stands for in this pid namespace (0: not visible here, -1: gone)."""
    with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii") as info:
        for line in info:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    return -1


def _read(pid: int, pidfd: int | None, *, identity: bool) -> Peer | None:
    try:
        folder = os.open(f"/proc/{pid}", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        # Alive after the open: the folder is that process's, never a later one with its pid
        # (reads through it fail once it is gone).
        if pidfd is not None and not _alive(pidfd):
            return None
        peer = Peer(pid, _confinement(folder))
        if identity:
            peer = peer._replace(
                exe=os.readlink("exe", dir_fd=folder),
                cmdline=tuple(_text(folder, "cmdline").split("\0")[:-1]),
                token=_token(folder),
            )
        if pidfd is not None and not _alive(pidfd):
            return None
        return peer
    except (OSError, ValueError):
        return None
    finally:
        os.close(folder)


def _alive(pidfd: int) -> bool:
    try:
        signal.pidfd_send_signal(pidfd, 0)
    except ProcessLookupError:
        return False
    return True


def _confinement(folder: int) -> tuple[tuple[str, str], ...]:
    status = dict(
        line.split(":", 1) for line in _text(folder, "status").splitlines() if ":" in line
    )
    fields = [(name, " ".join(status.get(name, "").split())) for name in STATUS_FIELDS]
    for name in sorted(os.listdir("/proc/self/ns")):
        if not name.endswith("_for_children"):
            fields.append((f"ns/{name}", os.readlink(f"ns/{name}", dir_fd=folder)))
    root = os.stat("root", dir_fd=folder)
    fields.append(("root", f"{root.st_dev}:{root.st_ino}"))
    for label in LSM_LABELS:
        try:
            fields.append((label, _text(folder, label)))
        except OSError as exc:  # no such LSM: the same answer on both sides
            fields.append((label, f"errno {exc.errno}"))
    fields.append(("cgroup", _text(folder, "cgroup")))
    return tuple(fields)


def _text(folder: int, name: str) -> str:
    fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC, dir_fd=folder)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode("utf-8", "surrogateescape")
    finally:
        os.close(fd)


def _token(folder: int) -> str:
    prefix = f"/memfd:{TOKEN_NAME}"
    fds = os.open("fd", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=folder)
    try:
        for name in os.listdir(fds):
            try:
                link = os.readlink(name, dir_fd=fds)
            except FileNotFoundError:  # closed meanwhile
                continue
            if link.startswith(prefix):
                return link[len(prefix) :].removesuffix(" (deleted)")
    finally:
        os.close(fds)
    return ""


def token_holder() -> tuple[str, int]:
    """A new token and the memfd that holds it, for a worker to keep open all its life."""
    import secrets

    token = secrets.token_hex(32)
    return token, os.memfd_create(f"{TOKEN_NAME}{token}", os.MFD_CLOEXEC)
