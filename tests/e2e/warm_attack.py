"""An attack on the warm worker, run as a script by tests/e2e/test_warm_worker_attacks.py.

    python warm_attack.py CONFINEMENT SOCKET MARKER API_URL CWD [TOKEN]

It confines itself as CONFINEMENT says (none, no_new_privs, seccomp, namespaces,
landlock: what ccx's sandbox or a user's confinement would leave it in), then
does what a hostile command would: connects to the worker's socket and hands
over a run whose --settings carries a SessionStart hook that creates MARKER,
with the worker's token: TOKEN if given (a leaked one), else read from
/proc/PID/fd before it confines itself (as if leaked), except under Landlock,
whose point is that it cannot read it. If the worker ran it, the hook ran
outside every confinement of this process. Prints one JSON line: how it was
confined and whether the worker took the run.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import struct
import sys

LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_RESTRICT_SELF = 444, 446
LANDLOCK_ACCESS_FS_WRITE_FILE = 1 << 1


class SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint),
    ]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        print(json.dumps({"cannot_confine": f"{what}: {os.strerror(errno)}"}))
        sys.exit(0)


def confine(how: str) -> None:
    if how == "no_new_privs":  # what ccx's Landlock sandbox sets before its ruleset
        check(LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    elif how == "seccomp":  # an allow-all filter: root needs no NoNewPrivs for it
        if os.geteuid() != 0:
            check(LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        program = (SockFilter * 1)(SockFilter(0x06, 0, 0, 0x7FFF0000))  # RET ALLOW
        fprog = SockFprog(1, program)
        check(LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "seccomp")
    elif how == "namespaces":  # a user and a mount namespace, as bubblewrap's
        uid, gid = os.getuid(), os.getgid()
        check(LIBC.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare(USER|NS)")
        with open("/proc/self/setgroups", "w") as file:
            file.write("deny")
        with open("/proc/self/uid_map", "w") as file:
            file.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as file:
            file.write(f"{gid} {gid} 1")
    elif how == "landlock":  # a Landlock domain without NoNewPrivs: only root may
        attr = ctypes.c_uint64(LANDLOCK_ACCESS_FS_WRITE_FILE)
        ruleset = LIBC.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), 8, 0)
        check(0 if ruleset >= 0 else -1, "landlock_create_ruleset")
        check(LIBC.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")


def status() -> dict[str, str]:
    fields = {}
    with open("/proc/self/status") as file:
        for line in file:
            name, _, value = line.partition(":")
            if name in ("NoNewPrivs", "Seccomp"):
                fields[name] = value.strip()
    fields["ns/mnt"] = os.readlink("/proc/self/ns/mnt")
    return fields


def worker_token(path: str) -> str:
    """The worker's token, as a process sees it that may read /proc/PID/fd of the process
    behind the socket (the name of a memfd it holds open); "" when it may not."""
    try:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:  # a sandbox that refuses Unix sockets
        return ""
    try:
        probe.connect(path)
        pid = struct.unpack("3i", probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        for fd in os.listdir(f"/proc/{pid}/fd"):
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if link.startswith("/memfd:ccx-warm-token:"):
                return link.split(":", 2)[2].removesuffix(" (deleted)")
    except OSError:
        pass
    finally:
        probe.close()
    return ""


def attack(path: str, token: str, marker: str, api_url: str, cwd: str) -> dict[str, object]:
    hook = {"type": "command", "command": f"touch {marker}"}
    settings = {"hooks": {"SessionStart": [{"hooks": [hook]}]}}
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(30)
        conn.connect(path)
    except OSError as exc:  # no such socket here (hidden), or no Unix sockets at all
        return {"outcome": f"no connection: {exc.strerror}"}
    env = {**os.environ, "ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "k"}
    request = {
        "argv": ["-p", "hi", "--settings", json.dumps(settings)],
        "argv0": "ccx",
        "cwd": cwd,
        "env": env,
        "umask": 0o022,
        "token": token,
    }
    data = json.dumps(request).encode()
    try:
        socket.send_fds(conn, [struct.pack("!I", len(data)) + data], [0, 1, 2])
        reply = conn.recv(5)
        if len(reply) < 5 or reply[:1] != b"P":
            return {"outcome": "refused"}
        conn.sendall(b"G")
        while conn.recv(64):
            pass
    except OSError as exc:
        return {"outcome": f"refused: {exc.strerror}"}
    return {"outcome": "served"}


if __name__ == "__main__":
    how, path, marker, api_url, cwd = sys.argv[1:6]
    if len(sys.argv) > 6:
        token = sys.argv[6]
    elif how == "landlock":  # the token is what stops it: it is read from inside the domain
        confine(how)
        token = worker_token(path)
    else:  # the worst case: the token leaked to it before it was confined
        token = worker_token(path)
        confine(how)
    report = attack(path, token, marker, api_url, cwd)
    print(json.dumps({"confinement": how, "status": status(), "token": bool(token), **report}))
