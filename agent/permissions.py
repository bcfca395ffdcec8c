"""Whether a tool call may run: permission modes and allow / ask / deny rules.

Rules use Claude Code's syntax: ``Tool`` for the whole tool or
``Tool(specifier)``. Bash specifiers are command patterns (``npm run test *``,
the legacy ``npm run test:*``, or an exact command); file specifiers are
gitignore-style path patterns (``//abs``, ``~/home``, ``/project-root``,
``./cwd``). Deny beats ask beats allow beats the mode's default. A compound
shell command is checked part by part (see ``agent.shell_split``).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from agent.readonly_commands import is_read_only
from agent.shell_split import WRAPPERS, CommandPart, iter_all_parts, split_command

MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read", "Grep", "Glob"})
# Rules written for one tool that also govern others.
RULE_COVERS = {"Edit": EDIT_TOOLS, "Read": READ_TOOLS}
# Commands whose first words are a runner, so "npm run test" is the command's name.
RUNNERS = {
    "npm": {"run", "exec"},
    "pnpm": {"run", "exec"},
    "yarn": {"run", "workspace"},
    "bun": {"run", "x"},
    "uv": {"run", "tool"},
    "poetry": {"run"},
    "python": {"-m"},
    "python3": {"-m"},
    "cargo": {"+nightly"},
    "go": {"run", "test"},
}
# Tools that leave plan mode: they show the plan and ask the user themselves.
PLAN_MODE_TOOLS = frozenset({"ExitPlanMode"})
DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd"})
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
        return self.tool == tool_name or tool_name in RULE_COVERS.get(self.tool, ())

    def describe(self) -> str:
        return f"{self} (from {self.source})" if self.source else str(self)


@dataclass
class Decision:
    behavior: Behavior
    reason: str
    rule: Rule | None = None


class PermissionGate:
    """Decides allow / ask / deny for each tool call; ``mode`` may change during a session."""

    def __init__(
        self,
        mode: str,
        allow: list[Rule],
        deny: list[Rule],
        ask: list[Rule],
        cwd: Path,
        project_root: Path | None = None,
        home: Path | None = None,
        plan_file: Path | None = None,
        read_dirs: list[Path] | None = None,
    ) -> None:
        self.mode = mode
        self.allow, self.deny, self.ask = list(allow), list(deny), list(ask)
        self.cwd = Path(cwd)
        self.project_root = Path(project_root or cwd)
        self.home = Path(home or Path.home())
        self.plan_file = plan_file  # the one file plan mode lets the model write
        # Beyond the working directory and the project, where reading needs no approval
        # (ccx's own session folder, plans and skills: summaries point the model there).
        self.read_dirs = [Path(p) for p in read_dirs or []]
        # Where the Bash tool's shell is now (it persists cd); redirections resolve there.
        self.shell_cwd: Path | None = None
        self._roots: dict[str, tuple[str, ...]] = {}

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in MODES:
            raise ValueError(f"unknown permission mode {value!r}; expected one of {MODES}")
        self._mode = value

    def allow_always(self, rule: Rule) -> None:
        """Remember an allow rule for the rest of the session (settings persist it)."""
        if all((r.tool, r.specifier) != (rule.tool, rule.specifier) for r in self.allow):
            self.allow.append(rule)

    def check(self, tool_name: str, tool_input: dict[str, Any], is_mutating: bool) -> Decision:
        if tool_name == "Bash":
            return self._check_bash(str(tool_input.get("command") or ""))
        path = self._subject_path(tool_name, tool_input)
        if rule := self._matching_rule(self.deny, tool_name, path, every_view=False):
            return Decision("deny", f"the deny rule {rule.describe()} forbids it", rule)
        if self.mode == "bypassPermissions":
            return Decision("allow", "bypassPermissions mode allows every tool")
        if rule := self._matching_rule(self.ask, tool_name, path, every_view=False):
            return Decision("ask", f"the ask rule {rule.describe()} requires approval", rule)
        if tool_name in PLAN_MODE_TOOLS:
            return Decision("allow", f"{tool_name} asks the user itself")
        if self.mode == "plan" and is_mutating:
            if path is not None and self.plan_file is not None and _same_file(path, self.plan_file):
                return Decision("allow", "writing the plan file is allowed in plan mode")
            return Decision("deny", PLAN_MODE_DENIAL)
        if rule := self._matching_rule(self.allow, tool_name, path, every_view=True):
            return Decision("allow", f"allowed by the rule {rule.describe()}", rule)
        if not is_mutating:
            if (
                tool_name in READ_TOOLS
                and path is not None
                and not self._readable_without_asking(path)
            ):
                return Decision("ask", f"{path} is outside the working directory {self.cwd}")
            return Decision("allow", f"{tool_name} only reads")
        if self.mode == "acceptEdits" and tool_name in EDIT_TOOLS and path is not None:
            if self._inside_cwd(path):
                return Decision("allow", "acceptEdits mode allows edits in the working directory")
            return Decision("ask", f"{path} is outside the working directory {self.cwd}")
        target = f" on {path}" if path else ""
        return Decision("ask", f"{tool_name}{target} needs the user's approval")

    @staticmethod
    def suggest_rule(tool_name: str, tool_input: dict[str, Any]) -> Rule:
        """The rule "always allow" should save for this call."""
        return _suggest_rule(tool_name, tool_input)

    # -- Bash -------------------------------------------------------------

    def _check_bash(self, command: str) -> Decision:
        parts = split_command(command)
        every = iter_all_parts(command)
        if rule := self._bash_rule(self.deny, command, every):
            return Decision("deny", f"the deny rule {rule.describe()} forbids it", rule)
        if rule := self._redirect_rule(self.deny, every, every_view=False):
            reason = f"the deny rule {rule.describe()} forbids the file it writes"
            return Decision("deny", reason, rule)
        if self.mode == "bypassPermissions":
            return Decision("allow", "bypassPermissions mode allows every command")
        rule = self._bash_rule(self.ask, command, every)
        if rule := rule or self._redirect_rule(self.ask, every, every_view=False):
            return Decision("ask", f"the ask rule {rule.describe()} requires approval", rule)
        if self.mode == "plan":
            if all(is_read_only(p) for p in parts):
                return Decision("allow", "a read-only command is allowed in plan mode")
            return Decision("deny", PLAN_MODE_DENIAL)
        whole = next((r for r in self.allow if r.tool == "Bash" and r.specifier is None), None)
        if whole is not None:
            return Decision("allow", f"allowed by the rule {whole.describe()}", whole)
        reasons, rules, problems = [], [], []
        moved = False  # after a cd, relative redirection targets point who knows where
        for part in parts:
            ok, why, rule = self._bash_part_allowed(part, moved)
            (reasons if ok else problems).append(why)
            if rule is not None:
                rules.append(rule)
            moved = moved or bool(part.words and part.words[0] in DIRECTORY_CHANGERS)
        if problems:
            return Decision("ask", "; ".join(problems))
        reason = "; ".join(dict.fromkeys(reasons)) or "the command is empty"
        return Decision("allow", reason, rules[0] if len(set(rules)) == 1 else None)

    def _bash_part_allowed(self, part: CommandPart, moved: bool) -> tuple[bool, str, Rule | None]:
        if part.opaque:
            return False, f"`{part.text}` contains {part.opaque_reason}, which needs approval", None
        rule = next(
            (
                r
                for r in self.allow
                if r.tool == "Bash"
                and r.specifier is not None
                and bash_pattern_matches(r.specifier, part.command)
            ),
            None,
        )
        auto_mode = self.mode in ("default", "acceptEdits")
        readonly = auto_mode and is_read_only(replace(part, writes=()))
        if rule is None and not readonly and part.words:
            return False, f"`{part.text}` needs approval (no allow rule matches it)", None
        for target in part.writes:
            if not self._write_allowed(target, moved):
                return False, f"`{part.text}` writes to {target}, which needs approval", None
        why = f"allowed by the rule {rule.describe()}" if rule else "read-only command"
        return True, why, rule

    def _bash_rule(self, rules: list[Rule], command: str, every: list[CommandPart]) -> Rule | None:
        candidates = {" ".join(command.split())}
        for part in every:
            candidates.update(_command_variants(part))
        candidates.discard("")
        for rule in rules:
            if rule.tool != "Bash":
                continue
            if rule.specifier is None:
                return rule
            if any(bash_pattern_matches(rule.specifier, c) for c in candidates):
                return rule
        return None

    def _redirect_rule(
        self, rules: list[Rule], every: list[CommandPart], every_view: bool
    ) -> Rule | None:
        for part in every:
            for target in part.writes:
                path = self._resolve(target, self.shell_cwd)
                rule = self._matching_rule(rules, "Write", path, every_view)
                if rule is not None:
                    return rule
        return None

    def _write_allowed(self, target: str, moved: bool) -> bool:
        if moved and not os.path.isabs(target) and not target.startswith("~"):
            return False
        path = self._resolve(target, self.shell_cwd)
        if self.mode == "acceptEdits" and self._inside_cwd(path):
            return True
        return self._matching_rule(self.allow, "Write", path, every_view=True) is not None

    # -- paths ------------------------------------------------------------

    def _subject_path(self, tool_name: str, tool_input: dict[str, Any]) -> str | None:
        if tool_name in ("Grep", "Glob"):
            raw = tool_input.get("path") or str(self.cwd)
        elif tool_name in EDIT_TOOLS or tool_name == "Read":
            raw = tool_input.get("file_path") or tool_input.get("notebook_path")
        else:
            return None
        return self._resolve(str(raw)) if raw else None

    def _resolve(self, raw: str, base: Path | None = None) -> str:
        if raw == "~" or raw.startswith("~/"):
            raw = str(self.home) + raw[1:]
        return os.path.normpath(os.path.join(base or self.cwd, raw))

    def _matching_rule(
        self, rules: list[Rule], tool_name: str, path: str | None, every_view: bool
    ) -> Rule | None:
        """The first rule for this tool that matches; ``every_view`` (for allow rules) needs
        both the path as written and its symlink-resolved form to match."""
        for rule in rules:
            if not rule.covers(tool_name):
                continue
            if rule.specifier is None:
                return rule
            if path is None or tool_name not in EDIT_TOOLS | READ_TOOLS:
                continue
            views = _views(path)
            test = all if every_view else any
            if test(self._path_matches(rule.specifier, view) for view in views):
                return rule
        return None

    def _path_matches(self, specifier: str, path: str) -> bool:
        if specifier.startswith("//"):
            bases, pattern, anchored = ("/",), specifier[2:], True
        elif specifier == "~" or specifier.startswith("~/"):
            bases, pattern, anchored = self._bases("home"), specifier[2:], True
        elif specifier.startswith("/"):
            bases, pattern, anchored = self._bases("project_root"), specifier[1:], True
        else:
            pattern = specifier[2:] if specifier.startswith("./") else specifier
            bases, anchored = self._bases("cwd"), "/" in pattern.rstrip("/")
        return any(_gitignore_match(pattern, anchored, base, path) for base in bases)

    def _bases(self, which: str) -> tuple[str, ...]:
        root = str(getattr(self, which))
        if root not in self._roots:
            forms = [os.path.normpath(root), os.path.realpath(root)]
            self._roots[root] = tuple(dict.fromkeys(forms))
        return self._roots[root]

    def _inside_cwd(self, path: str) -> bool:
        bases = self._bases("cwd")
        return all(any(_is_within(view, base) for base in bases) for view in _views(path))

    def _readable_without_asking(self, path: str) -> bool:
        """Inside the working directory, the project, or one of the extra read directories."""
        bases = [*self._bases("cwd"), *self._bases("project_root")]
        for directory in self.read_dirs:
            bases += [os.path.normpath(directory), os.path.realpath(directory)]
        return all(any(_is_within(view, base) for base in bases) for view in _views(path))


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


def _command_variants(part: CommandPart) -> set[str]:
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
    while rest and (rest[0].startswith("-") or "=" in rest[0] or rest[0][:1].isdigit()):
        rest = rest[1:]
    return rest


def _views(path: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys([path, os.path.realpath(path)]))


def _is_within(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def _same_file(path: str, other: Path) -> bool:
    return os.path.realpath(path) == os.path.realpath(other)


def _gitignore_match(pattern: str, anchored: bool, base: str, path: str) -> bool:
    if not _is_within(path, base):
        return False
    rel = os.path.relpath(path, base)
    parts = [] if rel == "." else rel.split("/")
    dir_only = pattern.endswith("/")
    regex = _gitignore_regex(pattern.rstrip("/"), anchored)
    if not parts:
        return regex.fullmatch("") is not None
    # A pattern that matches a directory covers everything inside it.
    for k in range(1, len(parts) + 1):
        inside_match = k < len(parts) or not dir_only or os.path.isdir(path)
        if inside_match and regex.fullmatch("/".join(parts[:k])):
            return True
    return False


@functools.lru_cache(maxsize=512)
def _gitignore_regex(pattern: str, anchored: bool) -> re.Pattern[str]:
    if pattern in ("", ".", "**"):
        return re.compile(".*", re.DOTALL)
    pieces: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        at_segment_start = i == 0 or pattern[i - 1] == "/"
        if at_segment_start and pattern.startswith("**/", i):
            pieces.append("(?:.*/)?")
            i += 3
        elif at_segment_start and pattern.startswith("**", i) and i + 2 == n:
            if pieces and pieces[-1] == "/":
                pieces[-1] = "(?:/.*)?"  # "src/**" covers src itself and all below
            else:
                pieces.append(".*")
            i += 2
        elif pattern[i] == "*":
            while i < n and pattern[i] == "*":
                i += 1
            pieces.append("[^/]*")
        elif pattern[i] == "?":
            pieces.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            pieces.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif pattern[i] == "\\" and i + 1 < n:
            pieces.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            pieces.append(re.escape(pattern[i]))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(prefix + "".join(pieces), re.DOTALL)


def _suggest_rule(tool_name: str, tool_input: dict[str, Any]) -> Rule:
    if tool_name == "Bash":
        return Rule("Bash", _suggest_bash(str(tool_input.get("command") or "")), "session")
    raw = tool_input.get("file_path") or tool_input.get("notebook_path")
    if tool_name in ("Grep", "Glob"):
        raw = tool_input.get("path")
        tool = "Read"
    else:
        tool = "Edit" if tool_name in EDIT_TOOLS else tool_name
    if tool not in ("Read", "Edit") or not raw:
        return Rule(tool_name, None, "session")
    path = os.path.abspath(os.path.expanduser(str(raw)))
    spec = "/" + _escape_glob(path)  # "//abs/path": exact, whatever the cwd
    if tool_name in ("Grep", "Glob"):
        spec = spec.rstrip("/") + "/**"
    return Rule(tool, spec, "session")


def _suggest_bash(command: str) -> str | None:
    """``npm run test foo`` -> ``npm run test *``; ``git commit -m x`` -> ``git commit *``."""
    parts = split_command(command)
    if not parts:
        return None
    part = next((p for p in parts if not is_read_only(p)), parts[0])
    if part.opaque or not part.words:
        return " ".join(command.split())
    runner = len(part.words) > 1 and part.words[1] in RUNNERS.get(part.words[0], ())
    name = [part.raw_words[0]]
    for i in range(1, min(len(part.words), 3 if runner else 2)):
        word = part.words[i]
        if (word.startswith("-") and not runner) or "/" in word or "=" in word:
            break
        name.append(part.raw_words[i])
    return " ".join(name) + " *"


def _escape_glob(path: str) -> str:
    return re.sub(r"([*?\[\\])", r"\\\1", path)
