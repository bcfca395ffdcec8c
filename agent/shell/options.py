"""Command-line options read the way getopt_long reads them, against a program's spec.

Long options match by unique prefix (``--outp`` is ``--output``); an ambiguous prefix counts
as its most dangerous match. ``--opt=value`` and ``--opt value``, clustered short options
(``-rno FILE``, ``-oFILE``) and ``--`` work as in GNU getopt. An option the spec does not
know makes the parse fail: the caller then asks rather than guesses.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from agent.shell.part import LITERAL

NONE, REQUIRED, OPTIONAL, TWO, LASTARG = "none", "required", "optional", "two", "lastarg"
_NUMBER_OPTION = re.compile(r"-\d+")


class Arg(NamedTuple):
    """One argument: its value, how far the text fixes it (LITERAL, GLOB...), and the text
    as written when it came from a command line."""

    value: str
    kind: str = LITERAL
    raw: str = ""

    @property
    def shell_text(self) -> str:
        """The argument as shell text that reads back as the same word."""
        return self.raw or shlex.quote(self.value)


@dataclass(frozen=True)
class OptionSpec:
    """What a program accepts: short letters and long names with their arity, which of them
    write files or run programs, and how operands may look."""

    short: dict[str, str]
    long: dict[str, str]
    dangerous: frozenset[str] = frozenset()
    permute: bool = True  # GNU: options may follow operands; False stops at the first operand
    numbers: bool = False  # -NUM is an option (head -5, git log -3)
    max_operands: int | None = None

    @property
    def tolerates_unknown_words(self) -> bool:
        """Whether a word the text does not fix (a glob, input from xargs) is harmless
        wherever it lands: nothing the program accepts writes or runs anything."""
        return not self.dangerous and self.max_operands is None


def spec(
    short: str = "",
    long: str = "",
    dangerous: str = "",
    *,
    permute: bool = True,
    numbers: bool = False,
    max_operands: int | None = None,
) -> OptionSpec:
    """Build a spec from getopt-like strings.

    ``short`` is a getopt optstring (``"ab:c::"``: -b takes a value, -c an attached optional
    one). ``long`` lists names: ``name`` takes nothing, ``name=`` a value, ``name=?`` an
    optional ``=value``, ``name=2`` two values, ``name=!`` the next word unless it is the
    last. ``dangerous`` names the options that write or run something (``"-o --output"``).
    """
    shorts: dict[str, str] = {}
    i = 0
    while i < len(short):
        letter = short[i]
        colons = len(short[i + 1 :]) - len(short[i + 1 :].lstrip(":"))
        shorts[letter] = (NONE, REQUIRED, OPTIONAL)[min(colons, 2)]
        i += 1 + colons
    longs: dict[str, str] = {}
    suffixes = {"=": REQUIRED, "=?": OPTIONAL, "=2": TWO, "=!": LASTARG}
    for item in long.split():
        name, eq, rest = item.partition("=")
        longs[name] = suffixes[eq + rest] if eq else NONE
    danger = frozenset(dangerous.split())
    unknown = {d for d in danger if d.lstrip("-") not in (longs if d.startswith("--") else shorts)}
    if unknown:
        raise ValueError(f"dangerous options missing from the spec: {sorted(unknown)}")
    return OptionSpec(shorts, longs, danger, permute, numbers, max_operands)


@dataclass
class Parsed:
    """The options (canonical names: ``-o``, ``--output``) and operands of a command line."""

    options: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[Arg] = field(default_factory=list)
    dangerous: bool = False  # an option that writes or runs, or an ambiguous prefix of one
    unknown_in_options: bool = False  # a glob-like word where it could become an option
    unknown_operands: bool = False  # a glob-like word among the operands (count unknown)

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[str]:
        return [value or "" for name, value in self.options if name in names]


def parse(option_spec: OptionSpec, args: Sequence[Arg]) -> Parsed | None:
    """Read ``args`` as the program would; None when an option is unknown or misused."""
    parsed = Parsed()
    i = 0
    options_open = True
    while i < len(args):
        arg = args[i]
        i += 1
        is_option = arg.value.startswith("-") and arg.value != "-"
        if not options_open or not is_option:
            if arg.kind != LITERAL:
                if options_open:
                    parsed.unknown_in_options = True
                parsed.unknown_operands = True
            parsed.operands.append(arg)
            if not option_spec.permute:
                options_open = False
            continue
        if arg.kind != LITERAL:
            parsed.unknown_in_options = True
        if arg.value == "--":
            options_open = False
            continue
        taken = (
            _long(option_spec, args, i, parsed)
            if arg.value.startswith("--")
            else (_short(option_spec, args, i, parsed))
        )
        if taken is None:
            return None
        i += taken
    if option_spec.max_operands is not None and len(parsed.operands) > option_spec.max_operands:
        return None
    return parsed


def _long(option_spec: OptionSpec, args: Sequence[Arg], i: int, parsed: Parsed) -> int | None:
    """Read ``args[i - 1]``, a long option; how many following words it took, or None."""
    name, eq, value = args[i - 1].value[2:].partition("=")
    if not name:
        return None
    if name in option_spec.long:
        candidates = [name]
    else:
        candidates = [known for known in option_spec.long if known.startswith(name)]
    if not candidates:
        return None
    risky = [c for c in candidates if f"--{c}" in option_spec.dangerous]
    if risky:
        parsed.dangerous = True
        candidates = risky
    arity = option_spec.long[candidates[0]]
    if len({option_spec.long[c] for c in candidates}) > 1:
        return None  # ambiguous between options that read their value differently
    canonical = f"--{candidates[0]}"
    return _take_value(canonical, arity, value if eq else None, args, i, parsed)


def _short(option_spec: OptionSpec, args: Sequence[Arg], i: int, parsed: Parsed) -> int | None:
    """Read ``args[i - 1]``, a cluster of short options; words taken after it, or None."""
    cluster = args[i - 1].value
    if option_spec.numbers and _NUMBER_OPTION.fullmatch(cluster):
        parsed.options.append(("-NUM", cluster[1:]))
        return 0
    j = 1
    while j < len(cluster):
        letter = cluster[j]
        arity = option_spec.short.get(letter)
        if arity is None:
            return None
        canonical = f"-{letter}"
        parsed.dangerous |= canonical in option_spec.dangerous
        attached = cluster[j + 1 :]
        if arity == NONE:
            parsed.options.append((canonical, None))
            j += 1
            continue
        if arity == OPTIONAL:
            parsed.options.append((canonical, attached or None))
            return 0
        return _take_value(canonical, arity, attached or None, args, i, parsed)
    return 0


def _take_value(
    canonical: str, arity: str, value: str | None, args: Sequence[Arg], i: int, parsed: Parsed
) -> int | None:
    if arity == NONE:
        if value is not None:
            return None  # "--opt=x" for an option without a value: the program refuses
        parsed.options.append((canonical, None))
        return 0
    if arity == OPTIONAL or value is not None:
        parsed.options.append((canonical, value))
        return 0
    wanted = 2 if arity == TWO else 1
    if i + wanted > len(args):
        if arity == LASTARG:
            parsed.options.append((canonical, None))
            return 0
        return None
    taken = args[i : i + wanted]
    if any(a.kind != LITERAL for a in taken):
        parsed.unknown_in_options = True
    parsed.options.append((canonical, " ".join(a.value for a in taken)))
    return wanted
