"""Shell commands that only look at things, so Bash may run them without asking.

A part qualifies only when it is a plain command (no substitution, no subshell,
no output redirection to a file), its name is a bare word on the list, and
none of the flags that make a listed command write or run something else is
present (``sort -o``, ``find -exec``, ``rg --pre``, ``git -c``, ...).
"""

from __future__ import annotations

from collections.abc import Callable

from agent.shell_split import CommandPart, split_command

# Commands with no flag that writes files or runs other programs.
PLAIN_READERS = frozenset(
    {
        "ls", "pwd", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "echo",
        "printf", "which", "stat", "du", "df", "cut", "whoami", "uname", "true",
        "false", "basename", "dirname", "realpath", "cd", "test", "[", "[[",
    }
)  # fmt: skip

FIND_ACTIONS = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fls")
GIT_READ_SUBCOMMANDS = frozenset(
    {"status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "branch"}
)
# git options before the subcommand that cannot run anything
GIT_SAFE_GLOBAL_FLAGS = frozenset({"--no-pager", "-P", "--paginate", "--no-optional-locks"})
GIT_SAFE_GLOBAL_PREFIXES = ("--git-dir=", "--work-tree=", "--namespace=")
GIT_BRANCH_LIST_FLAGS = frozenset(
    {
        "--all", "--remotes", "--verbose", "--list", "--show-current", "--no-color",
        "--color", "--column", "--no-column", "--ignore-case", "--omit-empty",
        "--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
    }
)  # fmt: skip
GIT_BRANCH_VALUE_FLAGS = ("--format=", "--sort=", "--color=", "--column=", "--abbrev=")
GIT_BRANCH_PATTERN_FLAGS = frozenset(
    {"--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}
)


def is_read_only(part: CommandPart) -> bool:
    """True when running ``part`` cannot change anything."""
    if part.opaque or part.writes or not part.words:
        return False
    name, args = part.words[0], part.words[1:]
    if "/" in name:
        return False  # ./ls could be anything
    if name in PLAIN_READERS:
        return True
    check = _SPECIAL.get(name)
    return check is not None and check(args)


def is_read_only_command(command: str) -> bool:
    """True when every part of a command line is read-only."""
    parts = split_command(command)
    return bool(parts) and all(is_read_only(p) for p in parts)


def _has_flag(args: tuple[str, ...], long: tuple[str, ...], short: str = "") -> bool:
    """Whether any of the long options (also as --opt=value) or short letters appear."""
    for arg in args:
        if arg == "--":
            return False
        if arg.startswith("--"):
            if any(arg == opt or arg.startswith(opt + "=") for opt in long):
                return True
        elif arg.startswith("-") and short and any(c in short for c in arg[1:]):
            return True
    return False


def _sort(args: tuple[str, ...]) -> bool:
    return not _has_flag(args, ("--output", "--compress-program"), short="o")


def _tree(args: tuple[str, ...]) -> bool:
    return not any(a.startswith("-o") for a in args)


def _date(args: tuple[str, ...]) -> bool:
    return not _has_flag(args, ("--set",), short="s")


def _file(args: tuple[str, ...]) -> bool:
    return not _has_flag(args, ("--compile",), short="C")


def _uniq(args: tuple[str, ...]) -> bool:
    # uniq INPUT OUTPUT writes OUTPUT
    return len([a for a in args if not a.startswith("-") or a == "-"]) <= 1


def _find(args: tuple[str, ...]) -> bool:
    return not any(a.startswith(FIND_ACTIONS) for a in args)


def _rg(args: tuple[str, ...]) -> bool:
    return not _has_flag(args, ("--pre",))


def _env(args: tuple[str, ...]) -> bool:
    return not args  # with arguments, env runs a command


def _git(args: tuple[str, ...]) -> bool:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg == "-C":
            i += 2
            continue
        if arg not in GIT_SAFE_GLOBAL_FLAGS and not arg.startswith(GIT_SAFE_GLOBAL_PREFIXES):
            return False  # -c and --exec-path can run arbitrary programs
        i += 1
    if i >= len(args) or args[i] not in GIT_READ_SUBCOMMANDS:
        return False
    sub, rest = args[i], args[i + 1 :]
    if _has_flag(rest, ("--output",)):
        return False
    return _git_branch_lists(rest) if sub == "branch" else True


def _git_branch_lists(args: tuple[str, ...]) -> bool:
    """``git branch`` only when it lists branches, never when it creates or deletes one."""
    takes_patterns = False
    for arg in args:
        if arg.startswith("--"):
            if arg not in GIT_BRANCH_LIST_FLAGS and not arg.startswith(GIT_BRANCH_VALUE_FLAGS):
                return False
            takes_patterns |= arg in GIT_BRANCH_PATTERN_FLAGS
        elif arg.startswith("-") and len(arg) > 1:
            if not set(arg[1:]) <= set("arvli"):
                return False
            takes_patterns |= "l" in arg
        elif not takes_patterns:
            return False  # a positional name creates a branch
    return True


_SPECIAL: dict[str, Callable[[tuple[str, ...]], bool]] = {
    "sort": _sort,
    "tree": _tree,
    "date": _date,
    "file": _file,
    "uniq": _uniq,
    "find": _find,
    "rg": _rg,
    "env": _env,
    "git": _git,
}
