"""Whether a tool call may run: permission modes and allow / ask / deny rules.

Rules use Claude Code's syntax: ``Tool`` for the whole tool or
``Tool(specifier)``. Bash specifiers are command patterns (``npm run test *``,
the legacy ``npm run test:*``, or an exact command); file specifiers are
gitignore-style path patterns (``//abs``, ``~/home``, ``/project-root``,
``./cwd``). Deny beats ask beats allow beats the mode's default. Shell commands
are checked part by part in ``agent.permissions.bash``; paths are matched in
every form they can be reached by (``agent.permissions.paths``); writes to
protected paths ask in every mode but bypassPermissions
(``agent.permissions.protected``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent.permissions.paths import escape_glob, gitignore_match, is_within, same_file, views
from agent.permissions.protected import protected_reason
from agent.permissions.rules import (  # noqa: F401 - the gate's vocabulary, re-exported
    EDIT_TOOLS,
    MODES,
    PLAN_MODE_DENIAL,
    PLAN_MODE_TOOLS,
    READ_TOOLS,
    RULE_COVERS,
    Behavior,
    Decision,
    PermissionMode,
    Rule,
    bash_pattern_matches,
    is_permission_mode,
)
from agent.permissions.web import check_web_fetch, suggest_web_rule

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
        config_dir: Path | None = None,
        work_dirs: list[Path] | None = None,
    ) -> None:
        self.mode = mode
        self.allow, self.deny, self.ask = list(allow), list(deny), list(ask)
        self.cwd = Path(cwd)
        self.project_root = Path(project_root or cwd)
        self.home = Path(home or Path.home())
        self.config_dir = config_dir  # ccx's own settings live there: protected
        self.plan_file = plan_file  # the one file plan mode lets the model write
        # Beyond the working directory and the project, where reading needs no approval
        # (ccx's own session folder, plans and skills: summaries point the model there).
        self.read_dirs = [Path(p) for p in read_dirs or []]
        # --add-dir: more working directories; edits there follow the working directory's rules.
        self.work_dirs = [Path(p) for p in work_dirs or []]
        # Where the Bash tool's shell is now (it persists cd); redirections resolve there.
        self.shell_cwd: Path | None = None
        # Bash runs in the OS sandbox: leaving it (dangerouslyDisableSandbox) asks in every mode.
        self.sandbox_enabled = True
        self._roots: dict[str, tuple[str, ...]] = {}

    @property
    def mode(self) -> PermissionMode:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if not is_permission_mode(value):
            raise ValueError(f"unknown permission mode {value!r}; expected one of {MODES}")
        self._mode = value

    def allow_always(self, rule: Rule) -> None:
        """Remember an allow rule for the rest of the session (settings persist it)."""
        if all((r.tool, r.specifier) != (rule.tool, rule.specifier) for r in self.allow):
            self.allow.append(rule)

    def check(
        self,
        tool_name: str,
        tool_input: dict[str, Any],
        is_mutating: bool,
        declares_read_only: bool = False,
        aliases: Sequence[str] = (),
    ) -> Decision:
        """Allow, ask or deny one call. ``declares_read_only``: the tool says it only reads
        (an MCP tool's readOnlyHint), so plan mode does not deny it; it is still asked about.
        ``aliases``: other names a rule may call the tool by (an MCP tool's long spelling)."""
        if tool_name == "Bash":
            unsandboxed = bool(tool_input.get("dangerouslyDisableSandbox"))
            return _check_bash(self, str(tool_input.get("command") or ""), unsandboxed)
        if tool_name == "Monitor" and tool_input.get("command"):
            return self._check_monitor(str(tool_input["command"]))
        if tool_name == "WebFetch":
            return check_web_fetch(self, tool_input)
        path = self._subject_path(tool_name, tool_input)
        if rule := self.matching_rule(self.deny, tool_name, path, False, aliases):
            return Decision("deny", f"the deny rule {rule.describe()} forbids it", rule)
        if self.mode == "bypassPermissions":
            return Decision("allow", "bypassPermissions mode allows every tool")
        plan_file = bool(path and self.plan_file and same_file(path, self.plan_file))
        if is_mutating and path and not plan_file and (reason := self.protected_reason(path)):
            return Decision("ask", reason)
        if rule := self.matching_rule(self.ask, tool_name, path, False, aliases):
            return Decision("ask", f"the ask rule {rule.describe()} requires approval", rule)
        if tool_name in PLAN_MODE_TOOLS:
            return Decision("allow", f"{tool_name} asks the user itself")
        if self.mode == "plan" and is_mutating and not declares_read_only:
            if plan_file:
                return Decision("allow", "writing the plan file is allowed in plan mode")
            return Decision("deny", PLAN_MODE_DENIAL)
        if rule := self.matching_rule(self.allow, tool_name, path, True, aliases):
            return Decision("allow", f"allowed by the rule {rule.describe()}", rule)
        if tool_name == "WebSearch":  # changes nothing here, but the query leaves the machine
            return Decision("ask", "WebSearch sends the query to the API's web search")
        if not is_mutating:
            if tool_name in READ_TOOLS and path is not None and not self.readable(path):
                return Decision("ask", f"{path} is outside the working directory {self.cwd}")
            return Decision("allow", f"{tool_name} only reads")
        if self.mode == "acceptEdits" and tool_name in EDIT_TOOLS and path is not None:
            if self.inside_cwd(path):
                return Decision("allow", "acceptEdits mode allows edits in the working directory")
            return Decision("ask", f"{path} is outside the working directory {self.cwd}")
        target = f" on {path}" if path else ""
        return Decision("ask", f"{tool_name}{target} needs the user's approval")

    def _check_monitor(self, command: str) -> Decision:
        """Monitor runs a command: Monitor's own deny and allow rules, else Bash's checks."""
        if rule := self.matching_rule(self.deny, "Monitor", None, False):
            return Decision("deny", f"the deny rule {rule.describe()} forbids it", rule)
        decision = _check_bash(self, command, False)
        allow = self.matching_rule(self.allow, "Monitor", None, True)
        protected = " is protected (" in decision.reason  # asked in every mode, whatever rule
        if decision.behavior == "ask" and allow and self.mode != "plan" and not protected:
            return Decision("allow", f"allowed by the rule {allow.describe()}", allow)
        return decision

    def suggest_rule(self, tool_name: str, tool_input: dict[str, Any]) -> Rule:
        """The rule "always allow" should save for this call (paths resolved as the call's)."""
        if tool_name == "Bash":
            return Rule("Bash", _suggest_bash(str(tool_input.get("command") or "")), "session")
        if tool_name == "WebFetch":
            return suggest_web_rule(tool_input)
        raw = tool_input.get("file_path") or tool_input.get("notebook_path")
        if tool_name in ("Grep", "Glob"):
            raw = tool_input.get("path")
            tool = "Read"
        else:
            tool = "Edit" if tool_name in EDIT_TOOLS else tool_name
        if tool not in ("Read", "Edit") or not raw:
            return Rule(tool_name, None, "session")
        path = self.resolve(str(raw))
        spec = "/" + escape_glob(path)  # "//abs/path": exact, whatever the cwd
        if tool_name in ("Grep", "Glob"):
            spec = spec.rstrip("/") + "/**"
        return Rule(tool, spec, "session")

    # -- paths (also used by agent.permissions.bash) ----------------------------------------

    def read_denied(self, path: str) -> bool:
        """Whether a deny rule forbids reading ``path`` (Grep and Glob leave such files out)."""
        return (
            self.matching_rule(self.deny, "Read", self.resolve(path), every_view=False) is not None
        )

    def denied_inside(self, directory: str) -> tuple[Rule, str] | None:
        """A deny rule protecting a file right inside ``directory`` (or the project root), for
        commands that read a directory recursively: (rule, the file)."""
        for rule in self.deny:
            if not rule.covers("Read") or not rule.specifier:
                continue
            if rule.specifier in ("*", "**") or any(c in rule.specifier for c in "*?["):
                continue
            name = rule.specifier.rstrip("/")
            candidates = [self.resolve(name)]
            if "/" not in name.removeprefix("./"):
                candidates.append(os.path.join(directory, name.removeprefix("./")))
            for candidate in candidates:
                inside = any(is_within(v, d) for v in views(candidate) for d in views(directory))
                if not (inside and os.path.lexists(candidate)):
                    continue
                if self.matching_rule([rule], "Read", candidate, every_view=False):
                    return rule, candidate
        return None

    def protected_reason(self, path: str) -> str | None:
        config = str(self.config_dir) if self.config_dir is not None else None
        return protected_reason(path, str(self.home), config)

    def resolve(self, raw: str, base: Path | str | None = None) -> str:
        if raw == "~" or raw.startswith("~/"):
            raw = str(self.home) + raw[1:]
        return os.path.normpath(os.path.join(base or self.cwd, raw))

    def matching_rule(
        self,
        rules: list[Rule],
        tool_name: str,
        path: str | None,
        every_view: bool,
        aliases: Sequence[str] = (),
    ) -> Rule | None:
        """The first rule for this tool (by its name or an alias) that matches; ``every_view``
        (for allow rules) needs both the path as written and its symlink-resolved form to match."""
        for rule in rules:
            if not any(rule.covers(name) for name in (tool_name, *aliases)):
                continue
            if rule.specifier is None:
                return rule
            if path is None or tool_name not in EDIT_TOOLS | READ_TOOLS:
                continue
            test = all if every_view else any
            if test(self._path_matches(rule.specifier, view) for view in views(path)):
                return rule
        return None

    def inside_cwd(self, path: str) -> bool:
        """Inside the working directory or an --add-dir one."""
        bases = list(self._bases("cwd"))
        for directory in self.work_dirs:
            bases += [os.path.normpath(directory), os.path.realpath(directory)]
        return all(any(is_within(view, base) for base in bases) for view in views(path))

    def readable(self, path: str) -> bool:
        """Inside the working directory, the project, or one of the extra read directories."""
        bases = [*self._bases("cwd"), *self._bases("project_root")]
        for directory in self.read_dirs:
            bases += [os.path.normpath(directory), os.path.realpath(directory)]
        return all(any(is_within(view, base) for base in bases) for view in views(path))

    def _subject_path(self, tool_name: str, tool_input: dict[str, Any]) -> str | None:
        if tool_name in ("Grep", "Glob"):
            raw = tool_input.get("path") or str(self.cwd)
        elif tool_name in EDIT_TOOLS or tool_name == "Read":
            raw = tool_input.get("file_path") or tool_input.get("notebook_path")
        else:
            return None
        return self.resolve(str(raw)) if raw else None

    def _path_matches(self, specifier: str, path: str) -> bool:
        bases: tuple[str, ...]
        if specifier.startswith("//"):
            bases, pattern, anchored = ("/",), specifier[2:], True
        elif specifier == "~" or specifier.startswith("~/"):
            bases, pattern, anchored = self._bases("home"), specifier[2:], True
        elif specifier.startswith("/"):
            bases, pattern, anchored = self._bases("project_root"), specifier[1:], True
        else:
            pattern = specifier[2:] if specifier.startswith("./") else specifier
            bases, anchored = self._bases("cwd"), "/" in pattern.rstrip("/")
        return any(gitignore_match(pattern, anchored, base, path) for base in bases)

    def _bases(self, which: str) -> tuple[str, ...]:
        root = str(getattr(self, which))
        if root not in self._roots:
            forms = [os.path.normpath(root), os.path.realpath(root)]
            self._roots[root] = tuple(dict.fromkeys(forms))
        return self._roots[root]


def _check_bash(gate: PermissionGate, command: str, unsandboxed: bool) -> Decision:
    """agent.permissions.bash's check (it and the shell parser are imported with the first
    command: ~8 ms a cold start needs only once the model asks to run one)."""
    from agent.permissions.bash import check_bash

    return check_bash(gate, command, unsandboxed)


def _suggest_bash(command: str) -> str | None:
    """``npm run test foo`` -> ``npm run test *``; ``git commit -m x`` -> ``git commit *``."""
    from agent.shell.readonly import is_read_only
    from agent.shell.split import split_command

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
