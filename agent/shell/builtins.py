"""Shell builtins and small programs whose operands, not options, decide: ``test`` / ``[``
/ ``[[``, ``set``, ``alias``, ``env``, ``date``, and the ones that only print (``echo``,
``true``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.shell.options import Arg, Parsed, spec
from agent.shell.part import LITERAL
from agent.shell.readers import Check, accepts, by_spec

_INTEGER = re.compile(r"[+-]?\d+")
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
# -v / -R look up a variable by name, and a name like a[$(cmd)] runs cmd.
_VARIABLE_TESTS = frozenset({"-v", "-R"})


def _date_operands(parsed: Parsed) -> bool:
    return all(a.value.startswith("+") for a in parsed.operands)  # date MMDDhhmm sets the clock


def _env(args: Sequence[Arg]) -> bool:
    """``env`` only prints the environment; with a command or NAME=VALUE it runs something."""
    return accepts(spec("0u:i", "null unset= ignore-environment"), args, lambda p: not p.operands)


def _alias(args: Sequence[Arg]) -> bool:
    return all(a.kind == LITERAL and (a.value == "-p" or "=" not in a.value) for a in args)


def _test(args: Sequence[Arg]) -> bool:
    """``test`` / ``[`` / ``[[``: no variable lookups by name, arithmetic only on numbers."""
    words = [a.value for a in args]
    if any(a.kind != LITERAL for a in args) or _VARIABLE_TESTS & set(words):
        return False
    for i, word in enumerate(words):
        if word in _ARITHMETIC_TESTS:
            around = words[i - 1 : i] + words[i + 1 : i + 2]
            if not all(_INTEGER.fullmatch(w) for w in around):
                return False  # [[ x -eq 1 ]] evaluates $x as arithmetic, which can run code
    return True


# The shell options scripts switch on and off around read-only work (set -euo pipefail).
_SET_LETTERS = frozenset("euxv")
_SET_NAMES = frozenset({"errexit", "nounset", "xtrace", "verbose", "pipefail"})


def _set(args: Sequence[Arg]) -> bool:
    """``set`` with the options that only change how the script reports and stops."""
    i = 0
    while i < len(args):
        word = args[i].value
        if args[i].kind != LITERAL or word[:1] not in ("-", "+") or len(word) < 2:
            return False  # set alone lists every variable; set -- a b is not worth allowing
        letters = word[1:]
        if letters.endswith("o"):
            if i + 1 >= len(args) or args[i + 1].value not in _SET_NAMES:
                return False
            letters = letters[:-1]
            i += 1
        if not set(letters) <= _SET_LETTERS:
            return False
        i += 1
    return bool(args)


def _always(args: Sequence[Arg]) -> bool:
    return True


BUILTIN_CHECKS: dict[str, Check] = {
    "date": by_spec(
        spec(
            "d:f:I::r:Rs:u",
            "date= debug file= iso-8601=? resolution rfc-email rfc-3339= reference= set= "
            "utc universal help version",
            dangerous="-s --set",
        ),
        _date_operands,
    ),
    "env": _env,
    "alias": _alias,
    "test": _test,
    "[": lambda args: bool(args) and args[-1].value == "]" and _test(args[:-1]),
    "[[": lambda args: bool(args) and args[-1].value == "]]" and _test(args[:-1]),
    "set": _set,
    "echo": _always,  # echo prints its arguments whatever they look like
    "true": _always,
    "false": _always,
    ":": _always,
}
