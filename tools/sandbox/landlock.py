"""Landlock from Python through ctypes: a write-restricting ruleset built in the parent,
entered by the Bash child just before it runs the shell.

Why ctypes and not the PyPI ``landlock`` package (1.0.0.dev5, alpha): it has no
network rules (ABI 4) and its error check reads ``errno`` instead of the return
value, so a stale errno from an earlier call turns success into an exception —
the wrong failure for code that runs between fork and exec. The three syscalls
and two structs are short enough to own.

Only writing is handled: reading and executing stay allowed everywhere, so a
ruleset lists the writable trees and the few writable devices. With the network
off (ABI >= 4) TCP bind and connect are refused; UDP is not covered. From ABI 6
the domain is scoped: abstract Unix sockets and signals do not reach outside
it (no ``kill`` of ccx or of the user's other processes). Creating Unix sockets
at all is refused by the seccomp filter the child loads after the ruleset
(``tools.sandbox.seccomp``), unless the user allows them. The ruleset is
applied to the child only: ccx itself is never restricted. The child's work
after fork is a few prctl/syscall calls on functions resolved beforehand
(under root, one more per capability to drop).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import signal
from collections.abc import Callable, Iterable
from pathlib import Path

# The syscall numbers are the same on every architecture (the generic table).
_NR_CREATE_RULESET = 444
_NR_ADD_RULE = 445
_NR_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

# Access rights (include/uapi/linux/landlock.h).
WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

_DIR_WRITES = (
    WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
    | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM
)  # fmt: skip
_FILE_WRITES = WRITE_FILE
MIN_ABI = 2  # ABI 1 refuses every rename or link across directories: too much breaks


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # packed in the kernel's header
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()
_ABI: int | None = None


def _syscall() -> Callable[..., int]:
    assert _LIBC is not None
    call = _LIBC.syscall
    call.restype = ctypes.c_long
    return call


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    global _ABI
    if _ABI is None:
        _ABI = 0
        if _LIBC is not None and hasattr(_LIBC, "syscall"):
            version = _syscall()(
                ctypes.c_long(_NR_CREATE_RULESET), None, ctypes.c_size_t(0),
                ctypes.c_uint32(_CREATE_RULESET_VERSION),
            )  # fmt: skip
            _ABI = max(0, int(version))
    return _ABI


def unavailable_reason() -> str | None:
    """Why the Landlock backend cannot be used here, or None when it can."""
    abi = abi_version()
    if abi == 0:
        return "the kernel has no Landlock (needs Linux >= 5.19 with Landlock enabled)"
    if abi < MIN_ABI:
        return f"the kernel's Landlock ABI is {abi}; ccx needs ABI >= {MIN_ABI}"
    return None


def _last_capability() -> int:
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        return 40  # CAP_CHECKPOINT_RESTORE, the last one in Linux 6.x


class LandlockRuleset:
    """An open ruleset: write access beneath ``writable`` trees and to ``devices`` only."""

    def __init__(
        self,
        writable: Iterable[Path],
        devices: Iterable[Path],
        network: bool = True,
        seccomp_filter: bytes | None = None,
    ) -> None:
        """``seccomp_filter``: a BPF program (``tools.sandbox.seccomp``) the child loads last."""
        abi = abi_version()
        if abi < MIN_ABI:
            raise OSError(errno.ENOSYS, unavailable_reason())
        self.abi = abi
        self.handled_fs = _DIR_WRITES | REFER | (TRUNCATE if abi >= 3 else 0)
        self.handled_net = 0 if network or abi < 4 else NET_BIND_TCP | NET_CONNECT_TCP
        self.network_enforced = not network and abi >= 4
        self.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
        self._filter = ctypes.create_string_buffer(
            seccomp_filter or b"", len(seccomp_filter or b"")
        )
        self._fprog = _SockFprog(len(seccomp_filter or b"") // 8, ctypes.addressof(self._filter))
        attr = _RulesetAttr(self.handled_fs, self.handled_net, self.scoped)
        size = (
            ctypes.sizeof(_RulesetAttr) if abi >= 6
            else 2 * ctypes.sizeof(ctypes.c_uint64) if abi >= 4
            else ctypes.sizeof(ctypes.c_uint64)
        )  # fmt: skip
        fd = _syscall()(
            ctypes.c_long(_NR_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
            ctypes.c_uint32(0),
        )  # fmt: skip
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"landlock_create_ruleset: {os.strerror(code)}")
        self.fd = int(fd)
        try:
            for path in writable:
                self._allow(path, self.handled_fs)
            file_rights = _FILE_WRITES | (TRUNCATE if abi >= 3 else 0)
            for device in devices:
                self._allow(device, file_rights)
        except BaseException:
            self.close()
            raise

    def _allow(self, path: Path, rights: int) -> None:
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # a path that does not exist needs no rule
        try:
            if not os.path.isdir(path):
                rights &= _FILE_WRITES | TRUNCATE  # directory rights on a file are invalid
            attr = _PathBeneathAttr(rights, target)
            done = _syscall()(
                ctypes.c_long(_NR_ADD_RULE), ctypes.c_int(self.fd),
                ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(attr), ctypes.c_uint32(0),
            )  # fmt: skip
            if done < 0:
                code = ctypes.get_errno()
                raise OSError(code, f"landlock_add_rule({path}): {os.strerror(code)}")
        finally:
            os.close(target)

    def preexec(self) -> Callable[[], None]:
        """The function the child runs after fork: die with ccx, no new privileges, restrict.

        Run as root, it also empties the capability bounding set, so that the
        programs the shell runs get no capabilities (Landlock does not restrict
        e.g. loading kernel modules or changing file owners).
        """
        assert _LIBC is not None
        prctl = _LIBC.prctl
        prctl.restype = ctypes.c_int
        prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                          ctypes.c_ulong]  # fmt: skip
        syscall = _syscall()
        restrict_nr, fd, flags = (
            ctypes.c_long(_NR_RESTRICT_SELF), ctypes.c_int(self.fd), ctypes.c_uint32(0)
        )  # fmt: skip
        sigkill = int(signal.SIGKILL)
        capabilities = range(_last_capability() + 1) if os.geteuid() == 0 else range(0)
        fprog = ctypes.addressof(self._fprog) if self._fprog.len else 0

        def enter_sandbox() -> None:
            prctl(_PR_SET_PDEATHSIG, sigkill, 0, 0, 0)
            for capability in capabilities:
                prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)
            if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
            if syscall(restrict_nr, fd, flags) != 0:
                raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
            if fprog and prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fprog, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")

        return enter_sandbox

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        self.close()
