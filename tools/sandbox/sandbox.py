"""One session's OS sandbox for Bash: the backend chosen for the policy, and what each
command needs from it (an argv prefix or a pre-exec function, the protected-path
check around it, the note that explains a refusal to the model).

Backends, best first: bubblewrap when ``bwrap`` is on PATH and works here
(probed once), else Landlock (kernel ABI >= 2), else none — said once, with
the reason, by whoever builds the session. What each cannot do:

- Landlock cannot make a subpath of a writable tree read-only, so
  ``.git/hooks``, ``.git/config`` and ``.claude/`` are protected by
  check-and-restore around each command (see ``protect``); nor can it hide a
  file from reading without also hiding files created later beside it, so
  denied reads are left to the permission rules; with the network off it
  refuses TCP bind/connect (ABI >= 4) but not UDP.
- bubblewrap masks the denied paths that exist when the session starts: the
  listed ones, and those the Read deny rules match among the first
  ``MAX_WALK_ENTRIES`` entries of the project (dependency trees skipped),
  found in the background; a file created later is not masked.
- Landlock does not cover changes of metadata (chmod, chown, timestamps) or
  connecting to existing Unix sockets; neither backend covers the latter. Both
  run the command without capabilities, also under root (bubblewrap in its own
  user namespace; Landlock by emptying the bounding set).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools.sandbox import bubblewrap, landlock
from tools.sandbox.policy import DEVICE_DIRS, DEVICES, SandboxPolicy
from tools.sandbox.protect import ProtectedPathGuard, Snapshot

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


@dataclass
class Launch:
    """How to start one command: ``prefix`` goes before the shell's argv."""

    prefix: list[str]
    preexec: Callable[[], None] | None
    backend: str | None  # None: unsandboxed


UNSANDBOXED = Launch([], None, None)


def choose_backend(policy: SandboxPolicy) -> tuple[str | None, str | None]:
    """(backend, None) for the backend to use, or (None, why there is none)."""
    if not policy.enabled:
        return None, "the sandbox is turned off"
    reasons = {"bwrap": bubblewrap.unavailable_reason, "landlock": landlock.unavailable_reason}
    candidates = [policy.backend] if policy.backend in reasons else list(reasons)
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
        self.guard = ProtectedPathGuard()

    def warm_up(self) -> None:
        """Choose the backend (probing bwrap) and find the paths to hide in the background,
        before the first command needs them (the walk checks entries against the deny rules)."""

        def prepare() -> None:
            if self.backend == "bwrap" and self.policy.deny_read is not None:
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
            prefix = bubblewrap.bwrap_argv(self.policy, cwd, protected, self.masked_paths())
            return Launch(prefix, None, "bwrap")
        if self.backend == "landlock":
            if self._ruleset is None:
                self._ruleset = landlock.LandlockRuleset(
                    self.policy.writable_dirs(), _devices(), network=self.policy.network
                )
            return Launch([], self._ruleset.preexec(), "landlock")
        return UNSANDBOXED

    def record(self) -> Snapshot:
        return self.guard.record(self.policy.protected_paths())

    def restore(self, snapshot: Snapshot, save_dir: Path) -> list[str]:
        return self.guard.restore(snapshot, save_dir)

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
            for path in _walk_denied(self.policy.roots(), self.policy.deny_read):
                found.setdefault(path)
                found.setdefault(os.path.realpath(path))
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
        return (
            f"[This command ran in ccx's sandbox ({self.label()}): it may write only in "
            f"{self.policy.describe_writable()}; .git/hooks, .git/config and .claude/ are "
            f"read-only{network}{hidden}. If the failure above is the sandbox refusing something "
            "the task needs, retry the command with `dangerouslyDisableSandbox: true` (the user "
            "will be asked to approve it).]"
        )

    def close(self) -> None:
        if self._ruleset is not None:
            self._ruleset.close()
            self._ruleset = None


def protected_note(repairs: list[str]) -> str:
    lines = "\n".join(f"- {repair}" for repair in repairs)
    return (
        "[ccx's sandbox undid this command's changes to protected paths (.git/hooks, "
        ".git/config and .claude/ are read-only for sandboxed commands):\n"
        f"{lines}\nTo change them, use Edit or Write, or retry with "
        "`dangerouslyDisableSandbox: true`; either way the user is asked.]"
    )


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
