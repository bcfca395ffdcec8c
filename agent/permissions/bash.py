"""Whether a shell command may run: the Bash half of the permission gate.

A command line is checked part by part (``agent.shell.split``), nested
commands included (``$(...)``, ``sh -c '...'``, ``find -exec``, ``xargs``).
In order, each step able to end the check:

1. deny rules: a ``Bash(...)`` rule on any part in any spelling (a path to
   the program, quotes, a wrapper such as ``sudo`` or ``timeout``); a
   ``Read(...)`` rule on any file a part reads (by name, ``./``, ``..``, a
   symlink, a glob) and a ``Write``/``Edit`` rule on any file it writes;
2. with deny rules in force, a program that cannot be known from the text
   (``$x victim.txt``, ``$(echo rm) x``, ``eval "$cmd"``) is refused, in every
   mode, bypassPermissions included;
3. bypassPermissions allows the rest;
4. ask rules; a write to a protected path (``agent.permissions.protected``); a call
   that turns the OS sandbox off;
5. plan mode runs read-only commands only;
6. otherwise every part must be allowed by a rule or be read-only (and read
   nothing outside the project, and nothing a recursive read would take from
   a denied path), and every file it writes must be allowed.

An allow rule vouches for what it says only: it does not match a part with a
``VAR=`` prefix the rule does not spell out, and a wildcard rule does not
cover an option that makes the program run something else
(``npm test --script-shell=./evil.sh`` under ``Bash(npm test *)``).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from agent.permissions.command_paths import (
    read_candidates,
    recursive_reader,
    runs_code_option,
    write_targets,
)
from agent.permissions.rules import (
    PLAN_MODE_DENIAL,
    Decision,
    Rule,
    RulesInForce,
    bash_pattern_matches,
)
from agent.shell.part import CommandPart
from agent.shell.readonly import is_read_only
from agent.shell.split import iter_all_parts, split_command
from agent.shell.wrappers import SHELLS, WRAPPERS

DIRECTORY_CHANGERS = frozenset({"cd", "pushd"})
# Reading these is never "outside the project".
DEVICE_PATHS = ("/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/zero", "/dev/tty")
MAX_GLOB_MATCHES = 200
HARMLESS_VARIABLES = frozenset(
    {"NODE_ENV", "RAILS_ENV", "RACK_ENV", "APP_ENV", "CI", "TZ", "LANG", "LANGUAGE",
     "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "TERM", "COLUMNS", "RUST_BACKTRACE", "RUST_LOG",
     "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "DEBUG", "VERBOSE",
     "GOOS", "GOARCH", "CGO_ENABLED", "NODE_NO_WARNINGS"}
)  # fmt: skip
_GLOB_CHARS = re.compile(r"[*?\[]")


class ShellGate(RulesInForce, Protocol):
    """What the Bash check reads of the gate (``PermissionGate``): its folders and path rules."""

    @property
    def cwd(self) -> Path: ...

    @property
    def home(self) -> Path: ...

    @property
    def shell_cwd(self) -> Path | None: ...

    @property
    def sandbox_enabled(self) -> bool: ...

    def resolve(self, raw: str, base: Path | str | None = None) -> str: ...

    def matching_rule(
        self,
        rules: list[Rule],
        tool_name: str,
        path: str | None,
        every_view: bool,
        aliases: Sequence[str] = (),
    ) -> Rule | None: ...

    def protected_reason(self, path: str) -> str | None: ...

    def readable(self, path: str) -> bool: ...

    def inside_cwd(self, path: str) -> bool: ...

    def denied_inside(self, directory: str) -> tuple[Rule, str] | None: ...


def check_bash(gate: ShellGate, command: str, unsandboxed: bool = False) -> Decision:
    parts = split_command(command)
    every = iter_all_parts(command)
    located = _locate(gate, every)
    if denial := _denied(gate, command, every, located):
        return denial
    if unsandboxed and gate.sandbox_enabled:  # in every mode: the sandbox is the last wall
        return Decision("ask", "the command asks to run outside the sandbox")
    if gate.mode == "bypassPermissions":
        return Decision("allow", "bypassPermissions mode allows every command")
    rule = _bash_rule(gate.ask, command, every) or _write_rule(gate, gate.ask, located)
    if rule:
        return Decision("ask", f"the ask rule {rule.describe()} requires approval", rule)
    for part, base in located:
        for target in [*part.writes, *write_targets(part)]:
            if reason := gate.protected_reason(gate.resolve(target, base)):
                return Decision("ask", f"`{part.text}` writes {target}: {reason}")
    if gate.mode == "plan":
        if all(is_read_only(p) for p in parts):
            return Decision("allow", "a read-only command is allowed in plan mode")
        return Decision("deny", PLAN_MODE_DENIAL)
    whole = next((r for r in gate.allow if r.tool == "Bash" and r.specifier is None), None)
    if whole is not None:
        return Decision("allow", f"allowed by the rule {whole.describe()}", whole)
    return _check_parts(gate, located[: len(parts)])


def _denied(
    gate: ShellGate,
    command: str,
    every: list[CommandPart],
    located: list[tuple[CommandPart, str]],
) -> Decision | None:
    if rule := _bash_rule(gate.deny, command, every):
        return Decision("deny", f"the deny rule {rule.describe()} forbids it", rule)
    if rule := _write_rule(gate, gate.deny, located):
        return Decision("deny", f"the deny rule {rule.describe()} forbids the file it writes", rule)
    for part, base in located:
        for word in read_candidates(part):
            for path in _expand(gate.resolve(word, base)):
                rule = gate.matching_rule(gate.deny, "Read", path, every_view=False)
                if rule is not None:
                    reason = f"the deny rule {rule.describe()} forbids reading {word}"
                    return Decision("deny", reason, rule)
    dynamic = next((p for p in every if _dynamic_program(p)), None)
    if dynamic is not None and gate.deny:
        return Decision(
            "deny",
            f"`{dynamic.text}` runs a program that cannot be known from the command text, and "
            "deny rules are in force; spell the command out",
        )
    return None


def _check_parts(gate: ShellGate, located: list[tuple[CommandPart, str]]) -> Decision:
    reasons, rules, problems = [], [], []
    moved = False  # after a cd to a computed place, relative paths point who knows where
    for part, base in located:
        problem, why, rule = _part_verdict(gate, part, base, moved)
        if problem:
            problems.append(problem)
        else:
            reasons.append(why)
        if rule is not None:
            rules.append(rule)
        if part.words and part.words[0] in DIRECTORY_CHANGERS and len(part.words) > 1:
            moved = moved or bool(_GLOB_CHARS.search(part.words[1])) or part.opaque
    if problems:
        return Decision("ask", "; ".join(problems))
    reason = "; ".join(dict.fromkeys(reasons)) or "the command is empty"
    return Decision("allow", reason, rules[0] if len(set(rules)) == 1 else None)


def _part_verdict(
    gate: ShellGate, part: CommandPart, base: str, moved: bool
) -> tuple[str, str, Rule | None]:
    """(problem or "", why it is fine, the allow rule that vouched for it)."""
    if part.opaque:
        return f"`{part.text}` contains {part.opaque_reason}, which needs approval", "", None
    rule = _allow_rule(gate, part)
    auto = gate.mode in ("default", "acceptEdits")
    readonly = auto and rule is None and is_read_only(replace(part, writes=()))
    if rule is None and not readonly and part.words:
        return f"`{part.text}` needs approval (no allow rule matches it)", "", None
    if readonly and (problem := _read_problem(gate, part, base)):
        return problem, "", None
    for target in part.writes:
        if not _write_allowed(gate, target, base, moved):
            return f"`{part.text}` writes to {target}, which needs approval", "", None
    why = f"allowed by the rule {rule.describe()}" if rule else "read-only command"
    return "", why, rule


def _allow_rule(gate: ShellGate, part: CommandPart) -> Rule | None:
    assignments = tuple(a for a in part.assignments if not _harmless_assignment(a))
    spelled = " ".join((*assignments, *part.raw_words))
    for rule in gate.allow:
        if rule.tool != "Bash" or rule.specifier is None:
            continue
        if not bash_pattern_matches(rule.specifier, spelled):
            continue
        if "*" in rule.specifier and runs_code_option(part) is not None:
            continue  # a wildcard does not vouch for an option that runs something else
        return rule
    return None


def _harmless_assignment(assignment: str) -> bool:
    """``NODE_ENV=test`` and the like: a literal value for a variable that changes a mode or
    the output, never what runs or what is loaded (so an allow rule may ignore it)."""
    name, _, value = assignment.partition("=")
    if any(c in value for c in "$`\\"):
        return False
    return name in HARMLESS_VARIABLES or name.startswith("LC_")


def _read_problem(gate: ShellGate, part: CommandPart, base: str) -> str:
    """Why an otherwise read-only part must ask about what it reads, or ""."""
    recursive = recursive_reader(part)
    words = read_candidates(part)
    if recursive and not [w for w in words if not w.startswith("-")]:
        words = [*words, "."]  # rg, git grep ... read the working directory by default
    for word in words:
        for path in _expand(gate.resolve(word, base)):
            exists = os.path.lexists(path)
            if exists and not path.startswith(DEVICE_PATHS) and not gate.readable(path):
                return f"`{part.text}` reads {word}, outside the working directory {gate.cwd}"
            if recursive and os.path.isdir(path):
                hidden = gate.denied_inside(path)
                if hidden is not None:
                    rule, inside = hidden
                    return (
                        f"`{part.text}` reads {word} recursively, and {inside} in it is "
                        f"protected by the deny rule {rule.describe()}"
                    )
    return ""


def _write_allowed(gate: ShellGate, target: str, base: str, moved: bool) -> bool:
    if moved and not os.path.isabs(target) and not target.startswith("~"):
        return False
    path = gate.resolve(target, base)
    if gate.mode == "acceptEdits" and gate.inside_cwd(path):
        return True
    return gate.matching_rule(gate.allow, "Write", path, every_view=True) is not None


def _write_rule(
    gate: ShellGate, rules: list[Rule], located: list[tuple[CommandPart, str]]
) -> Rule | None:
    for part, base in located:
        for target in [*part.writes, *write_targets(part)]:
            rule = gate.matching_rule(rules, "Write", gate.resolve(target, base), False)
            if rule is not None:
                return rule
    return None


def _locate(gate: ShellGate, every: list[CommandPart]) -> list[tuple[CommandPart, str]]:
    """Each part with the directory its relative paths resolve in (``cd DIR`` followed)."""
    base = str(gate.shell_cwd or gate.cwd)
    located = []
    for part in every:
        located.append((part, base))
        if part.words and part.words[0] in DIRECTORY_CHANGERS and not part.opaque:
            target = part.words[1] if len(part.words) > 1 else str(gate.home)
            if not _GLOB_CHARS.search(target) and target != "-":
                base = gate.resolve(target, base)
    return located


def _expand(path: str) -> list[str]:
    """``path`` and, when it holds glob characters, what the shell would expand it to."""
    if not _GLOB_CHARS.search(path):
        return [path]
    matches = []
    for match in glob.iglob(path):
        matches.append(os.path.normpath(match))
        if len(matches) >= MAX_GLOB_MATCHES:
            break
    return [path, *matches]


def _bash_rule(rules: list[Rule], command: str, every: list[CommandPart]) -> Rule | None:
    candidates = {" ".join(command.split())}
    for part in every:
        candidates.update(command_variants(part))
    candidates.discard("")
    for rule in rules:
        if rule.tool != "Bash":
            continue
        if rule.specifier is None:
            return rule
        if any(bash_pattern_matches(rule.specifier, c) for c in candidates):
            return rule
    return None


def command_variants(part: CommandPart) -> set[str]:
    """Ways to write the same command, so a deny rule cannot be dodged by quoting, a path
    to the program, or a wrapper such as ``sudo`` or ``timeout 5``."""
    variants = {part.text, part.command}
    words = list(part.words)
    for _ in range(4):
        if not words:
            break
        words[0] = os.path.basename(words[0]) or words[0]
        variants.add(" ".join(words))
        if words[0] not in WRAPPERS:
            break
        words = _unwrap(words)
    return {" ".join(v.split()) for v in variants}


def _unwrap(words: list[str]) -> list[str]:
    """The command a wrapper runs: its options, durations and VAR=value skipped."""
    rest = words[1:]
    while rest and (
        rest[0].startswith("-") or "=" in rest[0] or rest[0][:1].isdigit() or rest[0] == "!"
    ):
        rest = rest[1:]  # "!" negates what `time` runs
    return rest


def _dynamic_program(part: CommandPart) -> bool:
    """Whether what ``part`` runs cannot be known from the text: a computed program name, or
    a shell reading its commands from stdin (``echo rm x | sh``)."""
    name = os.path.basename(part.words[0]) if part.words else ""
    if name in SHELLS:
        rest = part.words[1:]
        if not any(w.startswith("-") and "c" in w[1:] and not w.startswith("--") for w in rest):
            operands = [w for w in rest if not w.startswith("-")]
            if not operands or "-s" in rest:
                return True
    return part.dynamic_program
