"""Split a shell command line into the simple commands it runs, for permission checks.

``git status && rm -rf build | tee log`` runs three commands; each is checked on
its own. The tokenizer follows bash's quoting (single and double quotes,
backslashes, ``$'...'``), drops comments, skips heredoc bodies, and records
what cannot be judged from the text alone: command substitution, subshells,
process substitution and a command name that comes from a variable make a
part *opaque*, so no allow rule can vouch for it. Output redirections to files
are collected, because they make an otherwise read-only command a write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SEPARATORS = ("&&", "||", ";;&", ";;", ";&", "|&", ";", "|", "&", "\n")
# Longest first, so "&>>" wins over "&>" and ">>" over ">".
REDIRECTIONS = ("&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<<", "<&", "<>", ">", "<")
WRITE_REDIRECTIONS = {"&>>", "&>", ">>", ">|", ">", "<>", ">&"}
HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}
# Words that open or continue a compound command; the command after them is what runs.
LEADING_KEYWORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "time", "{"}
CLOSING_KEYWORDS = {"fi", "done", "esac", "}"}
_METACHARS = set(" \t\n;&|<>()")
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
# Commands that run the command after them (their options skipped).
WRAPPERS = frozenset(
    {"sudo", "doas", "env", "nohup", "nice", "ionice", "timeout", "time", "command",
     "exec", "builtin", "xargs", "stdbuf", "unbuffer", "watch"}
)  # fmt: skip
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


@dataclass(frozen=True)
class CommandPart:
    """One simple command of a command line."""

    text: str  # as written, redirections included
    raw_words: tuple[str, ...]  # as written, without leading assignments/keywords or redirections
    words: tuple[str, ...]  # the same words with quotes and escapes removed
    writes: tuple[str, ...] = ()  # files written by output redirections
    opaque_reason: str = ""  # why the text cannot be trusted to say what runs
    nested: tuple[str, ...] = ()  # commands inside $(...), `...`, <(...) and (...)

    @property
    def command(self) -> str:
        """The command as permission rules see it: its words, one space apart."""
        return " ".join(self.raw_words)

    @property
    def opaque(self) -> bool:
        return bool(self.opaque_reason)


@dataclass
class _Word:
    raw: str = ""
    value: str = ""
    dynamic: bool = False  # contains a $ expansion
    quoted: bool = False


@dataclass
class _PartBuilder:
    start: int
    end: int = -1
    words: list[_Word] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    opaque_reason: str = ""
    nested: list[str] = field(default_factory=list)

    def make_opaque(self, reason: str) -> None:
        self.opaque_reason = self.opaque_reason or reason


def split_command(command: str) -> list[CommandPart]:
    """The simple commands of ``command``, in order; empty parts are dropped."""
    return _Splitter(command).split()


def iter_all_parts(command: str, depth: int = 0) -> list[CommandPart]:
    """The parts of ``command`` and, recursively, of every command nested inside them."""
    parts = split_command(command)
    found = list(parts)
    if depth < 5:
        for part in parts:
            for inner in part.nested:
                found.extend(iter_all_parts(inner, depth + 1))
    return found


class _Splitter:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.builders: list[_PartBuilder] = [_PartBuilder(0)]
        self.heredocs: list[tuple[_PartBuilder, str, bool, bool]] = []

    @property
    def part(self) -> _PartBuilder:
        return self.builders[-1]

    def split(self) -> list[CommandPart]:
        text = self.text
        while self.i < len(text):
            c = text[self.i]
            if c in " \t":
                self.i += 1
            elif text.startswith("\\\n", self.i):
                self.i += 2
            elif c == "#":
                end = text.find("\n", self.i)
                self._cut_part(self.i)
                self.i = len(text) if end < 0 else end
            elif text.startswith(("<(", ">("), self.i):
                self.i += 1
                self._substitution("process substitution", _Word(raw=c, value=c))
            elif (op := _match(text, self.i, REDIRECTIONS)) is not None:
                self.i += len(op)
                self._redirection(op)
            elif (sep := _match(text, self.i, SEPARATORS)) is not None:
                self._cut_part(self.i)
                self.i += len(sep)
                if sep == "\n":
                    self._skip_heredoc_bodies()
                self.builders.append(_PartBuilder(self.i))
            elif c == "(":
                self._substitution("a subshell", _Word())
            elif c == ")":
                self.part.make_opaque("unbalanced parentheses")
                self.i += 1
            else:
                word = self._read_word()
                if word.raw.isdigit() and self.text.startswith(("<", ">"), self.i):
                    continue  # a file-descriptor number such as the 2 in 2>file
                self.part.words.append(word)
        self._cut_part(len(text))
        return [p for p in (_finish(b, self.text) for b in self.builders) if p is not None]

    def _cut_part(self, end: int) -> None:
        if self.part.end < 0:
            self.part.end = end

    def _redirection(self, op: str) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self.i += 1
        target = self._read_word()
        if op in ("<<", "<<-"):
            expands = not target.quoted
            self.heredocs.append((self.part, target.value, op == "<<-", expands))
            return
        if target.dynamic:
            self.part.make_opaque("a redirection to a computed path")
        is_fd = target.value.isdigit() or target.value == "-"
        writes = op in WRITE_REDIRECTIONS and not (op == ">&" and is_fd)
        if writes and target.value not in HARMLESS_TARGETS:
            self.part.writes.append(target.value)

    def _skip_heredoc_bodies(self) -> None:
        for builder, delimiter, strip_tabs, expands in self.heredocs:
            body_start = self.i
            while self.i < len(self.text):
                end = self.text.find("\n", self.i)
                end = len(self.text) if end < 0 else end
                line = self.text[self.i : end]
                self.i = min(end + 1, len(self.text))
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
            body = self.text[body_start : self.i]
            if expands and ("$(" in body or "`" in body):
                builder.make_opaque("command substitution in a heredoc")
        self.heredocs.clear()

    def _read_word(self) -> _Word:
        word = _Word()
        text = self.text
        while self.i < len(text) and text[self.i] not in _METACHARS:
            c = text[self.i]
            if c == "\\":
                if text.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                word.raw += text[self.i : self.i + 2]
                word.value += text[self.i + 1 : self.i + 2]
                word.quoted = True
                self.i += 2
            elif c == "'":
                self._single_quoted(word, self.i + 1)
            elif c == '"':
                self._double_quoted(word)
            elif c == "$" and text.startswith("$'", self.i):
                self._ansi_c_quoted(word)
            elif c == "$" or c == "`":
                self._dollar_or_backtick(word)
            else:
                word.raw += c
                word.value += c
                self.i += 1
        return word

    def _single_quoted(self, word: _Word, content_start: int) -> None:
        end = self.text.find("'", content_start)
        if end < 0:
            self.part.make_opaque("an unterminated quote")
            end = len(self.text)
        word.raw += self.text[self.i : end + 1]
        word.value += self.text[content_start:end]
        word.quoted = True
        self.i = end + 1

    def _ansi_c_quoted(self, word: _Word) -> None:
        """``$'...'``: like single quotes, but a backslash escapes the next character."""
        text = self.text
        start = self.i
        self.i += 2
        while self.i < len(text) and text[self.i] != "'":
            self.i += 2 if text[self.i] == "\\" else 1
        if self.i >= len(text):
            self.part.make_opaque("an unterminated quote")
        self.i = min(self.i + 1, len(text))
        word.raw += text[start : self.i]
        word.value += text[start + 2 : self.i - 1]
        word.quoted = True

    def _double_quoted(self, word: _Word) -> None:
        text = self.text
        word.raw += '"'
        word.quoted = True
        self.i += 1
        while self.i < len(text) and text[self.i] != '"':
            c = text[self.i]
            if c == "\\" and self.i + 1 < len(text):
                nxt = text[self.i + 1]
                word.raw += c + nxt
                word.value += nxt if nxt in '$`"\\\n' else c + nxt
                self.i += 2
            elif c in "$`":
                self._dollar_or_backtick(word)
            else:
                word.raw += c
                word.value += c
                self.i += 1
        if self.i >= len(text):
            self.part.make_opaque("an unterminated quote")
        else:
            word.raw += '"'
            self.i += 1

    def _dollar_or_backtick(self, word: _Word) -> None:
        text = self.text
        if text[self.i] == "`":
            self._backtick(word)
        elif text.startswith("$(", self.i):
            self.i += 1
            self._substitution("command substitution", word)
        elif text.startswith("${", self.i):
            self.i += 1
            start = self.i
            inner = self._balanced("{", "}")
            if "$(" in inner or "`" in inner or "<(" in inner:
                self.part.make_opaque("command substitution")
                self.part.nested.append(inner)
            word.raw += "$" + text[start : self.i]
            word.value += "$" + text[start : self.i]
            word.dynamic = True
        else:
            word.raw += "$"
            word.value += "$"
            word.dynamic = True
            self.i += 1

    def _backtick(self, word: _Word) -> None:
        text = self.text
        start = self.i
        self.i += 1
        inner = ""
        while self.i < len(text) and text[self.i] != "`":
            if text[self.i] == "\\" and self.i + 1 < len(text):
                inner += text[self.i + 1]
                self.i += 2
            else:
                inner += text[self.i]
                self.i += 1
        self.i = min(self.i + 1, len(text))
        self.part.make_opaque("command substitution")
        self.part.nested.append(inner)
        word.raw += text[start : self.i]
        word.value += text[start : self.i]
        word.dynamic = True

    def _substitution(self, reason: str, word: _Word) -> None:
        """``(...)`` starting at self.i: a subshell or a substitution, always opaque."""
        start = self.i
        inner = self._balanced("(", ")")
        self.part.make_opaque(reason)
        # $((...)) is arithmetic; what it may hide is inside the inner parentheses.
        self.part.nested.append(inner[1:-1] if inner.startswith("(") else inner)
        prefix = "$" if reason == "command substitution" else ""
        word.raw += prefix + self.text[start : self.i]
        word.value += prefix + self.text[start : self.i]
        word.dynamic = True
        if reason != "command substitution":
            self.part.words.append(word)

    def _balanced(self, open_: str, close: str) -> str:
        """The text between the bracket at self.i and its match, quotes respected."""
        text = self.text
        depth = 0
        start = self.i + 1
        while self.i < len(text):
            c = text[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "'":
                end = text.find("'", self.i + 1)
                self.i = len(text) if end < 0 else end + 1
                continue
            if c == '"':
                self.i = _skip_double_quoted(text, self.i)
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return text[start : self.i - 1]
            self.i += 1
        self.part.make_opaque("unbalanced parentheses")
        return text[start:]


def _skip_double_quoted(text: str, i: int) -> int:
    i += 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _match(text: str, i: int, options: tuple[str, ...]) -> str | None:
    for option in options:
        if text.startswith(option, i):
            return option
    return None


def _finish(builder: _PartBuilder, text: str) -> CommandPart | None:
    words = list(builder.words)
    while words:
        first = words[0]
        keyword = not first.quoted and first.raw in LEADING_KEYWORDS
        if keyword or _ASSIGNMENT.match(first.raw):
            words.pop(0)
        else:
            break
    if len(words) == 1 and not words[0].quoted and words[0].raw in CLOSING_KEYWORDS:
        words = []
    if not words and not builder.writes and not builder.opaque_reason:
        return None
    if words and words[0].dynamic and not builder.opaque_reason:
        builder.make_opaque("a command name that comes from a variable")
    builder.nested.extend(_shell_strings([w.value for w in words]))
    end = builder.end if builder.end >= 0 else len(text)
    return CommandPart(
        text=text[builder.start : end].strip(),
        raw_words=tuple(w.raw for w in words),
        words=tuple(w.value for w in words),
        writes=tuple(builder.writes),
        opaque_reason=builder.opaque_reason,
        nested=tuple(n.strip() for n in builder.nested if n.strip()),
    )


def _shell_strings(words: list[str]) -> list[str]:
    """Command text run by ``eval ...`` or ``bash -c '...'`` (also behind ``sudo``, ``env``...),
    so deny rules can look inside."""
    i = 0
    if words and _basename(words[0]) in WRAPPERS:
        runs_code = (k for k, w in enumerate(words) if w == "eval" or _basename(w) in SHELLS)
        i = next(runs_code, len(words))
    if i >= len(words):
        return []
    if words[i] == "eval":
        return [" ".join(words[i + 1 :])]
    if _basename(words[i]) in SHELLS:
        for j in range(i + 1, len(words) - 1):
            flag = words[j]
            if flag.startswith("-") and not flag.startswith("--") and "c" in flag:
                return [words[j + 1]]
    return []


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]
