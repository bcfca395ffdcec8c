"""A seccomp filter that keeps sandboxed commands off Unix sockets: built here, loaded by
bubblewrap (``--seccomp FD``) or by the Landlock child before it runs the shell.

Why. A Unix socket leads out of any filesystem sandbox: the user's tmux server
(``tmux run-shell``), the SSH agent, the session bus (``systemd-run --user``),
Docker, terminal and editor remote control, ccx's own warm worker. Hiding
their files is not enough (abstract sockets have none, and new servers appear
after the session starts), so creating an ``AF_UNIX`` socket is refused with
EPERM, as Claude Code's sandbox does; ``socketpair`` (pipes between a
program's own processes) stays allowed. ``io_uring_setup`` is refused too: an
io_uring can open sockets without the ``socket`` system call. The user may lift
the block in their own settings (``sandbox.network.allowAllUnixSockets``).

The Landlock backend has no PID namespace, so there ``setsid`` and ``setpgid``
are answered "done" without doing anything: every process a command starts
stays in the command's process group, which ccx kills when the command ends
(and its guardian kills if ccx itself is killed). A program that asked for a
session of its own still runs; it only cannot leave.

The program is classic BPF over ``struct seccomp_data`` (nr at 0, arch at 4,
args[0]'s low word at 16 on little-endian machines). On x86_64 the 32-bit
``socketcall`` multiplexer cannot be inspected, so it is refused whole for
32-bit programs; x32 calls are checked as their 64-bit twins.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

# Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_AND_K = 0x54
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_AF_UNIX = 1
_X32_BIT = 0x40000000
_IO_URING_SETUP = 425  # the same number on every architecture (the unified table)

# arch token -> (socket, socketcall or None, setsid, setpgid)
_ARCHES: dict[int, tuple[int, int | None, int, int]] = {
    0xC000003E: (41, None, 112, 109),  # x86_64
    0x40000003: (359, 102, 66, 57),  # i386 (also 32-bit programs on x86_64)
    0xC00000B7: (198, None, 157, 154),  # aarch64
    0x40000028: (281, None, 66, 57),  # arm (EABI)
}
_NATIVE = {"x86_64": (0xC000003E, 0x40000003), "aarch64": (0xC00000B7, 0x40000028)}

Insn = tuple[int, int, int, int]


def supported() -> bool:
    return platform.machine() in _NATIVE and struct.pack("=I", 1) == struct.pack("<I", 1)


def build_filter(unix_sockets: bool = False, keep_group: bool = False) -> bytes:
    """The filter program, as ``struct sock_filter[]`` bytes (what ``--seccomp`` reads).

    ``unix_sockets``: allow creating them (the user's setting); ``keep_group``: make
    ``setsid`` and ``setpgid`` succeed without doing anything, so that every process of
    the command stays in its process group and dies with it (the Landlock backend has
    no PID namespace; a program that asked for a session of its own still runs).
    """
    deny = _RET_ERRNO | errno.EPERM
    arches = [a for a in _NATIVE.get(platform.machine(), ()) if a in _ARCHES]
    blocks = [_arch_block(arch, _ARCHES[arch], deny, unix_sockets, keep_group) for arch in arches]
    program: list[Insn] = [(_LD_W_ABS, 0, 0, 4)]  # arch
    # Each arch test jumps over the tests after it, the ALLOW, and the blocks before its own.
    offset = 0
    for index, arch in enumerate(arches):
        program.append((_JEQ_K, len(arches) - index + offset, 0, arch))
        offset += len(blocks[index])
    program.append((_RET_K, 0, 0, _RET_ALLOW))  # an arch we do not know: allowed
    for block in blocks:
        program += block
    return b"".join(struct.pack("=HBBI", *insn) for insn in program)


def _arch_block(
    arch: int,
    numbers: tuple[int, int | None, int, int],
    deny: int,
    unix_sockets: bool,
    keep_group: bool,
) -> list[Insn]:
    """One arch's instructions: load nr, answer the calls we handle, allow the rest."""
    socket_nr, socketcall_nr, setsid_nr, setpgid_nr = numbers
    block: list[Insn] = [(_LD_W_ABS, 0, 0, 0)]  # nr
    if arch == 0xC000003E:  # x32 calls carry the x32 bit: compare without it
        block += [(_JGE_K, 0, 1, _X32_BIT), (_AND_K, 0, 0, _X32_BIT - 1)]
    answers: list[tuple[int, int]] = [(_IO_URING_SETUP, deny)]
    if not unix_sockets and socketcall_nr is not None:
        answers.append((socketcall_nr, deny))
    if keep_group:
        answers += [(setsid_nr, _RET_ERRNO), (setpgid_nr, _RET_ERRNO)]  # errno 0: "success"
    for nr, answer in answers:
        block += [(_JEQ_K, 0, 1, nr), (_RET_K, 0, 0, answer)]
    if not unix_sockets:
        block += [
            (_JEQ_K, 0, 3, socket_nr),
            (_LD_W_ABS, 0, 0, 16),  # args[0], low word: the domain
            (_JEQ_K, 0, 1, _AF_UNIX),
            (_RET_K, 0, 0, deny),
        ]
    block.append((_RET_K, 0, 0, _RET_ALLOW))
    return block


def filter_fd(program: bytes) -> int:
    """A memfd holding the program, for bubblewrap's ``--seccomp``; each command gets its
    own descriptor of it (``reopen``), since bubblewrap reads from the current offset."""
    fd = os.memfd_create("ccx-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program)
    return fd


def reopen(fd: int) -> int:
    """A new descriptor (its own offset, inheritable) of the memfd ``fd``."""
    new = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY)
    os.set_inheritable(new, True)
    return new
