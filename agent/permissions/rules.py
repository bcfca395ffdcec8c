"""The vocabulary of permissions: modes, rules, decisions, and how a Bash rule matches.

Rules use Claude Code's syntax: ``Tool`` for the whole tool or
``Tool(specifier)``; a Bash specifier is a command pattern (``npm run test *``,
the legacy ``npm run test:*``, or an exact command). ``agent.permissions.gate`` (the
gate), ``agent.permissions.bash`` (its shell half) and ``agent.permissions.web`` build on
these; the two halves see the gate as ``RulesInForce``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal, Protocol, TypeGuard, get_args

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
MODES: tuple[PermissionMode, ...] = get_args(PermissionMode)


def is_permission_mode(value: object) -> TypeGuard[PermissionMode]:
    return value in MODES


EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read", "Grep", "Glob"})
# Rules written for one tool that also govern others.
RULE_COVERS = {"Edit": EDIT_TOOLS, "Read": READ_TOOLS}
# Tools that leave plan mode: they show the plan and ask the user themselves.
PLAN_MODE_TOOLS = frozenset({"ExitPlanMode"})
PLAN_MODE_DENIAL = (
    "plan mode is on, so nothing may be changed yet: only read-only tools can run. "
    "Finish exploring, then present your plan (ExitPlanMode) for the user to approve."
)

Behavior = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class Rule:
    tool: str
    specifier: str | None = None
    source: str = ""

    @classmethod
    def parse(cls, text: str, source: str = "") -> Rule:
        """``Bash``, ``Bash(npm run *)``, ``Edit(src/**)``; ValueError when malformed."""
        match = re.fullmatch(r"\s*([^()\s]+)\s*(?:\((.*)\))?\s*", text, re.DOTALL)
        if match is None:
            raise ValueError(f"not a permission rule: {text!r} (expected Tool or Tool(specifier))")
        specifier = match.group(2)
        specifier = specifier.strip() if specifier is not None else None
        return cls(match.group(1), specifier or None, source)

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    def covers(self, tool_name: str) -> bool:
        if self.tool == tool_name or tool_name in RULE_COVERS.get(self.tool, ()):
            return True
        # Claude Code's MCP rules: ``mcp__server`` and ``mcp__server__*`` cover all its tools.
        server = self.tool.removesuffix("__*")
        return (
            server.startswith("mcp__")
            and server.count("__") == 1
            and tool_name.startswith(server + "__")
        )

    def describe(self) -> str:
        return f"{self} (from {self.source})" if self.source else str(self)


@dataclass
class Decision:
    behavior: Behavior
    reason: str
    rule: Rule | None = None


class RulesInForce(Protocol):
    """What a check reads of the gate: the mode and the rules (``PermissionGate`` is one)."""

    @property
    def mode(self) -> str: ...

    @property
    def allow(self) -> list[Rule]: ...

    @property
    def deny(self) -> list[Rule]: ...

    @property
    def ask(self) -> list[Rule]: ...


def bash_pattern_matches(pattern: str, command: str) -> bool:
    """Match a Bash rule specifier against one simple command."""
    command = command.strip()
    pattern = pattern.strip()
    if pattern == "*":
        return True
    if pattern.endswith(":*"):
        prefix = pattern[:-2].rstrip()
        return command == prefix or command.startswith(prefix + " ")
    return _bash_regex(pattern).fullmatch(command) is not None


@functools.lru_cache(maxsize=512)
def _bash_regex(pattern: str) -> re.Pattern[str]:
    pieces: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            pieces.append(re.escape(pattern[i + 1]))
            i += 2
        elif c == "*":
            # "ls *" also matches a bare "ls", as the user means "ls with any arguments"
            trailing = i == len(pattern) - 1 and pieces and pieces[-1] == re.escape(" ")
            if trailing:
                pieces[-1] = "(?: .*)?"
            else:
                pieces.append(".*")
            i += 1
        else:
            pieces.append(re.escape(c))
            i += 1
    return re.compile("".join(pieces), re.DOTALL)


def split_rules(values: list[str]) -> list[str]:
    """`--allowedTools "Read,Bash(git log *)" Edit` -> ["Read", "Bash(git log *)", "Edit"]."""
    rules: list[str] = []
    for value in values:
        depth, current = 0, ""
        for char in value:
            if char == "(":
                depth += 1
            elif char == ")":
                depth = max(0, depth - 1)
            if depth == 0 and (char == "," or char.isspace()):
                if current.strip():
                    rules.append(current.strip())
                current = ""
                continue
            current += char
        if current.strip():
            rules.append(current.strip())
    return rules
