"""sed and awk: read-only only when their scripts cannot write files or run commands.

A sed script is parsed command by command (GNU syntax); ``w``/``W`` and the ``w`` flag of
``s`` write files, ``e`` and the ``e`` flag of ``s`` run the pattern space as a command. An
awk program is tokenized; ``system``, any pipe, output redirection in ``print``/``printf``
and gawk's ``@load``/``@include`` make it unsafe. A script the parser cannot follow, or one
read from a file (``-f``), is not read-only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.shell.options import Arg, parse, spec
from agent.shell.part import LITERAL

_SED = spec(
    "nrEsuzl:e:f:i::b",
    "quiet silent regexp-extended separate unbuffered null-data zero-terminated "
    "line-length= expression= file= in-place=? binary posix debug sandbox follow-symlinks "
    "help version",
    dangerous="-i --in-place -f --file",  # -f: a script the text does not show
)
_SED_SIMPLE = frozenset("=dDgGhHnNpPxzF")
_SED_NUMBER_ARG = frozenset("qQlL")
_SED_TEXT = frozenset("aic")
_SED_LABEL = frozenset("btT:")
_SED_SAFE_S_FLAGS = frozenset("gpiImM0123456789")


def sed_read_only(args: Sequence[Arg]) -> bool:
    parsed = parse(_SED, args)
    if parsed is None or parsed.dangerous or parsed.unknown_in_options:
        return False
    scripts = parsed.values("-e", "--expression")
    if not scripts:
        if not parsed.operands or parsed.operands[0].kind != LITERAL:
            return False
        scripts = [parsed.operands[0].value]
    return all(_SedScript(text).safe() for text in scripts)


class _SedScript:
    """A cursor over one sed script; ``safe`` is False for anything it cannot follow."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def skip_blanks(self, newlines: bool = False) -> None:
        blanks = " \t\n;" if newlines else " \t"
        while self.peek() and self.peek() in blanks:
            self.i += 1

    def rest_of_line(self) -> str:
        end = self.text.find("\n", self.i)
        end = len(self.text) if end < 0 else end
        line, self.i = self.text[self.i : end], end
        return line

    def safe(self) -> bool:
        try:
            while True:
                self.skip_blanks(newlines=True)
                if not self.peek():
                    return True
                if not self.command():
                    return False
        except ValueError:
            return False

    def command(self) -> bool:
        if self.peek() == "#":
            self.rest_of_line()
            return True
        self.address()
        self.skip_blanks()
        if self.peek() == ",":
            self.i += 1
            self.skip_blanks()
            self.address(second=True)
            self.skip_blanks()
        while self.peek() == "!":
            self.i += 1
            self.skip_blanks()
        name = self.peek()
        self.i += 1
        if name == "{":
            return True  # a command may follow at once
        if name == "}" or name in _SED_SIMPLE:
            return self.end_of_command()
        if name in _SED_NUMBER_ARG:
            self.skip_blanks()
            while self.peek().isdigit():
                self.i += 1
            return self.end_of_command()
        if name in _SED_TEXT:
            self.text_argument()
            return True
        if name in _SED_LABEL:
            self.skip_blanks()
            while self.peek() and self.peek() not in ";\n":
                self.i += 1
            return True
        if name in "rR":
            self.rest_of_line()  # reads a file: fine
            return True
        if name == "v":
            self.skip_blanks()
            while self.peek() and self.peek() not in " \t;\n}":
                self.i += 1
            return self.end_of_command()
        if name == "s":
            return self.substitute()
        if name == "y":
            delimiter = self.delimiter()
            self.until(delimiter)
            self.until(delimiter)
            return self.end_of_command()
        return False  # w, W, e and anything unknown

    def end_of_command(self) -> bool:
        self.skip_blanks()
        nxt = self.peek()
        if nxt in ("", ";", "\n", "}", "#"):
            if nxt in (";", "\n"):
                self.i += 1
            return True
        return False

    def address(self, second: bool = False) -> None:
        c = self.peek()
        if c.isdigit():
            while self.peek().isdigit() or self.peek() == "~":
                self.i += 1
        elif c == "$":
            self.i += 1
        elif c in ("+", "~") and second:
            self.i += 1
            while self.peek().isdigit():
                self.i += 1
        elif c in ("/", "\\"):
            if c == "\\":
                self.i += 1
            self.until(self.delimiter())
            while self.peek() in ("I", "M"):
                self.i += 1

    def delimiter(self) -> str:
        c = self.peek()
        if not c or c in "\n\\":
            raise ValueError("no delimiter")
        self.i += 1
        return c

    def until(self, delimiter: str) -> None:
        """Skip to just past the next unescaped ``delimiter``."""
        while True:
            c = self.peek()
            if not c:
                raise ValueError("unterminated")
            self.i += 2 if c == "\\" else 1
            if c == delimiter:
                return

    def substitute(self) -> bool:
        delimiter = self.delimiter()
        self.until(delimiter)
        self.until(delimiter)
        while self.peek() and self.peek() not in " \t;\n}#":
            flag = self.peek()
            if flag not in _SED_SAFE_S_FLAGS:
                return False  # w FILE writes, e runs the result as a command
            self.i += 1
        return self.end_of_command()

    def text_argument(self) -> None:
        """a/i/c: the text runs to the end of the line, on while lines end in a backslash."""
        while True:
            line = self.rest_of_line()
            if not line.endswith("\\") or not self.peek():
                return
            self.i += 1


_AWK = spec(
    "F:v:f:e:E:i:l:d::D::o::p::bcCghLMnNOPrsStVW:",
    "field-separator= assign= file= source= exec= include= load= dump-variables=? debug=? "
    "pretty-print=? profile=? characters-as-bytes traditional copyright gen-pot help lint=? "
    "bignum use-lc-numeric non-decimal-data optimize no-optimize posix re-interval sandbox "
    "lint-old version csv",
    # program files, extensions, and the options that write dumps or profiles
    dangerous="-f --file -E --exec -i --include -l --load -d --dump-variables -D --debug "
    "-o --pretty-print -p --profile -W",
    permute=False,
)
_AWK_TOKEN = re.compile(
    r"""(?P<space>[ \t]+|\\\n)|(?P<newline>\n)|(?P<comment>\#[^\n]*)
    |(?P<string>"(?:[^"\\\n]|\\.)*")|(?P<number>\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)
    |(?P<name>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<op>\|\||&&|\|&|>>|>=|<=|==|!=|\+\+|--|\*\*=|[-+*/%^]=|\*\*|[{}()\[\];,<>|!~?:=+\-*/%^$@&])
    """,
    re.VERBOSE,
)
_AWK_REGEX = re.compile(r"/(?:[^/\\\n]|\\.)*/")
_AWK_OPERAND_END = frozenset({"name", "number", "string", "regex"})
_AWK_UNSAFE_NAMES = frozenset({"system", "extension"})


def awk_read_only(args: Sequence[Arg]) -> bool:
    parsed = parse(_AWK, args)
    if parsed is None or parsed.dangerous or parsed.unknown_in_options:
        return False
    programs = parsed.values("-e", "--source")
    if not programs:
        if not parsed.operands or parsed.operands[0].kind != LITERAL:
            return False
        programs = [parsed.operands[0].value]
    return all(_awk_program_safe(p) for p in programs)


def _awk_program_safe(program: str) -> bool:
    """No system(), no pipe, no output redirection, no gawk directive (@load...)."""
    i = 0
    depth = 0
    print_depth: int | None = None  # paren depth of the print statement being read
    last = ""  # kind of the previous significant token, to tell a regex from a division
    last_text = ""
    while i < len(program):
        if program[i] == "/" and (
            last not in _AWK_OPERAND_END and last_text not in (")", "]", "$")
        ):
            match = _AWK_REGEX.match(program, i)
            if match is None:
                return False
            i, last, last_text = match.end(), "regex", ""
            continue
        match = _AWK_TOKEN.match(program, i)
        if match is None:
            return False
        kind, text = match.lastgroup or "", match.group()
        i = match.end()
        if kind in ("space", "comment"):
            continue
        if kind == "newline" or text in (";", "{", "}"):
            print_depth = (
                None if last_text not in (",", "&&", "||") or text != "\n" else print_depth
            )
            if kind == "newline":
                continue
        if kind == "name" and text in _AWK_UNSAFE_NAMES:
            return False
        if kind == "name" and text in ("print", "printf"):
            print_depth = depth
        if text in ("|", "|&", "@"):
            return False
        if text in (">", ">>") and print_depth is not None and depth == print_depth:
            return False  # print ... > file
        if text in ("(", "["):
            depth += 1
        elif text in (")", "]"):
            depth -= 1
        last, last_text = kind, text
    return True
