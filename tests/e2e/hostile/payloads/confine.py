"""How a careful user confines ``ccx -p``: NoNewPrivs and a Landlock ruleset that allows
writing only beneath the given folders, then exec of the command.

    python confine.py FOLDER [FOLDER...] -- COMMAND [ARG...]

Reading and executing stay allowed everywhere. Everything the command starts inherits
the confinement, so a run that escapes it ran somewhere else (issue 17: in the warm
worker). Exits 3 when this kernel has no usable Landlock.
"""

from __future__ import annotations

import ctypes
import os
import sys

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same on every architecture
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
# Every right that changes the filesystem (include/uapi/linux/landlock.h), by ABI.
WRITES_ABI_1 = sum(1 << bit for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))
REFER, TRUNCATE = 1 << 13, 1 << 14


class RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def confine(folders: list[str]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(CREATE_RULESET, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        sys.exit(3)
    writes = WRITES_ABI_1 | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0)
    attr = RulesetAttr(writes)
    ruleset = libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0:
        sys.exit(3)
    for folder in folders:
        fd = os.open(folder, os.O_PATH | os.O_CLOEXEC)
        rule = PathBeneath(writes, fd)
        if libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            sys.exit(f"confine: cannot allow {folder}")
        os.close(fd)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        sys.exit("confine: prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.syscall(RESTRICT_SELF, ruleset, 0) != 0:
        sys.exit("confine: landlock_restrict_self failed")
    os.close(ruleset)


if __name__ == "__main__":
    split = sys.argv.index("--")
    confine(sys.argv[1:split])
    command = sys.argv[split + 1 :]
    os.execvp(command[0], command)
