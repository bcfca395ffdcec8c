"""Which program a simple command really runs, and what code it runs that the text only
carries as a string: behind ``sudo``, ``env``, ``timeout``, ``xargs``..., the body of
``bash -c``, ``eval``, ``find -exec`` and ``xargs CMD``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agent.shell.options import Arg, OptionSpec, parse, spec
from agent.shell.part import DYNAMIC, LITERAL

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
# Commands that run the command after them (their options skipped).
WRAPPERS = frozenset(
    {"sudo", "doas", "env", "nohup", "nice", "ionice", "timeout", "time", "command",
     "exec", "builtin", "xargs", "stdbuf", "unbuffer", "watch"}
)  # fmt: skip
FIND_RUNNERS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
BUILT_AT_RUN_TIME = "a command built at run time"
_MAX_DEPTH = 6

# How each wrapper reads its own options; the first operand (after ``leading`` ones such as
# timeout's DURATION) is the command it runs.
WRAPPER_SPECS: dict[str, tuple[OptionSpec, int]] = {
    "sudo": (
        spec(
            "AbEeHhiKklnPSsVvBC:D:g:p:R:r:t:T:U:u:",
            "askpass background preserve-env=? edit set-home help login remove-timestamp "
            "reset-timestamp list non-interactive preserve-groups stdin shell version validate "
            "bell close-from= chdir= group= prompt= chroot= role= type= command-timeout= "
            "other-user= user= host=",
            permute=False,
        ),
        0,
    ),
    "doas": (spec("Lnsa:C:u:", permute=False), 0),
    "env": (
        spec(
            "i0vu:C:S:",
            "ignore-environment null debug unset= chdir= split-string= block-signal=? "
            "default-signal=? ignore-signal=? list-signal-handling help version",
            permute=False,
        ),
        0,
    ),
    "nohup": (spec("", "help version", permute=False), 0),
    "nice": (spec("n:", "adjustment= help version", permute=False, numbers=True), 0),
    "ionice": (
        spec("c:n:tpPu", "class= classdata= ignore pid pgid uid help version", permute=False),
        0,
    ),
    "timeout": (
        spec(
            "k:s:pv",
            "kill-after= signal= preserve-status foreground verbose help version",
            permute=False,
        ),
        1,
    ),
    "time": (
        spec("apqvf:o:", "append portability quiet verbose format= output=", permute=False),
        0,
    ),
    "command": (spec("pvV", permute=False), 0),
    "exec": (spec("cla:", permute=False), 0),
    "builtin": (spec("", permute=False), 0),
    "stdbuf": (spec("i:o:e:", "input= output= error= help version", permute=False), 0),
    "unbuffer": (spec("p", permute=False), 0),
    "watch": (
        spec(
            "bcCd::eEgn:pq:rtwx",
            "beep color no-color differences=? errexit equexit= chgexit interval= precise "
            "no-rerun no-title no-wrap exec help version",
            permute=False,
        ),
        0,
    ),
    "xargs": (
        spec(
            "0a:d:E:e::I:i::L:l::n:oP:prs:tx",
            "null arg-file= delimiter= eof=? replace=? max-lines= max-args= open-tty "
            "max-procs= interactive process-slot-var= no-run-if-empty max-chars= show-limits "
            "verbose exit help version",
            permute=False,
        ),
        0,
    ),
}
SHELL_SPEC = spec("abCefhimnuvxBHPTlcsrO:o:", "rcfile= init-file= login noprofile norc posix "
                  "restricted verbose version help debugger dump-strings pretty-print "
                  "noediting", permute=False)  # fmt: skip


@dataclass
class Invocation:
    """The program a part runs (its index in the words, None when it runs none), the code it
    runs as text, and whether that code is only known at run time."""

    program: int | None = None
    nested: list[str] = field(default_factory=list)
    dynamic: bool = False
    reason: str = ""

    def built_at_run_time(self, reason: str = BUILT_AT_RUN_TIME) -> None:
        self.dynamic = True
        self.reason = self.reason or reason


@dataclass(frozen=True)
class Unwrapped:
    """A wrapper's own options and the command it runs (``command`` None: it runs none)."""

    name: str
    options: list[tuple[str, str | None]]
    command: int | None


def basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def unwrap(words: Sequence[Arg], i: int) -> Unwrapped | None:
    """Read the wrapper ``words[i]``; None when its options cannot be read."""
    name = basename(words[i].value)
    wrapper_spec, leading = WRAPPER_SPECS[name]
    rest = list(words[i + 1 :])
    parsed = parse(wrapper_spec, rest)
    if parsed is None:
        return None
    if parsed.unknown_in_options:
        return None
    if name == "env":
        while parsed.operands and "=" in parsed.operands[0].value:
            parsed.operands.pop(0)  # NAME=VALUE
    if (name == "command" and parsed.has("-v", "-V")) or (
        name == "ionice" and parsed.has("-p", "-P", "-u", "--pid", "--pgid", "--uid")
    ):
        return Unwrapped(name, parsed.options, None)
    operands = parsed.operands[leading:]
    if not operands:
        return Unwrapped(name, parsed.options, None)
    return Unwrapped(name, parsed.options, len(words) - len(operands))


def analyze(words: Sequence[Arg], depth: int = 0) -> Invocation:
    """Follow wrappers to the program ``words`` runs and collect the code it runs as text."""
    found = Invocation()
    i = 0
    for _ in range(_MAX_DEPTH):
        if i >= len(words):
            return found
        word = words[i]
        if word.kind != LITERAL:
            found.program = i
            found.built_at_run_time("a command name that comes from a variable")
            return found
        name = basename(word.value)
        if name not in WRAPPER_SPECS:
            break
        nxt = _through_wrapper(words, i, found, depth)
        if nxt is None:
            return found
        if name == "time":  # the time keyword times a pipeline, which may be negated: time ! cmd
            while nxt < len(words) and words[nxt].kind == LITERAL and words[nxt].value == "!":
                nxt += 1
            if nxt >= len(words):
                return found
        i = nxt
    found.program = i
    name = basename(words[i].value)
    if name == "eval":
        _eval(words[i + 1 :], found)
    elif name in SHELLS:
        _shell(words[i + 1 :], found)
    elif name == "find":
        _find(words[i + 1 :], found, depth)
    return found


def _through_wrapper(words: Sequence[Arg], i: int, found: Invocation, depth: int) -> int | None:
    """Where the command behind the wrapper ``words[i]`` starts; None when there is none
    (or the rest is only text, which ``found`` then records)."""
    name = basename(words[i].value)
    unwrapped = unwrap(words, i)
    if unwrapped is None:
        return _rough_skip(words, i)
    split = [v for n, v in unwrapped.options if n in ("-S", "--split-string") and v is not None]
    if name == "env" and split:
        # env -S 'cmd args' runs the words of its string
        _shell_text(split[-1], words[i + 1 :], found)
        return None
    if unwrapped.command is None:
        return None
    tail = list(words[unwrapped.command :])
    if name == "xargs":
        _xargs(unwrapped, tail, found, depth)
        return None
    if name == "watch" and not any(n in ("-x", "--exec") for n, _ in unwrapped.options):
        _shell_text(" ".join(a.value for a in tail), tail, found)  # watch runs sh -c "$*"
        return None
    return unwrapped.command


def _rough_skip(words: Sequence[Arg], i: int) -> int | None:
    """Options a wrapper spec does not know: skip what looks like options, values, durations
    and NAME=VALUE, so the command behind can still be found for deny rules."""
    j = i + 1
    while j < len(words) and (
        words[j].value.startswith("-") or "=" in words[j].value or words[j].value[:1].isdigit()
    ):
        j += 1
    return j if j < len(words) else None


def _eval(args: Sequence[Arg], found: Invocation) -> None:
    if all(a.kind == LITERAL for a in args):
        text = " ".join(a.value for a in args)
        if text.strip():
            found.nested.append(text)
    else:
        found.built_at_run_time()


def _shell(args: Sequence[Arg], found: Invocation) -> None:
    """``bash [options] -c BODY [name [args]]``: BODY is code."""
    as_minus = _plus_as_minus(args)
    parsed = parse(SHELL_SPEC, as_minus)
    if parsed is None or parsed.unknown_in_options:
        if any("c" in a.value[1:] for a in as_minus if a.value.startswith("-")):
            found.built_at_run_time()  # a -c we cannot place: assume the worst
        return
    if not parsed.has("-c") or not parsed.operands:
        return
    _shell_text(parsed.operands[0].value, [parsed.operands[0]], found)


def _plus_as_minus(args: Sequence[Arg]) -> list[Arg]:
    """``+x``, ``+o NAME`` switch options off; read them as their ``-`` forms."""
    out = list(args)
    i = 0
    while i < len(out) and out[i].value[:1] in ("-", "+") and out[i].value not in ("-", "--"):
        word = out[i]
        if word.value[0] == "+":
            out[i] = Arg("-" + word.value[1:], word.kind, word.raw)
        i += 2 if word.value[1:] in ("o", "O") else 1
    return out


def _shell_text(text: str, sources: Sequence[Arg], found: Invocation) -> None:
    if any(a.kind != LITERAL for a in sources):
        found.built_at_run_time()
    elif text.strip():
        found.nested.append(text)


def _xargs(unwrapped: Unwrapped, tail: list[Arg], found: Invocation, depth: int) -> None:
    """``xargs CMD ARGS``: CMD runs with words read from input added (or put in place of
    the -I string), so those words are unknown."""
    replace = [v for n, v in unwrapped.options if n in ("-I", "-i", "--replace")]
    marker = (replace[-1] or "{}") if replace else None
    found.nested.append(" ".join(a.shell_text for a in tail))
    if marker:
        tail = [Arg(a.value, DYNAMIC) if marker in a.value else a for a in tail]
    else:
        tail = [*tail, Arg("", DYNAMIC)]
    inner = analyze(tail, depth + 1)
    if inner.dynamic:
        found.built_at_run_time(inner.reason)


def _find(args: Sequence[Arg], found: Invocation, depth: int) -> None:
    """``find ... -exec CMD ARGS ;``: CMD runs once per file, ``{}`` being the file name."""
    i = 0
    while i < len(args):
        if args[i].value not in FIND_RUNNERS:
            i += 1
            continue
        start = i + 1
        end = start
        while (
            end < len(args)
            and args[end].value != ";"
            and not (args[end].value == "+" and args[end - 1].value == "{}")
        ):
            end += 1
        tail = list(args[start:end])
        if tail:
            found.nested.append(" ".join(a.shell_text for a in tail))
            marked = [Arg(a.value, DYNAMIC) if "{}" in a.value else a for a in tail]
            inner = analyze(marked, depth + 1)
            if inner.dynamic:
                found.built_at_run_time(inner.reason)
        i = end + 1
