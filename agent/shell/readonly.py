"""Shell commands that only look at things, so Bash may run them without asking.

Right by construction, and when in doubt it asks: a part is read-only only when it is a
plain command (not opaque, no assignment prefix, no output redirection to a file, no word
whose value is computed at run time), its program is a bare name on the list, and every
option on its command line is one the program's spec knows and none writes a file or runs
a program. Long options match by unique prefix as getopt does (``sort --outp`` is
``--output``). Wrappers (``timeout``, ``nice``, ``xargs``...) are read-only when what they
run is; ``sudo`` and ``doas`` never are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent.shell.builtins import BUILTIN_CHECKS
from agent.shell.find_tar import find_read_only, tar_read_only
from agent.shell.git_rules import git_read_only
from agent.shell.options import Arg, parse, spec
from agent.shell.part import DYNAMIC, GLOB, LITERAL, CommandPart
from agent.shell.readers import CHECKS
from agent.shell.scripts import awk_read_only, sed_read_only
from agent.shell.split import split_command
from agent.shell.wrappers import SHELLS, WRAPPER_SPECS

_MAX_DEPTH = 4
# Options of the wrappers that are not harmless: time -o writes, xargs -p/-o read the tty,
# --process-slot-var sets a variable for the command.
_WRAPPER_DANGER = {
    "time": frozenset({"-o", "--output", "-a", "--append"}),
    "xargs": frozenset({"-p", "--interactive", "-o", "--open-tty", "--process-slot-var"}),
}
_READ_ONLY_WRAPPERS = frozenset({"timeout", "nice", "nohup", "time", "command", "stdbuf",
                                 "builtin", "xargs"})  # fmt: skip
_SHELL_FLAGS = spec("celuxo:", permute=False)


def is_read_only(part: CommandPart) -> bool:
    """True when running ``part`` cannot change anything."""
    return _part_read_only(part, 0)


def is_read_only_command(command: str, depth: int = 0) -> bool:
    """True when every part of a command line is read-only."""
    if depth > _MAX_DEPTH:
        return False
    parts = split_command(command)
    return bool(parts) and all(_part_read_only(p, depth) for p in parts)


def _part_read_only(part: CommandPart, depth: int) -> bool:
    if part.opaque or part.dynamic_program or part.writes or part.assignments:
        return False
    args = [Arg(w, k) for w, k in zip(part.words, part.word_kinds, strict=True)]
    return _runs_read_only(args, depth)


def _runs_read_only(args: Sequence[Arg], depth: int) -> bool:
    if not args or depth > _MAX_DEPTH or any(a.kind == DYNAMIC for a in args):
        return False
    program = args[0]
    name = program.value
    if program.kind != LITERAL or "/" in name:
        return False  # ./ls could be anything
    if name in _READ_ONLY_WRAPPERS:
        return _wrapper_read_only(name, args, depth)
    if name in SHELLS:
        return _shell_read_only(args[1:], depth)
    if name == "eval":
        return is_read_only_command(" ".join(a.value for a in args[1:]), depth + 1)
    check = _SPECIAL.get(name) or BUILTIN_CHECKS.get(name) or CHECKS.get(name)
    return check is not None and check(args[1:])


def _wrapper_read_only(name: str, args: Sequence[Arg], depth: int) -> bool:
    wrapper_spec, leading = WRAPPER_SPECS[name]
    parsed = parse(wrapper_spec, args[1:])
    if parsed is None or parsed.unknown_in_options:
        return False
    if any(option in _WRAPPER_DANGER.get(name, ()) for option, _ in parsed.options):
        return False
    if name == "command" and parsed.has("-v", "-V"):
        return True  # only says what a name is
    inner = parsed.operands[leading:]
    if name == "xargs":
        return _xargs_read_only(parsed.options, inner, depth)
    return bool(inner) and _runs_read_only(inner, depth + 1)


def _xargs_read_only(options: list[tuple[str, str | None]], inner: list[Arg], depth: int) -> bool:
    """xargs runs its command with words read from input: words the text does not fix."""
    if not inner:
        return True  # echo
    replace = [value or "{}" for name, value in options if name in ("-I", "-i", "--replace")]
    if replace:
        inner = [Arg(a.value, GLOB) if replace[-1] in a.value else a for a in inner]
    else:
        inner = [*inner, Arg("", GLOB)]
    return _runs_read_only(inner, depth + 1)


def _shell_read_only(args: Sequence[Arg], depth: int) -> bool:
    """``bash -c 'BODY'`` is read-only when BODY is."""
    parsed = parse(_SHELL_FLAGS, args)
    if parsed is None or not parsed.has("-c") or not parsed.operands:
        return False
    if parsed.values("-o") and parsed.values("-o") != ["pipefail"]:
        return False
    return is_read_only_command(parsed.operands[0].value, depth + 1)


_SPECIAL: dict[str, Callable[[Sequence[Arg]], bool]] = {
    "git": git_read_only,
    "find": find_read_only,
    "tar": tar_read_only,
    "sed": sed_read_only,
    "awk": awk_read_only,
    "gawk": awk_read_only,
}
