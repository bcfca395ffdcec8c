"""The shell parser against bash itself: the words bash passes and the commands it runs."""

from __future__ import annotations

import os
import subprocess
import tempfile

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from agent.shell.options import Arg
from agent.shell.part import LITERAL
from agent.shell.split import iter_all_parts, split_command
from agent.shell.wrappers import analyze

WORD_ATOMS = [
    "a", "-x", "--opt=v", "'q s'", '"d q"', "\\ ", "\\\\", "\\'", '\\"', "$'\\n'",
    "$'a\\'b'", "$'\\x41'", "$'\\101'", '"a\\"b"', '"\\$x"', "\\\n", " \\\n", "\\;",
    "\\|", "=", "a=b", "#c", "\\#", "x#y", '""', "''", "\\*", "'*'", "%", ",", "@", "+",
    "{}", "\\{a,b\\}", "'{a,b}'", "\t", "é", "\\é", '"é"', "$'\\u00e9'", '$"t"', "!", ":",
]  # fmt: skip
RUN_ATOMS = [
    "a", "b", "c", "x", "-y", "#", "#z", "\\#", "\\ ", "\\\n", "\n", ";", "&&", "||", "|",
    " ", "\t", "'q'", '"d"', "'#'", "$'e'", "\\;", "{", "}", "(", ")", "x#", "\\", "'", '"',
    "!", "k=v", '$"t"', "\\\\", ">/dev/null", "2>&1", "<<<w", "$(a)", "`b`", "<<E\nx\nE\n",
    "if ", "then ", "fi", "do ", "done", "for i in 1;", "case x in x) ", ";;", "esac", "{ ",
    "; }", "eval ", "bash -c ", "sh -c 'a'", "xargs ", "env ", "time ", "! ", "2>", "<(a)",
    '"$(b)"', "a=1 ", "$x",
]  # fmt: skip
_SPACED = st.lists(st.tuples(st.sampled_from(WORD_ATOMS), st.booleans()), min_size=1, max_size=6)
_LINES = st.lists(st.tuples(st.sampled_from(RUN_ATOMS), st.booleans()), min_size=1, max_size=8)
_BASH_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}


def _bash(script: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    with tempfile.TemporaryDirectory() as empty:
        return subprocess.run(
            ["bash", "--norc", "--noprofile", "-c", script],
            capture_output=True, timeout=10, cwd=empty, env={**_BASH_ENV, **env},
        )  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SPACED)
# Found by this test: the grammar reads `#c\` inside a word as a comment.
@example([("'q s'", False), ("#c", False), ("\\\n", False), ("a", False)])
# And: `cmd #c\<newline>:` is two commands, the comment's backslash continues nothing.
@example([("#c", False), ("\\\n", False), (":", False)])
def test_word_values_are_the_arguments_bash_passes(atoms: list[tuple[str, bool]]) -> None:
    line = "cmd " + "".join(a + (" " if spaced else "") for a, spaced in atoms)
    run = _bash("set -f +B +H; printf '%s\\0' " + line)
    assume(run.returncode == 0)
    expected = run.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]
    parts = split_command(line)
    if len(parts) == 1 and not parts[0].opaque:
        assert list(parts[0].words) == expected
    elif parts and not parts[0].opaque and list(parts[0].words) == expected:
        pass  # a comment ended the line and a newline started another command, as in bash
    else:  # what the parser is unsure of it must say so
        assert any(p.dynamic_program for p in parts)


_RECORDERS = "".join(
    f'{name}(){{ printf \'{name}\\037%s\\036\' "$*" >>"$OUT"; }}; ' for name in "abc"
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINES)
@example([("time ", False), ("! ", False), ("a", False)])  # found by this test: time ! cmd
@example([("! ", False), ("! ", False), ("a", False)])  # and: ! ! cmd
def test_every_command_bash_runs_is_a_part(atoms: list[tuple[str, bool]]) -> None:
    """Each simple command bash runs shows up as a part with the same words, or the parse
    owns up to a computed program (which deny rules and the classifier treat as unknown)."""
    line = "".join(a + (" " if spaced else "") for a, spaced in atoms)
    assume("&" not in line.replace("&&", "").replace("2>&1", ""))  # no background jobs
    with tempfile.NamedTemporaryFile("rb") as out:
        _bash(_RECORDERS + "\n" + line, OUT=out.name)
        runs = [r.split(b"\x1f") for r in out.read().split(b"\x1e") if r]
    parts = iter_all_parts(line)
    if any(p.dynamic_program for p in parts):
        return
    seen: set[tuple[str, str]] = set()
    for part in parts:
        program = analyze(
            [Arg(w, k) for w, k in zip(part.words, part.word_kinds, strict=True)]
        ).program
        words, kinds = part.words[program or 0 :], part.word_kinds[program or 0 :]
        if words and all(k == LITERAL for k in kinds):
            seen.add((words[0], " ".join(words[1:])))
        elif words:
            seen.add((words[0], "*"))  # arguments computed at run time
    for name, args in runs:
        call = (name.decode(), args.decode("utf-8", "surrogateescape"))
        assert call in seen or (call[0], "*") in seen, (line, call, seen)
